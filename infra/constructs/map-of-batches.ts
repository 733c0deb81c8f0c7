/**
 * What the state machines of the stack share (the backfill's, the view rebuild's): the Lambda retriers, and a
 * Distributed Map of batches: ItemReader (a JSON array in S3 the planner wrote), ItemBatcher, MaxConcurrency,
 * STANDARD child executions of `RunBatch → BatchDone? → (not done: Again → RunBatch) | BatchDone | TooManyPasses`,
 * no failure tolerated, the children's results written to S3 by a ResultWriter under a prefix.
 *
 * Step Functions' 256 KiB limit on a state's input and output (issue 21): a child execution ends with `{"done":
 * true}` only (BatchDone's OutputPath), the map's own output is the ResultWriter's small description of where the
 * results went (and is discarded: ResultPath null), and a batch's input is bounded by MaxInputBytesPerBatch.
 */
import { Duration } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import type { Construct } from 'constructs';
import { MAX_BATCH_INPUT_BYTES } from '../../lambda/contract/index.js';

/** Lambda errors of the service, not of the code: always worth a retry. */
export const LAMBDA_SERVICE_ERRORS = [
  'Lambda.ClientExecutionTimeoutException',
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
];

/**
 * Lambda's throttles: the account's (or the function's reserved) concurrency is used up, often by the follower and
 * other functions sharing the pool. Retried for much longer than a service error: about 20 minutes in all.
 */
export const LAMBDA_THROTTLE_ERRORS = ['Lambda.TooManyRequestsException', 'Lambda.EC2ThrottledException'];

/** Any error (after the Lambda retriers): 10 s doubling, 3 times. The worker resumes from its checkpoint; Finish is idempotent. */
export const ANY_ERROR_RETRY = {
  errors: ['States.ALL'],
  interval: Duration.seconds(10),
  backoffRate: 2,
  maxAttempts: 3,
  jitterStrategy: sfn.JitterType.FULL,
};

/** Throttle retries: 5 s doubling to at most 2 minutes, 14 times (about 20 minutes of waiting at most). */
export const THROTTLE_RETRY = {
  errors: LAMBDA_THROTTLE_ERRORS,
  interval: Duration.seconds(5),
  backoffRate: 2,
  maxDelay: Duration.minutes(2),
  maxAttempts: 14,
  jitterStrategy: sfn.JitterType.FULL,
};

/** Lambda's service errors: 2 s doubling, 6 times. */
const SERVICE_RETRY = {
  errors: LAMBDA_SERVICE_ERRORS,
  interval: Duration.seconds(2),
  backoffRate: 2,
  maxAttempts: 6,
  jitterStrategy: sfn.JitterType.FULL,
};

/** A Lambda task with the throttle retrier, then the service errors' retrier. */
export function retried(task: tasks.LambdaInvoke): tasks.LambdaInvoke {
  return task.addRetry(THROTTLE_RETRY).addRetry(SERVICE_RETRY) as tasks.LambdaInvoke;
}

/**
 * The Distributed Map's ResultWriter: its children's results (and failures) as JSON files under `prefix` in the
 * bucket. The state machine's grant for it is the construct's own, on that prefix only (state-machine-kit.ts): CDK's
 * would be PutObject on the whole bucket (or on every bucket with a bucket path).
 */
class PrefixResultWriter extends sfn.ResultWriterV2 {
  override providePolicyStatements(): iam.PolicyStatement[] {
    return [];
  }
}

/** The states' names of one map's child loop (unique within a state machine that has two maps). */
export interface BatchLoopNames {
  readonly run: string;
  readonly again: string;
  readonly choice: string;
  readonly done: string;
  readonly tooMany: string;
}

/** The backfill's names (its definition has one map). */
export const BATCH_LOOP_NAMES: BatchLoopNames = {
  run: 'RunBatch',
  again: 'Again',
  choice: 'BatchDone?',
  done: 'BatchDone',
  tooMany: 'TooManyPasses',
};

/** One Distributed Map of batches. */
export interface MapOfBatchesProps {
  /** The map state's name (and its label). */
  readonly id: string;
  readonly comment: string;
  readonly names?: BatchLoopNames;
  readonly worker: lambda.IFunction;
  readonly workerComment: string;
  /** The state data's paths of the items file's bucket and key (the planner's output). */
  readonly bucketPath: string;
  readonly keyPath: string;
  readonly batchSize: number;
  readonly maxConcurrency: number;
  readonly maxPasses: number;
  /** The BatchInput: fields taken from the state data (`$.x`) and constants; `passes` is added (0). */
  readonly batchInput: Readonly<Record<string, string>>;
  /** Of them, the ones carried from state data (`name.$`); the others are constants. */
  readonly fromState: readonly string[];
  /** The error a batch stuck after `maxPasses` fails with. */
  readonly stuckError: string;
  readonly resultsBucket: s3.IBucket;
  readonly resultsPrefix: string;
}

/**
 * A Distributed Map whose children run `worker` on a batch in a loop until it answers `done: true` (an invocation
 * that ran out of time answers `done: false` and is invoked again, `passes` counted, at most `maxPasses` times); a
 * worker error is retried (Lambda's retriers, then any error 3 times), then the map fails.
 */
