/**
 * `CatalogConsumer`: a named consumer of a {@link CatalogSync}'s mirror, as a Lambda function that handles every
 * commit in order, at least once, from its own cursor to the mirror's watermark (issue 22; README, "Consuming the
 * mirror").
 *
 * - **The function**: yours (`function`), or built here from your `entry`. Its handler is
 *   `consumerHandler(handleCommit)` from `catalog-sync/consumer/lambda`: each invocation runs the consumer from its
 *   cursor (`pk` = consumer name, `sk` = `cursor` in the sync's table) to the watermark, then returns.
 * - **Woken** by the sync's `commits/` events through a queue of its own (a target added to the sync's commit rule:
 *   each consumer gets every event; events are a wake-up, not the data), and by a schedule as a backstop.
 * - **One at a time**: reserved concurrency 1. Lambda itself then never runs two invocations of it, so a user's
 *   handler sees commits strictly in order, with no lease to expire, renew or clean up after a crash; the cursor's
 *   conditional writes stay the safety net (two overlapping runs would never both move it past one commit).
 *   A wake-up that arrives while it runs is throttled and retried by SQS: harmless, as any wake-up is.
 * - **Stuck**: the function counts `ConsumerFailures`; the cursor never moves past a failing commit, so failures in
 *   `stuckPeriods` consecutive 5-minute periods mean it is stuck on one commit: the `stuckAlarm` fires. A failed
 *   scheduled run lands in the dead-letter queue with its error, naming the commit; the `deadLetterAlarm` fires too.
 * - **Lag**: `ConsumerLagSeconds` (the watermark minus the consumer's cursor, in commit time), on the sync's
 *   dashboard beside the consumer's commits and failures.
 * - **Least privilege**: GetItem of its own and its dependencies' cursors, UpdateItem of its own; GetObject under the
 *   sync's prefix, ListBucket on the bucket (unconditioned: a GET of a missing key answers 404, not 403, only with
 *   it), kms:Decrypt of the bucket's customer key if any; its own log group.
 */
import { Annotations, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  consumerCursorKey,
  CURSOR_NAME_PATTERN,
  DEFAULT_METRICS_NAMESPACE,
  mirrorKeyOf,
} from '../../lambda/contract/index.js';
import type { ConsumableSync } from './consumable-sync.js';
import { CatalogSyncPropsError } from '../props-error.js';
import { nagResource } from './nag.js';
import { syncMetric } from './sync-alarms.js';
import { grantBucketKey, grantMissingKeys } from './mirror-grants.js';
import { latestNodeRuntime, nodeBundling, SendMessageOnly } from './sync-function.js';

/** Properties of a {@link CatalogConsumer}. */
export interface CatalogConsumerProps {
  /** The sync whose mirror it reads: its table (the consumer's cursor lives there), bucket, prefix, commit events and dashboard. */
  readonly sync: ConsumableSync;
  /** The consumer's name: its cursor's `pk`. Not the sync's own cursor name. */
  readonly consumerName: string;
  /**
   * The entry file of the function, exporting `handler = consumerHandler(…)` (`catalog-sync/consumer/lambda`).
   * Give this or `function`.
   */
  readonly entry?: string;
  /**
   * A function you built whose handler is `consumerHandler(…)`. The construct sets its environment, reserved
   * concurrency (1), triggers and grants. Give this or `entry`.
   */
  readonly function?: lambda.Function;
  /** Cursors (other consumers, in the same table) this one never passes. @default none */
  readonly dependsOn?: readonly string[];
  /** Commits between two checkpoints. @default 1 */
  readonly checkpointEvery?: number;
  /** Backstop schedule. @default Duration.minutes(5) */
  readonly schedule?: Duration;
  /** Time limit of one invocation of a function built from `entry`. @default Duration.minutes(5) */
  readonly timeout?: Duration;
  /** Memory of a function built from `entry`, in MB. @default 512 */
  readonly memorySize?: number;
  /** Runtime of a function built from `entry`. @default lambda.Runtime.NODEJS_22_X */
  readonly runtime?: lambda.Runtime;
  /** Consecutive 5-minute periods with failures before the stuck alarm fires. @default 3 */
  readonly stuckPeriods?: number;
  /** Notified when an alarm fires and clears. @default - none */
  readonly alarmTopic?: sns.ITopic;
}

