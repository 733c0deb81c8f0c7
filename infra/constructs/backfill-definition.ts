/**
 * The backfill's state machine definition (see catalog-backfill.ts for the picture): Plan → Ranges (Distributed
 * Map: ItemReader, ItemBatcher, MaxConcurrency, STANDARD child executions of RunBatch → BatchDone? → Again, no
 * failure tolerated; the children's results written to S3 by a ResultWriter) → Finish, or on a map failure
 * Release (the plan's lease given back) → Failed; a Finish that keeps failing after its retries takes the same way
 * (Release → Failed), so a failed finalizer never leaves the lease to a dead execution. A second execution refused
 * at Plan (`CS_ERR_BACKFILL_RUNNING`: another execution holds the plan) ends in AlreadyRunning, a Succeed state: it
 * did nothing, and a harmless double start is not counted by the failed-execution alarm. Its states are created in
 * `scope`, the {@link CatalogBackfill}.
 *
 * The lease's holder (the execution's ARN, which the planner returns as `leaseHolder`) rides in every batch's
 * BatchInput, so a range worker renews the lease only while its own execution holds it: once Release gave it back
 * (or a new execution took the plan over), the workers still running no longer renew it.
 *
 * Step Functions' 256 KiB limit on a state's input and output (issue 21): a child execution ends with `{"done":
 * true}` only (BatchDone's OutputPath), the map's own output is the ResultWriter's small description of where the
 * results went (and is discarded: ResultPath null), and a batch's input is bounded by MaxInputBytesPerBatch, which
 * the planner's ranges stay far below (lambda/contract/backfill.ts, MAX_RANGE_ITEM_BYTES).
 */
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';
import { ErrorCode } from '../../lambda/contract/index.js';
import { ANY_ERROR_RETRY, finishWithRelease, mapOfBatches, planTask } from './map-of-batches.js';

/** What the definition is made of. */
export interface BackfillDefinitionProps {
  readonly planner: lambda.IFunction;
  readonly worker: lambda.IFunction;
  readonly finalizer: lambda.IFunction;
  readonly maxConcurrency: number;
  readonly batchSize: number;
  readonly maxPasses: number;
  /** Where the ResultWriter writes the map runs' results. */
  readonly resultsBucket: s3.IBucket;
  readonly resultsPrefix: string;
}

/** The chain Plan → Ranges → Finish. */
export function backfillDefinition(scope: Construct, o: BackfillDefinitionProps): sfn.IChainable {
  // The execution's input as it is: `{}`, `{ "until": "...", "rangeLeaves": 5000 }`, `{ "abandon": true }`.
  const plan = planTask(
    scope,
    o.planner,
    'Reads the index once, cuts the ranges, writes <prefix>backfill/<id>/ranges.json and the plan item (or resumes the unfinished plan).',
  );

  const ranges = mapOfBatches(scope, {
    id: 'Ranges',
    comment: 'Every range of the plan, batchSize per worker invocation, maxConcurrency at once; no failure tolerated.',
    worker: o.worker,
    workerComment: "Runs the batch's ranges within its time; a done range is skipped, a stopped one checkpointed.",
    bucketPath: '$.bucket',
    keyPath: '$.rangesKey',
    batchSize: o.batchSize,
    maxConcurrency: o.maxConcurrency,
    maxPasses: o.maxPasses,
    batchInput: { backfillId: '$.backfillId', leaseHolder: '$.leaseHolder' },
    fromState: ['backfillId', 'leaseHolder'],
    stuckError: 'BackfillBatchStuck',
    resultsBucket: o.resultsBucket,
    resultsPrefix: o.resultsPrefix,
  });

  // A finalizer that failed (a store that did not answer, a timeout) after every range was stored: finishing again is
  // safe (the cursor only moves forward, a finished plan's summary is returned again), so any error is retried; after
  // that, as after a failed map, the lease is given back (the next execution resumes the plan at once).
  const finish = finishWithRelease(scope, {
    finalizer: o.finalizer,
    idField: 'backfillId',
    finishComment: 'Every range done: moves the cursor to B (only forward), writes watermark.json, logs the backfill.',
    releaseComment:
      "The map failed: gives the plan's lease back (done ranges stay done; a new execution resumes the plan).",
    finishRetry: ANY_ERROR_RETRY,
    maps: [ranges],
  });

  // Another execution holds the cursor's plan: this one did nothing, and says who holds it until when (the Cause).
  const alreadyRunning = new sfn.Succeed(scope, 'AlreadyRunning', {
    comment: `Refused at Plan with ${ErrorCode.backfillRunning}: another execution holds the plan. Nothing was done; not a failure (the alarm does not count it).`,
    outputPath: '$.refused',
  });
  plan.addCatch(alreadyRunning, { errors: [ErrorCode.backfillRunning], resultPath: '$.refused' });

  return plan.next(ranges).next(finish);
}
