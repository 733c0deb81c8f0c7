/**
 * What the constructs of the stack's state machines share (CatalogBackfill, ViewRebuild): a function with a role of
 * its own and its log group, grants on exactly the table's items and the bucket's prefixes each function uses, the
 * state machine's role (its functions, its items files for the ItemReader, its map runs' results for the
 * ResultWriter, CDK's Distributed Map policy, logs and X-Ray), each wildcard acknowledged to cdk-nag with its reason,
 * and the failed-executions alarm.
 */
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { grantBucketKey } from './mirror-grants.js';
import { handlerCode } from './handler-entry.js';
import { nagResource } from './nag.js';
import { latestNodeRuntime, nodeBundling } from './sync-function.js';

/** One function of a state machine. */
export interface MachineFunctionProps {
  /** Construct id (`Planner`, `Worker`, …): `{name}Logs`, `{name}Role`, `{name}`. */
  readonly name: string;
  /** The handler's path under `lambda/` without extension (`backfill/lambda/planner`). */
  readonly handler: string;
  readonly runtime: lambda.Runtime;
  readonly memorySize: number;
  readonly timeout: Duration;
  readonly reserved?: number;
  readonly environment: Record<string, string>;
  readonly retention: logs.RetentionDays;
  readonly description: string;
  readonly roleDescription: string;
}

/** A function with its own role and log group, bundled as the follower's; invoked synchronously by the state machine. */
export function machineFunction(scope: Construct, o: MachineFunctionProps): { f: NodejsFunction; role: iam.Role } {
  const logGroup = new logs.LogGroup(scope, `${o.name}Logs`, {
    retention: o.retention,
    removalPolicy: RemovalPolicy.RETAIN,
  });
  const role = new iam.Role(scope, `${o.name}Role`, {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    description: o.roleDescription,
  });
  logGroup.grantWrite(role);
  const code = handlerCode(o.handler);
  const f = new NodejsFunction(scope, o.name, {
    entry: code.entry,
    handler: 'handler',
    ...code.project,
    runtime: o.runtime,
    architecture: lambda.Architecture.ARM_64,
    memorySize: o.memorySize,
    timeout: o.timeout,
    role,
    logGroup,
    environment: o.environment,
    ...(o.reserved === undefined ? {} : { reservedConcurrentExecutions: o.reserved }),
    description: o.description,
    // Invoked synchronously by the state machine, whose Retry decides: no asynchronous retries to configure.
    bundling: nodeBundling(o.runtime),
  });
  if (o.runtime.name !== latestNodeRuntime().name) {
    Validations.of(f).acknowledge({
      id: 'AwsSolutions-L1',
      reason: `${o.runtime.name} is chosen deliberately (the runtime prop; Node.js 22 by default), as for the follower's function: the bundle targets it and the project supports Node.js >= 20.18.`,
    });
  }
  return { f, role };
}

/** `actions` on the table's items whose partition key is one of `keys` (DynamoDB's LeadingKeys condition). */
export function grantItems(
  role: iam.Role,
  table: dynamodb.ITable,
  sid: string,
  actions: string[],
  keys: readonly string[],
): void {
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      sid,
      actions,
      resources: [table.tableArn],
      conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [...keys] } },
    }),
  );
}

