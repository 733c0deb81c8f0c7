/**
 * The view rebuild's state machine definition (see view-rebuild.ts for the picture): Plan → Running? →
 * Records (Distributed Map over `ranges.json`) → Indexes (Distributed Map over `shards.json`) → Finish; a refused
 * second start (another execution or a CLI holds the mirror's rebuild lease) ends in AlreadyRunning, a Succeed
 * state; a failed map, or a Finish that still fails after its retries, goes to Release (the lease given back at
 * once) → Failed. Both maps are the backfill's map of batches (map-of-batches.ts), their children's results written
 * under `{prefix}view-rebuild/map-runs/`. States are created in `scope`, the {@link ViewRebuild}.
 */
import { Duration } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';
import { finishWithRelease, mapOfBatches, planTask } from './map-of-batches.js';

/** What the definition is made of. */
export interface ViewRebuildDefinitionProps {
  readonly planner: lambda.IFunction;
  readonly worker: lambda.IFunction;
  readonly finalizer: lambda.IFunction;
  /** Children at once, and items a batch, of the Records map (ranges) and the Indexes map (shards). */
  readonly records: { readonly maxConcurrency: number; readonly batchSize: number };
  readonly indexes: { readonly maxConcurrency: number; readonly batchSize: number };
  readonly maxPasses: number;
  readonly resultsBucket: s3.IBucket;
  readonly resultsPrefix: string;
}

/** Finish, on any error: 2 s doubling, 6 times (it is idempotent); then its Catch gives the lease back. */
const FINISH_RETRY = {
  errors: ['States.ALL'],
  interval: Duration.seconds(2),
  backoffRate: 2,
  maxAttempts: 6,
  jitterStrategy: sfn.JitterType.FULL,
};

/** The chain Plan → Running? → Records → Indexes → Finish. */
export function viewRebuildDefinition(scope: Construct, o: ViewRebuildDefinitionProps): sfn.IChainable {
  // The execution's input as it is: `{}`, `{"shards": 256}`, `{"abandon": true}`.
  const plan = planTask(
    scope,
    o.planner,
    "Takes the mirror's rebuild lease, lists the manifests up to the bound, writes <prefix>view-rebuild/<id>/ranges.json and shards.json and the plan item (or resumes the unfinished plan).",
  );

  const map = (id: 'Records' | 'Indexes', shape: { maxConcurrency: number; batchSize: number }) =>
    mapOfBatches(scope, {
      id,
      comment:
        id === 'Records'
          ? "Every range of manifests: each writes one record object per shard under the plan's prefix."
          : "Every shard: folds its records in range order and writes its packages' indexes.",
      names: {
        run: `${id}Batch`,
        again: `${id}Again`,
        choice: `${id}BatchDone?`,
        done: `${id}BatchDone`,
        tooMany: `${id}TooManyPasses`,
      },
      worker: o.worker,
      workerComment:
        "Runs the batch's items within its time; a done item is skipped, a stopped one is run again whole.",
      bucketPath: '$.bucket',
      keyPath: id === 'Records' ? '$.rangesKey' : '$.shardsKey',
      batchSize: shape.batchSize,
      maxConcurrency: shape.maxConcurrency,
      maxPasses: o.maxPasses,
      batchInput: {
        rebuildId: '$.rebuildId',
        phase: id === 'Records' ? 'records' : 'indexes',
        leaseHolder: '$.leaseHolder',
      },
      fromState: ['rebuildId', 'leaseHolder'],
      stuckError: 'ViewRebuildBatchStuck',
      resultsBucket: o.resultsBucket,
      resultsPrefix: o.resultsPrefix,
    });
  const records = map('Records', o.records);
  const indexes = map('Indexes', o.indexes);

  // A failed map, or a Finish still failing after its retries: the lease is given back at once (upkeep goes on, the
  // next execution resumes the plan: done items stay done), then the execution fails with the error.
  const finish = finishWithRelease(scope, {
    finalizer: o.finalizer,
    idField: 'rebuildId',
    finishComment:
      "Every range and shard done: moves view-latest's cursor up to the bound (only forward), removes the records, releases the plan.",
    releaseComment: "Gives the plan's lease back (done items stay done; a new execution resumes the plan).",
    finishRetry: FINISH_RETRY,
    maps: [records, indexes],
  });

  // Another execution (or a CLI) holds the mirror's rebuild: this one did nothing; its output names the holder.
  const alreadyRunning = new sfn.Succeed(scope, 'AlreadyRunning', {
    comment: 'Another execution or a CLI holds the rebuild lease: nothing was done; not a failure (no alarm).',
  });
  const running = new sfn.Choice(scope, 'Running?')
    .when(sfn.Condition.booleanEquals('$.running', true), alreadyRunning)
    .otherwise(records.next(indexes).next(finish));
  return plan.next(running);
}
