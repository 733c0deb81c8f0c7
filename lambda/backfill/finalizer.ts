/**
 * The backfill's last step (Step Functions task `Finish`): once every range is done, moves the cursor to B (the
 * usual conditional write, only forward), writes watermark.json and logs the backfill. Throws
 * `BackfillIncompleteError` (code) while a range is not done: the cursor does not move.
 */
import type { RunSummary } from '../contract/index.js';
import { finishBackfill } from '../sync/index.js';
import { logger, warmUp } from './warm.js';

export const handler = async (event: { readonly backfillId: string }): Promise<RunSummary> => {
  const { settings, deps } = await warmUp(process.env);
  const summary = await finishBackfill(settings, deps, event.backfillId);
  logger.info('backfill finished', { summary });
  return summary;
};
