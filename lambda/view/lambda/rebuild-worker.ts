/**
 * The view rebuild's map child (the `Records` and `Indexes` Distributed Maps' batch task): runs the items of one
 * ItemBatcher batch (ranges of manifests, or shards), one after another, until the Lambda's time is nearly up. A
 * done item is skipped; an item the deadline stopped is run again whole, and the batch comes back `done: false`,
 * which the definition loops back here (`Again`).
 *
 * Each invocation publishes its EMF metrics under the rebuild's service (`catalog-sync-view-rebuild`, set by
 * infra/constructs/view-rebuild.ts): `ManifestsRead` and `RecordsWritten` (ranges), `BodiesRead` and
 * `IndexesWritten` (shards), `ItemsDone`.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { SettingsError } from '../../contract/index.js';
import type { RebuildBatchInput, RebuildRange, RebuildShard } from '../../contract/view-rebuild.js';
import { withCodedErrors } from '../../runtime/coded-errors.js';
import { deadlineOf } from '../../runtime/deadline.js';
import { engineLogger, lambdaMetrics } from '../../runtime/powertools.js';
import { isShard, runRebuildBatch, shardCounts, type ItemOutcome } from '../rebuild/index.js';
import { logger, REBUILD_SERVICE, warmUp } from './warm.js';

const metrics = lambdaMetrics(process.env, REBUILD_SERVICE);

/** What the ItemBatcher hands a child execution. */
export interface RebuildWorkerInput {
  readonly Items: readonly (RebuildRange | RebuildShard)[];
  readonly BatchInput: RebuildBatchInput;
}

/** What the child's loop tests (`done`), and what the batch did. */
export interface RebuildWorkerOutput {
  readonly done: boolean;
  readonly items: readonly { n: number; done: boolean; skipped: boolean }[];
}

export const handler = (
  event: RebuildWorkerInput,
  context: Pick<Context, 'getRemainingTimeInMillis'>,
): Promise<RebuildWorkerOutput> => withCodedErrors(() => runBatch(event, context));

async function runBatch(
  event: RebuildWorkerInput,
  context: Pick<Context, 'getRemainingTimeInMillis'>,
): Promise<RebuildWorkerOutput> {
  const { settings, stores } = warmUp(process.env);
  const { rebuildId, phase, leaseHolder } = event.BatchInput ?? ({} as Partial<RebuildBatchInput>);
  if (typeof rebuildId !== 'string' || rebuildId === '')
    throw new SettingsError('BatchInput.rebuildId', 'is required: the plan the batch belongs to');
  const items = event.Items ?? [];
  // A shard in the records map (or a range in the indexes map) is a definition that hands out the wrong items file.
  for (const item of items)
    if (isShard(item) !== (phase === 'indexes'))
      throw new SettingsError('Items', `item ${item.n} is not a ${phase === 'indexes' ? 'shard' : 'range'}`);
  const deadline = deadlineOf(context.getRemainingTimeInMillis());
  let outcomes: readonly ItemOutcome[] = [];
  try {
    const outcome = await runRebuildBatch(
      stores,
      { rebuildId, name: settings.consumerName, items },
      { deadline, ...(leaseHolder === undefined ? {} : { holder: leaseHolder }), logger: engineLogger(logger) },
    );
    outcomes = outcome.items;
    logger.info('view rebuild batch', { rebuildId, phase, done: outcome.done, items: outcome.items });
    return {
      done: outcome.done,
      items: outcome.items.map(({ n, done, skipped }) => ({ n, done, skipped })),
    };
  } finally {
    record(phase, outcomes, rebuildId);
  }
}

/** One EMF record of what this invocation's items did. */
function record(phase: RebuildBatchInput['phase'] | undefined, outcomes: readonly ItemOutcome[], rebuildId: string) {
  const ran = outcomes.filter((outcome) => outcome.done && !outcome.skipped);
  const sum = (of: (outcome: ItemOutcome) => number) => ran.reduce((total, outcome) => total + of(outcome), 0);
  if (phase === 'indexes') {
    metrics.addMetric(
      'BodiesRead',
      MetricUnit.Count,
      sum((outcome) => shardCounts(outcome.totals).bodiesRead),
    );
    metrics.addMetric(
      'IndexesWritten',
      MetricUnit.Count,
      sum((outcome) => shardCounts(outcome.totals).written),
    );
  } else {
    metrics.addMetric(
      'ManifestsRead',
      MetricUnit.Count,
      sum((outcome) => outcome.totals.commits),
    );
    metrics.addMetric(
      'RecordsWritten',
      MetricUnit.Count,
      sum((outcome) => outcome.totals.leaves),
    );
  }
  metrics.addMetric('ItemsDone', MetricUnit.Count, ran.length);
  metrics.addMetadata('rebuildId', rebuildId);
  metrics.publishStoredMetrics();
}
