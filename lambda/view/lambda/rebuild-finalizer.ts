/**
 * The view rebuild's last step (Step Functions task `Finish`): once every range and shard is done, moves the view
 * consumer's cursor up to the plan's bound (only forward), removes the records and releases the plan (idempotent:
 * a finished plan's summary is given again). Throws the incomplete rebuild's coded error while an
 * item is not done: the cursor does not move. The definition retries it on every error.
 *
 * With `release: true` (the state `Release`: a map failed, or Finish kept failing) it only gives the plan's lease
 * back at once, so upkeep is not held off for the lease's term and the next execution resumes the plan.
 */
import { withCodedErrors } from '../../runtime/coded-errors.js';
import {
  clearPlanStaleness,
  finishRebuild,
  readRebuildPlan,
  rebuildPlanName,
  releaseRebuild,
  type RebuildSummary,
} from '../rebuild/index.js';
import { logger, warmUp } from './warm.js';

/** What Finish and Release send. */
export interface RebuildFinalizerEvent {
  readonly rebuildId: string;
  readonly release?: boolean;
}

export const handler = (event: RebuildFinalizerEvent): Promise<RebuildSummary | { released: string }> =>
  withCodedErrors(() => finishOrRelease(event));

async function finishOrRelease(event: RebuildFinalizerEvent): Promise<RebuildSummary | { released: string }> {
  const { settings, stores } = warmUp(process.env);
  const ref = { rebuildId: event.rebuildId, name: settings.consumerName };
  if (event.release === true) {
    const released = await releaseRebuild(stores, ref);
    logger.warn('view rebuild lease released after a failure', { rebuildId: event.rebuildId });
    return released;
  }
  const summary = await finishRebuild(stores, ref);
  // The id filter changes refilled before the plan was made: read whole by this rebuild, no longer stale.
  const plan = await readRebuildPlan(stores.plans, rebuildPlanName(stores.mirror, ref.name), ref.rebuildId);
  const stale = await clearPlanStaleness(stores, plan, ref.name, summary.commitKey);
  logger.info('view rebuild finished', { summary, stale: stale.length });
  return summary;
}
