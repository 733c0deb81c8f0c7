/**
 * The backfill's state machine definition (see catalog-backfill.ts for the picture): Plan → Ranges (Distributed
 * Map: ItemReader, ItemBatcher, MaxConcurrency, STANDARD child executions of RunBatch → BatchDone? → Again, no
 * failure tolerated) → Finish. Its states are created in `scope`, the {@link CatalogBackfill}.
 */
import { Duration } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import type { Construct } from 'constructs';

/** Lambda errors of the service, not of the code: always worth a retry. */
export const LAMBDA_SERVICE_ERRORS = [
  'Lambda.ClientExecutionTimeoutException',
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.TooManyRequestsException',
];

/** What the definition is made of. */
export interface BackfillDefinitionProps {
  readonly planner: lambda.IFunction;
  readonly worker: lambda.IFunction;
  readonly finalizer: lambda.IFunction;
  readonly maxConcurrency: number;
  readonly batchSize: number;
  readonly maxPasses: number;
}

/** The chain Plan → Ranges → Finish. */
export function backfillDefinition(scope: Construct, o: BackfillDefinitionProps): sfn.IChainable {
  const serviceRetry = { errors: LAMBDA_SERVICE_ERRORS, interval: Duration.seconds(2), backoffRate: 2, maxAttempts: 6, jitterStrategy: sfn.JitterType.FULL };
  const plan = new tasks.LambdaInvoke(scope, 'Plan', {
    lambdaFunction: o.planner,
    comment: 'Reads the index once, cuts the ranges, writes <prefix>backfill/<id>/ranges.json and the plan item (or resumes the unfinished plan).',
    // No payload: the execution's input as it is, `{}` or `{ "until": "...", "rangeLeaves": 5000 }`.
    payloadResponseOnly: true,
    retryOnServiceExceptions: false,
  });
  plan.addRetry(serviceRetry);

  const work = new tasks.LambdaInvoke(scope, 'RunBatch', {
    lambdaFunction: o.worker,
    comment: 'Runs the batch\'s ranges within its time; a done range is skipped, a stopped one checkpointed.',
    payload: sfn.TaskInput.fromObject({ 'Items.$': '$.Items', 'BatchInput.$': '$.BatchInput' }),
    resultSelector: { 'done.$': '$.Payload.done' },
    resultPath: '$.result',
    retryOnServiceExceptions: false,
  });
  work.addRetry(serviceRetry);
  // A worker error (a range that failed after the engine's own retries, a lost lease, a timeout): the retried
  // worker resumes from the range's checkpoint; after these the map fails (no failure is tolerated).
  work.addRetry({ errors: ['States.ALL'], interval: Duration.seconds(10), backoffRate: 2, maxAttempts: 3, jitterStrategy: sfn.JitterType.FULL });
  const again = new sfn.Pass(scope, 'Again', {
    comment: 'The batch stopped at its time limit: run it again (done ranges are skipped, the others resume).',
    parameters: {
      'Items.$': '$.Items',
      BatchInput: { 'backfillId.$': '$.BatchInput.backfillId', 'passes.$': 'States.MathAdd($.BatchInput.passes, 1)' },
    },
  });
  const tooMany = new sfn.Fail(scope, 'TooManyPasses', { error: 'BackfillBatchStuck', cause: `A batch came back not done ${o.maxPasses} times.` });
  const loop = new sfn.Choice(scope, 'BatchDone?')
    .when(sfn.Condition.booleanEquals('$.result.done', true), new sfn.Succeed(scope, 'BatchDone'))
    .when(sfn.Condition.numberGreaterThanEquals('$.BatchInput.passes', o.maxPasses), tooMany)
    .otherwise(again.next(work));
  const ranges = new sfn.DistributedMap(scope, 'Ranges', {
    comment: 'Every range of the plan, batchSize per worker invocation, maxConcurrency at once; no failure tolerated.',
    itemReader: new sfn.S3JsonItemReader({ bucketNamePath: sfn.JsonPath.stringAt('$.bucket'), key: sfn.JsonPath.stringAt('$.rangesKey') }),
    itemBatcher: new sfn.ItemBatcher({ maxItemsPerBatch: o.batchSize, batchInput: { 'backfillId.$': '$.backfillId', passes: 0 } }),
    maxConcurrency: o.maxConcurrency,
    mapExecutionType: sfn.StateMachineType.STANDARD,
    toleratedFailurePercentage: 0,
    resultPath: sfn.JsonPath.DISCARD,
    label: 'Ranges',
  });
  ranges.itemProcessor(work.next(loop));

  const finish = new tasks.LambdaInvoke(scope, 'Finish', {
    lambdaFunction: o.finalizer,
    comment: 'Every range done: moves the cursor to B (only forward), writes watermark.json, logs the backfill.',
    payload: sfn.TaskInput.fromObject({ 'backfillId.$': '$.backfillId' }),
    payloadResponseOnly: true,
    retryOnServiceExceptions: false,
  });
  finish.addRetry(serviceRetry);

  return plan.next(ranges).next(finish);
}