const DEFAULT_CONSUMER_SCHEDULE = Duration.minutes(5);
const DEFAULT_CONSUMER_TIMEOUT = Duration.minutes(5);

/** A named consumer of a sync's mirror: function, wake-up queue, schedule, dead letters, alarms, lag on the dashboard. */
export class CatalogConsumer extends Construct {
  /** The function that runs the consumer. */
  readonly function: lambda.Function;
  /** Its wake-ups: the sync's `commits/` events. */
  readonly wakeQueue: sqs.Queue;
  /** Wake-ups received too often (throttled while the function ran) and events EventBridge could not deliver. */
  readonly wakeDeadLetterQueue: sqs.Queue;
  /** Failed scheduled runs (with their error) and ticks EventBridge could not deliver. */
  readonly deadLetterQueue: sqs.Queue;
  /** The backstop schedule. */
  readonly scheduleRule: events.Rule;
  /** The consumer failed in `stuckPeriods` consecutive periods: stuck on one commit. */
  readonly stuckAlarm: cloudwatch.Alarm;
  /** The dead-letter queue holds a failed run. */
  readonly deadLetterAlarm: cloudwatch.Alarm;
  /** The `service` dimension of its metrics: `catalog-sync-consumer-<name>`. */
  readonly serviceName: string;