/** `actions` on the bucket's objects under `under`, the wildcard acknowledged to cdk-nag with `why`. */
export function grantObjects(
  scope: Construct,
  role: iam.Role,
  bucket: s3.IBucket,
  sid: string,
  actions: string[],
  under: string,
  why: string,
): void {
  const arn = bucket.arnForObjects(`${under}*`);
  role.addToPrincipalPolicy(new iam.PolicyStatement({ sid, actions, resources: [arn] }));
  Validations.of(role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::${nagResource(Stack.of(scope).resolve(arn))}]`,
    reason: why,
  });
}

/** What the state machine's role reads and writes, and what it invokes. */
export interface MachineGrants {
  readonly bucket: s3.IBucket;
  /** The ItemReader's items files: GetObject under this prefix; the statement's Sid, and the reason told to cdk-nag. */
  readonly itemsPrefix: string;
  readonly itemsSid: string;
  readonly itemsWhy: string;
  /** The ResultWriter's prefix. */
  readonly resultsPrefix: string;
  /** The functions it invokes (CDK's LambdaInvoke grants, on the function and its versions). */
  readonly functions: readonly lambda.IFunction[];
}

/**
 * The state machine's role beyond CDK's own grants: GetObject of its items files (the bucket comes from the
 * planner's output, so CDK adds none), the ResultWriter's writes under its prefix, the bucket's customer key; and
 * cdk-nag told why each wildcard is there (its DistributedMapPolicy's included).
 */
export function grantMachine(scope: Construct, stateMachine: sfn.StateMachine, role: iam.Role, o: MachineGrants): void {
  const resolved = (value: unknown) => nagResource(Stack.of(scope).resolve(value));
  const itemsArn = o.bucket.arnForObjects(`${o.itemsPrefix}*`);
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({ sid: o.itemsSid, actions: ['s3:GetObject'], resources: [itemsArn] }),
  );
  // ResultWriter: the map runs' results (multipart uploads, read back by the service) under their prefix only.
  const resultsArn = o.bucket.arnForObjects(`${o.resultsPrefix}*`);
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      sid: 'WriteMapResults',
      actions: ['s3:PutObject', 's3:GetObject', 's3:ListMultipartUploadParts', 's3:AbortMultipartUpload'],
      resources: [resultsArn],
    }),
  );
  grantBucketKey(role, o.bucket, ['kms:Decrypt', 'kms:GenerateDataKey']);
  // CDK's DistributedMapPolicy: StartExecution on this state machine, Describe/Stop/Redrive its executions.
  const mapPolicy = stateMachine.node.tryFindChild('DistributedMapPolicy') as iam.Policy | undefined;
  if (mapPolicy) {
    const document = Stack.of(scope).resolve(mapPolicy.document) as { Statement: Array<{ Resource: unknown }> };
    for (const statement of document.Statement) {
      for (const resource of [statement.Resource].flat()) {
        const name = nagResource(resource);
        if (!name.includes('*')) continue;
        Validations.of(mapPolicy).acknowledge({
          id: `AwsSolutions-IAM5[Resource::${name}]`,
          reason:
            "A Distributed Map runs each batch as a child execution of this state machine: DescribeExecution, StopExecution and RedriveExecution on this state machine's own executions (ids made by the service), as AWS documents for Distributed Map.",
        });
      }
    }
  }
  Validations.of(role).acknowledge({ id: `AwsSolutions-IAM5[Resource::${resolved(itemsArn)}]`, reason: o.itemsWhy });
  for (const fn of o.functions) {
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${resolved(fn.node.defaultChild && Stack.of(scope).getLogicalId(fn.node.defaultChild as lambda.CfnFunction))}.Arn>:*]`,
      reason:
        "lambda:InvokeFunction on the function and its versions/aliases (CDK's LambdaInvoke grant): the state machine invokes exactly its functions.",
    });
  }
  Validations.of(role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::${resolved(resultsArn)}]`,
    reason: `The Distributed Map's ResultWriter writes each map run's results under "${o.resultsPrefix}<map run id>/", named by the service: PutObject (multipart), GetObject under that prefix only.`,
  });
  Validations.of(role).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason:
      'CDK\'s grants for the execution logs (logs:*LogDelivery, DescribeLogGroups, *ResourcePolicies) and X-Ray (PutTraceSegments, PutTelemetryRecords, GetSampling*): these actions have no resource-level permissions (AWS Step Functions developer guide, "IAM policies for CloudWatch Logs" and "X-Ray").',
  });
}

/** Fires on a failed, timed-out or aborted execution of `stateMachine` (a Succeed such as AlreadyRunning is none). */
export function failedExecutionsAlarm(
  scope: Construct,
  id: string,
  stateMachine: sfn.StateMachine,
  description: string,
  topic?: sns.ITopic,
): cloudwatch.Alarm {
  const metric = (name: string) => stateMachine.metric(name, { statistic: 'Sum', period: Duration.minutes(5) });
  const alarm = new cloudwatch.Alarm(scope, id, {
    alarmDescription: description,
    metric: new cloudwatch.MathExpression({
      expression: 'failed + timedOut + aborted',
      usingMetrics: {
        failed: metric('ExecutionsFailed'),
        timedOut: metric('ExecutionsTimedOut'),
        aborted: metric('ExecutionsAborted'),
      },
      period: Duration.minutes(5),
      label: 'Executions failed, timed out or aborted',
    }),
    threshold: 0,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
  });
  if (topic) {
    alarm.addAlarmAction(new cloudwatchActions.SnsAction(topic));
    alarm.addOkAction(new cloudwatchActions.SnsAction(topic));
  }
  return alarm;
}