export function mapOfBatches(scope: Construct, o: MapOfBatchesProps): sfn.DistributedMap {
  const names = o.names ?? BATCH_LOOP_NAMES;
  const work = new tasks.LambdaInvoke(scope, names.run, {
    lambdaFunction: o.worker,
    comment: o.workerComment,
    payload: sfn.TaskInput.fromObject({ 'Items.$': '$.Items', 'BatchInput.$': '$.BatchInput' }),
    resultSelector: { 'done.$': '$.Payload.done' },
    resultPath: '$.result',
    retryOnServiceExceptions: false,
  });
  retried(work);
  // A worker error (an item that failed after the engine's own retries, a lost lease, a timeout): the retried worker
  // skips what is done; after these the map fails (no failure is tolerated).
  work.addRetry(ANY_ERROR_RETRY);
  const carried: Record<string, string> = {};
  for (const name of Object.keys(o.batchInput)) carried[`${name}.$`] = `$.BatchInput.${name}`;
  const again = new sfn.Pass(scope, names.again, {
    comment: 'The batch stopped at its time limit: run it again (done items are skipped, the others resume).',
    parameters: {
      'Items.$': '$.Items',
      BatchInput: { ...carried, 'passes.$': 'States.MathAdd($.BatchInput.passes, 1)' },
    },
  });
  const tooMany = new sfn.Fail(scope, names.tooMany, {
    error: o.stuckError,
    cause: `A batch came back not done ${o.maxPasses} times.`,
  });
  const loop = new sfn.Choice(scope, names.choice)
    // The child's output is what the map collects (and the ResultWriter writes): `{"done":true}` only, never the batch.
    .when(
      sfn.Condition.booleanEquals('$.result.done', true),
      new sfn.Succeed(scope, names.done, { outputPath: '$.result' }),
    )
    .when(sfn.Condition.numberGreaterThanEquals('$.BatchInput.passes', o.maxPasses), tooMany)
    .otherwise(again.next(work));
  const batchInput: Record<string, string | number> = {};
  for (const [name, value] of Object.entries(o.batchInput))
    batchInput[o.fromState.includes(name) ? `${name}.$` : name] = value;
  batchInput.passes = 0;
  const map = new sfn.DistributedMap(scope, o.id, {
    comment: o.comment,
    itemReader: new sfn.S3JsonItemReader({
      bucketNamePath: sfn.JsonPath.stringAt(o.bucketPath),
      key: sfn.JsonPath.stringAt(o.keyPath),
    }),
    itemBatcher: new sfn.ItemBatcher({
      maxItemsPerBatch: o.batchSize,
      maxInputBytesPerBatch: MAX_BATCH_INPUT_BYTES,
      batchInput,
    }),
    maxConcurrency: o.maxConcurrency,
    mapExecutionType: sfn.StateMachineType.STANDARD,
    toleratedFailurePercentage: 0,
    resultPath: sfn.JsonPath.DISCARD,
    label: o.id,
    // Rendered because the construct turns on the feature flag useDistributedMapResultWriterV2 for its subtree.
    resultWriterV2: new PrefixResultWriter({ bucket: o.resultsBucket, prefix: o.resultsPrefix }),
  });
  map.itemProcessor(work.next(loop));
  return map;
}

/** The Plan task: the execution's input as it is and the execution's id (the lease's holder), to the planner. */
export function planTask(scope: Construct, planner: lambda.IFunction, comment: string): tasks.LambdaInvoke {
  const plan = new tasks.LambdaInvoke(scope, 'Plan', {
    lambdaFunction: planner,
    comment,
    // The execution's id: the lease holder, named to a second execution; the same execution's retried Plan resumes.
    payload: sfn.TaskInput.fromObject({ 'input.$': '$', 'execution.$': '$$.Execution.Id' }),
    payloadResponseOnly: true,
    retryOnServiceExceptions: false,
  });
  return retried(plan);
}

/** The end of a plan's state machine: Finish, and Release → Failed after a failed map or a Finish still failing. */
export interface FinishProps {
  readonly finalizer: lambda.IFunction;
  /** The plan's id in the state data and in the finalizer's payload (`backfillId`, `rebuildId`). */
  readonly idField: string;
  readonly finishComment: string;
  readonly releaseComment: string;
  /** Finish's retrier of any error (after the Lambda retriers): it is idempotent. */
  readonly finishRetry: sfn.RetryProps;
  /** The maps whose failure gives the lease back. */
  readonly maps: readonly sfn.DistributedMap[];
}

/**
 * Finish (the finalizer with the plan's id), retried on any error; a map that failed (a batch that kept failing, too
 * many passes) or a Finish that still fails goes to Release (the finalizer with `release: true`: the plan's lease
 * given back at once, so nothing is held off for nothing and a new execution resumes the plan without waiting for the
 * lease to lapse), then to Failed with the error. Returns Finish.
 */
export function finishWithRelease(scope: Construct, o: FinishProps): tasks.LambdaInvoke {
  const id = { [`${o.idField}.$`]: `$.${o.idField}` };
  const finish = retried(
    new tasks.LambdaInvoke(scope, 'Finish', {
      lambdaFunction: o.finalizer,
      comment: o.finishComment,
      payload: sfn.TaskInput.fromObject(id),
      payloadResponseOnly: true,
      retryOnServiceExceptions: false,
    }),
  );
  finish.addRetry(o.finishRetry);
  const release = retried(
    new tasks.LambdaInvoke(scope, 'Release', {
      lambdaFunction: o.finalizer,
      comment: o.releaseComment,
      payload: sfn.TaskInput.fromObject({ ...id, release: true }),
      payloadResponseOnly: true,
      resultPath: sfn.JsonPath.DISCARD,
      retryOnServiceExceptions: false,
    }),
  );
  release.next(new sfn.Fail(scope, 'Failed', { errorPath: '$.failure.Error', causePath: '$.failure.Cause' }));
  for (const map of o.maps) map.addCatch(release, { errors: ['States.ALL'], resultPath: '$.failure' });
  finish.addCatch(release, { errors: ['States.ALL'], resultPath: '$.failure' });
  return finish;
}