  constructor(scope: Construct, id: string, props: CatalogConsumerProps) {
    super(scope, id);
    const { sync, consumerName } = props;
    const dependsOn = [...(props.dependsOn ?? [])];
    checkProps(props, dependsOn);
    this.serviceName = `catalog-sync-consumer-${consumerName}`;
    const schedule = props.schedule ?? DEFAULT_CONSUMER_SCHEDULE;

    this.function = props.function ?? this.buildFunction(props);
    const timeout =
      props.function === undefined
        ? (props.timeout ?? DEFAULT_CONSUMER_TIMEOUT)
        : (props.function.timeout ?? Duration.seconds(3));
    const environment: Record<string, string> = {
      CONSUMER_NAME: consumerName,
      CURSOR_TABLE: sync.table.tableName,
      SNAPSHOT_BUCKET: sync.bucket.bucketName,
      SNAPSHOT_PREFIX: sync.prefix,
      CURSOR_NAME: sync.cursorName,
      DEPENDS_ON: dependsOn.join(','),
      CHECKPOINT_EVERY: String(props.checkpointEvery ?? 1),
      POWERTOOLS_SERVICE_NAME: this.serviceName,
      POWERTOOLS_METRICS_NAMESPACE: DEFAULT_METRICS_NAMESPACE,
    };
    for (const [name, value] of Object.entries(environment)) this.function.addEnvironment(name, value);
    // One invocation at a time: see the module comment.
    (this.function.node.defaultChild as lambda.CfnFunction).reservedConcurrentExecutions = 1;
    this.grant(props, dependsOn);

    // --- wake-ups: the sync's commit events, in a queue of this consumer's own ---------------------------------
    this.wakeDeadLetterQueue = new sqs.Queue(this, 'WakeDeadLetters', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(1),
    });
    this.wakeQueue = new sqs.Queue(this, 'Wake', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(1),
      // Six times the function's timeout (as AWS advises for a Lambda event source).
      visibilityTimeout: Duration.seconds(timeout.toSeconds() * 6),
      // Throttled receives count: while one run goes on, wake-ups may be received many times. Only a wake-up.
      deadLetterQueue: { queue: this.wakeDeadLetterQueue, maxReceiveCount: 50 },
    });
    Validations.of(this.wakeDeadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue IS the dead-letter queue of the wake-up queue. Its messages are only wake-ups (the schedule and the next event wake the consumer again); nothing is lost when they expire.',
    });
    if (sync.commitRule)
      sync.commitRule.addTarget(new targets.SqsQueue(this.wakeQueue, { deadLetterQueue: this.wakeDeadLetterQueue }));
    else {
      Annotations.of(this).addWarningV2(
        'catalog-sync:consumer-without-events',
        `CatalogConsumer ${consumerName}: the sync has no commit events (commitEvents: false), so only the schedule (every ${schedule.toMinutes()} min) wakes it`,
      );
    }
    // Many events, one run: a batch of up to 1,000 wake-ups gathered for up to 20 s; the poller's fewest concurrent
    // invocations (2), so that few batches meet the reserved concurrency of 1 and are throttled.
    this.function.addEventSource(
      new SqsEventSource(this.wakeQueue, {
        batchSize: 1_000,
        maxBatchingWindow: Duration.seconds(20),
        maxConcurrency: 2,
      }),
    );

    // --- the backstop schedule, failures to a dead-letter queue ------------------------------------------------
    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetters', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        "This queue IS the dead-letter queue of the consumer's scheduled runs (on-failure destination and rule-target DLQ); the dead-letter alarm watches it.",
    });
    this.function.configureAsyncInvoke({
      retryAttempts: 0,
      maxEventAge: Duration.hours(1),
      onFailure: new SendMessageOnly(this.deadLetterQueue),
    });
    this.scheduleRule = new events.Rule(this, 'Schedule', {
      description: `catalog-sync consumer ${consumerName}: a run every ${schedule.toMinutes()} min, besides the commit events`,
      schedule: events.Schedule.rate(schedule),
    });
    this.scheduleRule.addTarget(
      new targets.LambdaFunction(this.function, {
        retryAttempts: 0,
        maxEventAge: Duration.hours(1),
        deadLetterQueue: this.deadLetterQueue,
      }),
    );

    // --- alarms and the dashboard ----------------------------------------------------------------------------
    const period = Duration.minutes(5);
    const stuckPeriods = props.stuckPeriods ?? 3;
    this.stuckAlarm = new cloudwatch.Alarm(this, 'StuckAlarm', {
      alarmDescription:
        `catalog-sync consumer ${consumerName}: its handler failed in ${stuckPeriods} consecutive periods. The cursor never moves past a failing commit, ` +
        'so it is stuck on one: the function\'s logs and the dead-letter queue name it ("commitKey"). Fix the handler; the next run delivers that commit again.',
      metric: syncMetric(this.serviceName, 'ConsumerFailures', { period, statistic: cloudwatch.Stats.SUM }),
      threshold: 1,
      evaluationPeriods: stuckPeriods,
      datapointsToAlarm: stuckPeriods,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.deadLetterAlarm = new cloudwatch.Alarm(this, 'DeadLettersAlarm', {
      alarmDescription: `catalog-sync consumer ${consumerName}: a scheduled run failed (its error is in the dead-letter queue).`,
      metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
        period,
        statistic: cloudwatch.Stats.MAXIMUM,
      }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    if (props.alarmTopic) {
      for (const alarm of [this.stuckAlarm, this.deadLetterAlarm]) {
        alarm.addAlarmAction(new cloudwatchActions.SnsAction(props.alarmTopic));
        alarm.addOkAction(new cloudwatchActions.SnsAction(props.alarmTopic));
      }
    }
    sync.dashboard?.addConsumer(consumerName, this.serviceName, [this.stuckAlarm, this.deadLetterAlarm]);
  }

  /** The metric of the consumer's lag: the watermark minus its cursor, in seconds of commit time. */
  metricLag(props: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return syncMetric(this.serviceName, 'ConsumerLagSeconds', { statistic: cloudwatch.Stats.MAXIMUM, ...props });
  }

  private buildFunction(props: CatalogConsumerProps): lambda.Function {
    const runtime = props.runtime ?? lambda.Runtime.NODEJS_22_X;
    const logGroup = new logs.LogGroup(this, 'Logs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `catalog-sync consumer ${props.consumerName}: its cursor, reads of the mirror, its logs`,
    });
    logGroup.grantWrite(role);
    const fn = new NodejsFunction(this, 'Function', {
      entry: props.entry!,
      handler: 'handler',
      runtime,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout ?? DEFAULT_CONSUMER_TIMEOUT,
      role,
      logGroup,
      description: `catalog-sync consumer ${props.consumerName}`,
      bundling: nodeBundling(runtime),
    });
    if (runtime.name !== latestNodeRuntime().name) {
      Validations.of(fn).acknowledge({
        id: 'AwsSolutions-L1',
        reason: `${runtime.name} is chosen deliberately (the runtime prop; Node.js 22 by default), as for the sync's own function.`,
      });
    }
    return fn;
  }

  /** Exactly the calls `consumerHandler` makes (lambda/consumer/lambda.ts), on exactly its items and keys. */
  private grant(props: CatalogConsumerProps, dependsOn: readonly string[]): void {
    const { sync, consumerName } = props;
    const fn = this.function;
    // A consumer's cursor is keyed by its mirror and name; the item under the name alone is an earlier version's,
    // read (its own and its dependencies') and marked adopted (its own) once.
    const mirror = mirrorKeyOf(`s3://${sync.bucket.bucketName}`, sync.prefix);
    const keyed = (name: string): string => consumerCursorKey(mirror, name);
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        sid: 'ReadCursors',
        actions: ['dynamodb:GetItem'],
        resources: [sync.table.tableArn],
        conditions: {
          'ForAllValues:StringEquals': {
            'dynamodb:LeadingKeys': [keyed(consumerName), ...dependsOn.map(keyed), consumerName, ...dependsOn],
          },
        },
      }),
    );
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        sid: 'MoveOwnCursor',
        actions: ['dynamodb:UpdateItem'],
        resources: [sync.table.tableArn],
        conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [keyed(consumerName), consumerName] } },
      }),
    );
    // ListBucket on the bucket, without a condition: it lists the manifests under `commits/`, and it reads keys that
    // may be missing (the watermark before the follower's first run; the view's package indexes before they exist
    // and a quarantined leaf's key). S3 answers such a GET with 404 only to a caller allowed ListBucket, with 403
    // AccessDenied to anyone else, and a ListBucket conditioned on `s3:prefix` does not count (a GetObject has no
    // `s3:prefix`). The price: the consumer may list the bucket's key names.
    grantMissingKeys(fn, sync.bucket);
    const objects = sync.bucket.arnForObjects(`${sync.prefix}*`);
    fn.addToRolePolicy(new iam.PolicyStatement({ sid: 'ReadMirror', actions: ['s3:GetObject'], resources: [objects] }));
    Validations.of(fn.role ?? fn).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${nagResource(Stack.of(this).resolve(objects))}]`,
      reason: `A consumer reads the watermark, the manifests and the leaves they name, keys unknown in advance: GetObject (only) under the sync's prefix "${sync.prefix}".`,
    });
    // A bucket encrypted with a customer key: reading its objects needs kms:Decrypt.
    grantBucketKey(fn, sync.bucket, ['kms:Decrypt']);
  }
}

