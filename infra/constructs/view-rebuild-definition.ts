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
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import type { Construct } from 'constructs';
import { mapOfBatches, retried } from './map-of-batches.js';

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
  const plan = new tasks.LambdaInvoke(scope, 'Plan', {
    lambdaFunction: o.planner,
    comment:
      "Takes the mirror's rebuild lease, lists the manifests up to the bound, writes <prefix>view-rebuild/<id>/ranges.json and shards.json and the plan item (or resumes the unfinished plan).",
    // The execution's input as it is (`{}`, `{"shards": 256}`, `{"abandon": true}`) and the execution's id: the lease's
    // holder, named to a second start; the same execution's retried Plan takes its own lease again.
    payload: sfn.TaskInput.fromObject({ 'input.$': '$', 'execution.$': '$$.Execution.Id' }),
    payloadResponseOnly: true,
    retryOnServiceExceptions: false,
  });
  retried(plan);

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

  const finish = new tasks.LambdaInvoke(scope, 'Finish', {
    lambdaFunction: o.finalizer,
    comment:
      "Every range and shard done: moves view-latest's cursor up to the bound (only forward), removes the records, releases the plan.",
    payload: sfn.TaskInput.fromObject({ 'rebuildId.$': '$.rebuildId' }),
    payloadResponseOnly: true,
    retryOnServiceExceptions: false,
  });
  retried(finish);
  finish.addRetry(FINISH_RETRY);

  // A failed map, or a Finish still failing: the lease is given back at once (upkeep goes on, the next execution
  // resumes the plan: done items stay done), then the execution fails with the error.
  const release = new tasks.LambdaInvoke(scope, 'Release', {
    lambdaFunction: o.finalizer,
    comment: "Gives the plan's lease back (done items stay done; a new execution resumes the plan).",
    payload: sfn.TaskInput.fromObject({ 'rebuildId.$': '$.rebuildId', release: true }),
    payloadResponseOnly: true,
    resultPath: sfn.JsonPath.DISCARD,
    retryOnServiceExceptions: false,
  });
  retried(release);
  const failed = new sfn.Fail(scope, 'Failed', { errorPath: '$.failure.Error', causePath: '$.failure.Cause' });
  release.next(failed);
  for (const step of [records, indexes]) step.addCatch(release, { errors: ['States.ALL'], resultPath: '$.failure' });
  finish.addCatch(release, { errors: ['States.ALL'], resultPath: '$.failure' });

  // Another execution (or a CLI) holds the mirror's rebuild: this one did nothing; its output names the holder.
  const alreadyRunning = new sfn.Succeed(scope, 'AlreadyRunning', {
    comment: 'Another execution or a CLI holds the rebuild lease: nothing was done; not a failure (no alarm).',
  });
  const running = new sfn.Choice(scope, 'Running?')
    .when(sfn.Condition.booleanEquals('$.running', true), alreadyRunning)
    .otherwise(records.next(indexes).next(finish));
  return plan.next(running);
}
