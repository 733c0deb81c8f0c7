/**
 * The range worker (the Distributed Map's `RunBatch` task): runs the ranges of one ItemBatcher batch, one after
 * another, until the Lambda's time is nearly up. A done range is skipped; a range stopped by the deadline keeps
 * its progress and the batch comes back `done: false`, which the state machine loops back here.
 * S3 SlowDowns are back-pressure (lambda/stores/s3-backpressure.ts): counted and reported, never a failure.
 */
import type { Context } from 'aws-lambda';
import { SettingsError, type BackfillRange } from '../contract/index.js';
import { safetyMarginMs } from '../handler.js';
import { runRange, type RangeOutcome } from '../sync/index.js';
import { logger, warmUp } from './warm.js';

/** What ItemBatcher hands a child execution. */
export interface WorkerInput {
  readonly Items: readonly BackfillRange[];
  readonly BatchInput: { readonly backfillId: string; readonly passes?: number };
}

export interface WorkerOutput {
  /** Every range of the batch is done. */
  readonly done: boolean;
  readonly ranges: RangeOutcome[];
  /** S3 SlowDown answers absorbed in this invocation, and the fewest leaf PUTs in flight they led to. */
  readonly slowDowns: number;
  readonly lowestPutConcurrency: number;
}

export const handler = async (event: WorkerInput, context: Pick<Context, 'getRemainingTimeInMillis'>): Promise<WorkerOutput> => {
  const { settings, deps, gauge } = await warmUp(process.env, { backpressure: true });
  const { backfillId } = event.BatchInput ?? {};
  for (const range of event.Items ?? []) {
    if (range.backfillId !== backfillId) throw new SettingsError('BatchInput.backfillId', `is ${backfillId}, but range ${range.n} belongs to ${range.backfillId}`);
  }
  const remaining = context.getRemainingTimeInMillis();
  const deadline = Date.now() + remaining - safetyMarginMs(remaining);
  const slowDownsBefore = gauge?.slowDowns ?? 0;
  const ranges: RangeOutcome[] = [];
  let done = true;
  for (const range of event.Items ?? []) {
    if (Date.now() >= deadline) {
      done = false;
      break;
    }
    const outcome = await runRange(settings, { ...deps, deadline }, range);
    ranges.push(outcome);
    if (!outcome.done) {
      done = false;
      break;
    }
  }
  const slowDowns = (gauge?.slowDowns ?? 0) - slowDownsBefore;
  logger.info('backfill batch', { backfillId, done, ranges: ranges.map((r) => ({ n: r.n, done: r.done, skipped: r.skipped, leaves: r.totals.leaves })), slowDowns });
  return { done, ranges, slowDowns, lowestPutConcurrency: gauge?.lowest ?? settings.concurrency };
};