function checkProps(props: CatalogConsumerProps, dependsOn: readonly string[]): void {
  const problem = (what: string): CatalogSyncPropsError =>
    new CatalogSyncPropsError(`CatalogConsumer ${JSON.stringify(props.consumerName)}: ${what}`);
  if (!CURSOR_NAME_PATTERN.test(props.consumerName))
    throw problem('consumerName must be 1 to 128 characters of A-Z a-z 0-9 . _ - and start with a letter or digit');
  if (props.consumerName === props.sync.cursorName)
    throw problem("consumerName is the sync's own cursor name: a consumer needs a cursor of its own");
  if ((props.entry === undefined) === (props.function === undefined))
    throw problem('give exactly one of "entry" (a file exporting handler = consumerHandler(…)) and "function"');
  for (const dependency of dependsOn) {
    if (!CURSOR_NAME_PATTERN.test(dependency) || dependency === props.consumerName)
      throw problem(`dependsOn ${JSON.stringify(dependency)} is not another cursor's name`);
  }
  const every = props.checkpointEvery ?? 1;
  if (!Number.isInteger(every) || every < 1) throw problem(`checkpointEvery ${every} must be a whole number >= 1`);
  const periods = props.stuckPeriods ?? 3;
  if (!Number.isInteger(periods) || periods < 1) throw problem(`stuckPeriods ${periods} must be a whole number >= 1`);
}
