/**
 * The backfill's last step (Step Functions task `Finish`): once every range is done, moves the cursor to B (the
 * usual conditional write, only forward), writes watermark.json and logs the backfill (`stoppedBy: "until"` with
 * `caughtUp: false` when the plan's `until` is short of the catalog head it reads then, else `caught-up`). Throws
 * `BackfillIncompleteError` (code) while a range is not done: the cursor does not move.
 * With `release: true` (the state `Release`, after the map failed) it only gives the plan's lease back, so the
 * follower is not held off and the next execution resumes the plan at once: after a failed map, and after a Finish
 * that kept failing (the definition's Catch of Finish). Step Functions sees an error's code as its name (coded-errors.ts).
 */
import type { RunSummary } from '../../contract/index.js';
import { finishBackfill, releaseBackfillLease } from '../index.js';
import { withCodedErrors } from '../../runtime/coded-errors.js';
import { checkBackfillFilter, logger, warmUp } from './warm.js';

export async function handler(event: { readonly backfillId: string; readonly release?: false }): Promise<RunSummary>;
export async function handler(event: {
  readonly backfillId: string;
  readonly release: true;
}): Promise<{ released: string }>;
export async function handler(event: {
  readonly backfillId: string;
  readonly release?: boolean;
}): Promise<RunSummary | { released: string }> {
  return withCodedErrors(() => finishOrRelease(event));
}

async function finishOrRelease(event: {
  readonly backfillId: string;
  readonly release?: boolean;
}): Promise<RunSummary | { released: string }> {
  const warm = await warmUp(process.env);
  const { settings, deps } = warm;
  if (event.release === true) {
    await releaseBackfillLease(settings, deps, event.backfillId);
    logger.warn('backfill lease released after a failed map', { backfillId: event.backfillId });
    return { released: event.backfillId };
  }
  // The cursor does not move over ranges whose filter is no longer the mirror's (a release still gives the lease back).
  await checkBackfillFilter(warm);
  const summary = await finishBackfill(settings, deps, event.backfillId);
  logger.info('backfill finished', { summary });
  return summary;
}
