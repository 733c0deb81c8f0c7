/**
 * The range worker (the Distributed Map's `RunBatch` task): runs the ranges of one ItemBatcher batch, one after
 * another, until the Lambda's time is nearly up. A done range is skipped; a range stopped by the deadline keeps
 * its progress and the batch comes back `done: false`, which the state machine loops back here.
 * S3 SlowDowns are back-pressure (lambda/stores/s3-backpressure.ts): counted and reported, never a failure.
 *
 * Each invocation publishes the follower's volume metrics (EMF through Powertools Metrics, the follower's
 * namespace) for what its ranges stored: `Leaves`, `Commits`, `Deletes`, `Quarantined`, `Bytes`, and the
 * backfill's own `RangesDone` and `SlowDowns`. Their `service` dimension is the backfill's
 * (`catalog-sync-<cursor>-backfill`, set by infra/constructs/catalog-backfill.ts), so the follower's alarms and
 * graphs, which query `catalog-sync-<cursor>`, never count a backfill; the follower's run metrics (`RunSucceeded`,
 * `RunFailed`, `CursorLagSeconds`) are not emitted: a batch is not a run, the cursor does not move until the
 * finish, and a failed batch is the state machine's to report (its ExecutionsFailed alarm).
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { addTotals, SettingsError, ZERO_TOTALS, type BackfillRange } from '../../contract/index.js';
import { addWorkMetrics } from '../../runtime/work-metrics.js';
import { deadlineOf } from '../../runtime/deadline.js';
import { lambdaMetrics } from '../../runtime/powertools.js';
import { runRange, type RangeOutcome } from '../index.js';
import { withCodedErrors } from '../../runtime/coded-errors.js';
import { checkBackfillFilter, logger, warmUp } from './warm.js';

const metrics = lambdaMetrics(process.env, 'catalog-sync-backfill');

/** What ItemBatcher hands a child execution. */
export interface WorkerInput {
  readonly Items: readonly BackfillRange[];
  /** `leaseHolder`: the execution that holds the plan's lease (the planner's output), whose lease alone is renewed. */
  readonly BatchInput: { readonly backfillId: string; readonly leaseHolder?: string; readonly passes?: number };
}

export interface WorkerOutput {
  /** Every range of the batch is done. */
  readonly done: boolean;
  readonly ranges: RangeOutcome[];
  /** S3 SlowDown answers absorbed in this invocation, and the fewest leaf PUTs in flight they led to. */
  readonly slowDowns: number;
  readonly lowestPutConcurrency: number;
}

export const handler = (
  event: WorkerInput,
  context: Pick<Context, 'getRemainingTimeInMillis'>,
): Promise<WorkerOutput> => withCodedErrors(() => runBatch(event, context));

async function runBatch(event: WorkerInput, context: Pick<Context, 'getRemainingTimeInMillis'>): Promise<WorkerOutput> {
  const warm = await warmUp(process.env, { backpressure: true });
  const { settings, deps, gauge } = warm;
  // The filter may have been changed (`run --refilter`) since the plan: no range is stored under another one.
  await checkBackfillFilter(warm);
  const { backfillId, leaseHolder } = event.BatchInput ?? {};
  for (const range of event.Items ?? []) {
    if (range.backfillId !== backfillId)
      throw new SettingsError(
        'BatchInput.backfillId',
        `is ${backfillId}, but range ${range.n} belongs to ${range.backfillId}`,
      );
  }
  const deadline = deadlineOf(context.getRemainingTimeInMillis());
  const slowDownsBefore = gauge?.slowDowns ?? 0;
  const ranges: RangeOutcome[] = [];
  let done = true;
  try {
    for (const range of event.Items ?? []) {
      if (Date.now() >= deadline) {
        done = false;
        break;
      }
      const outcome = await runRange(
        settings,
        { ...deps, deadline },
        range,
        leaseHolder === undefined ? {} : { holder: leaseHolder },
      );
      ranges.push(outcome);
      if (!outcome.done) {
        done = false;
        break;
      }
    }
  } finally {
    // Also when a range failed: what the ranges before it stored was stored. The failed range's own checkpointed
    // commits are missing from the graph (its error carries no totals; its retry resumes after them), not from S3.
    record(ranges, (gauge?.slowDowns ?? 0) - slowDownsBefore, backfillId);
  }
  const slowDowns = (gauge?.slowDowns ?? 0) - slowDownsBefore;
  logger.info('backfill batch', {
    backfillId,
    done,
    ranges: ranges.map((r) => ({ n: r.n, done: r.done, skipped: r.skipped, leaves: r.totals.leaves })),
    slowDowns,
  });
  return { done, ranges, slowDowns, lowestPutConcurrency: gauge?.lowest ?? settings.concurrency };
}

/** Publishes one EMF record of what this invocation's ranges stored. */
function record(ranges: readonly RangeOutcome[], slowDowns: number, backfillId: string | undefined): void {
  addWorkMetrics(metrics, ranges.map((outcome) => outcome.totals).reduce(addTotals, ZERO_TOTALS));
  metrics.addMetric(
    'RangesDone',
    MetricUnit.Count,
    ranges.filter((outcome) => outcome.done && !outcome.skipped).length,
  );
  metrics.addMetric('SlowDowns', MetricUnit.Count, slowDowns);
  if (backfillId !== undefined) metrics.addMetadata('backfillId', backfillId);
  metrics.publishStoredMetrics();
}
