/**
 * `CatalogSync`: one follower of a NuGet V3 catalog, as it should run in production. Put it in your own CDK
 * app, or deploy `infra/app.ts` as it is (configured from `cdk.json` context).
 *
 * What it builds (see the README's Deploy section for the picture):
 * - the cursor table (`pk`/`sk`, on-demand, point-in-time recovery, TTL on `expiresAt`, retained), unless
 *   `table` is given;
 * - the snapshot bucket (no public access, TLS only, SSE-S3, versioned, retained, server access logs,
 *   object events to EventBridge), unless `bucket` is given;
 * - the function (Node.js 22, arm64, ESM bundle made by the local esbuild) with exactly the permissions the
 *   code uses: three DynamoDB item actions on its own cursor's items, `s3:PutObject` under its own prefix;
 * - the schedule (EventBridge rule, every 5 minutes), no retries (the next tick is the retry), failures to an
 *   SQS dead-letter queue;
 * - four alarms (errors, dead letters, cursor lag, no successful run), optionally to an SNS topic;
 * - the reference consumer path: `commits/` object-created events into an SQS queue with its own DLQ.
 *
 * Two syncs may share one table (a dependency is a cursor item of the same table) and one bucket (each under
 * its own prefix): pass the first one's `table` and `bucket` to the second.
 */
import { Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, LogLevel } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct, type IConstruct } from 'constructs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import {
  CatalogSyncError,
  DEFAULT_CONCURRENCY,
  DEFAULT_CURSOR_NAME,
  DEFAULT_MAX_COMMITS,
  DEFAULT_MAX_LEAVES,
  DEFAULT_METRICS_NAMESPACE,
  DEFAULT_RUN_LOG_DAYS,
  DEFAULT_SOURCE,
  ErrorCode,
  MIN_TIMESTAMP,
  parseSettings,
  redactUrl,
  SettingsError,
  SOURCE_SECRET_ENV,
} from '../lambda/contract/index.js';
import { embeddedCredentialsProblem, grantSourceSecretRead, sourceSecretOf } from './source-secret.js';

/** The repository root: the bundle's project root, lock file and entry are found from it, whatever the cwd. */
const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Memory of the function. 1,024 MB on arm64 gives about 0.58 vCPU (1,769 MB is one full vCPU; see the README's Performance section) for JSON parsing and TLS while the run is
 * mostly network-bound; peak heap is the page items of one slice, never leaf bodies.
 * TODO(bench): revisit with the benchmark's figures (bench/) once they are written.
 */
export const DEFAULT_MEMORY_MB = 1_024;

/**
 * Time limit of one run. The handler stops taking new work 5–30 s before it (see `safetyMarginMs`), then
 * checkpoints. Five minutes is one schedule tick, so runs never pile up.
 * TODO(bench): revisit with the benchmark's figures (bench/) once they are written.
 */
export const DEFAULT_TIMEOUT = Duration.minutes(5);

/** Time between two runs. */
export const DEFAULT_SCHEDULE = Duration.minutes(5);

/** How long a scheduled event may wait to be run before it is dropped (to the DLQ): the next tick takes over. */
export const DEFAULT_MAX_EVENT_AGE = Duration.minutes(2);

/** Cursor lag above which the lag alarm fires (after `lagAlarmPeriods` schedule periods in a row). */
export const DEFAULT_LAG_THRESHOLD = Duration.hours(1);

/** Wildcards and policy variables in IAM resource ARNs: a prefix holding one could not be granted exactly. */
const IAM_SPECIAL = /[*?$]/;

/** A prop of {@link CatalogSync} that cannot be deployed; the message names the construct and the prop. */
export class CatalogSyncPropsError extends CatalogSyncError {
  override readonly name = 'CatalogSyncPropsError';
  override get code(): ErrorCode {
    return ErrorCode.props;
  }
}

/** Properties of a {@link CatalogSync}. Every one is optional: the defaults follow nuget.org. */
export interface CatalogSyncProps {
  /**
   * Service index or catalog index URL (`CATALOG_SOURCE`).
   * @default 'https://api.nuget.org/v3/index.json'
   */
  readonly source?: string;

  /**
   * The secret holding a private feed's credentials: an `ISecret`, or a secret's name or ARN (the complete ARN,
   * with the six characters Secrets Manager appends, grants most narrowly). Its value is
   * `{"username": "…", "password": "…"}` (username optional) or a bare token, sent as the password with the
   * user name `catalog-sync`. The template holds only its ARN (`SOURCE_SECRET_ARN`); the function reads it
   * once per container and sends the credentials as HTTP Basic authentication to the source's origin only.
   * Credentials in `source` itself are refused: they would be in plain text in the template.
   * @default - none: a public feed
   */
  readonly sourceSecret?: secretsmanager.ISecret | string;

  /**
   * ARN of the customer-managed KMS key encrypting `sourceSecret`, when it is given by name or ARN and is not
   * encrypted with the AWS managed key `aws/secretsmanager`. The function may decrypt with it through Secrets
   * Manager only. (An `ISecret` brings its own `encryptionKey`.)
   * @default - the AWS managed key: no KMS permission needed
   */
  readonly sourceSecretKeyArn?: string;

  /**
   * Name of this sync's cursor (`CURSOR_NAME`): the `pk` of its cursor and run-log items. Unique per table.
   * Also names the metrics: the Powertools service (`service` dimension) is `catalog-sync-<cursorName>`.
   * @default 'catalog-to-s3'
   */
  readonly cursorName?: string;

  /**
   * Cursors (in the same table) this one must never pass (`DEPENDS_ON`). The function may read their cursor
   * items and nothing else of them.
   * @default - none
   */
  readonly dependsOn?: readonly string[];

  /**
   * Key prefix of every object this sync writes (`SNAPSHOT_PREFIX`). The function may `PutObject` under it and
   * nowhere else. Syncs sharing a bucket need prefixes that do not overlap (end them with `/`). It may not hold
   * `*`, `?` or `$`, which IAM reads as wildcards or variables.
   * @default '' (the whole bucket)
   */
  readonly prefix?: string;

  /**
   * Cursor to start from when none is stored (`START_CURSOR`), an exact catalog timestamp.
   * @default '0001-01-01T00:00:00Z' (the whole catalog)
   */
  readonly startCursor?: string;

  /**
   * Most commits in one run (`MAX_COMMITS`).
   * @default 5000 (the engine's default)
   */
  readonly maxCommits?: number;

  /**
   * Most leaves in one run (`MAX_LEAVES`).
   * @default 20000 (the engine's default)
   */
  readonly maxLeaves?: number;

  /**
   * Leaves in flight at once (`CONCURRENCY`).
   * @default 32 (the engine's default)
   */
  readonly concurrency?: number;

  /**
   * Set aside a leaf that keeps failing under `quarantine/` and go on (`QUARANTINE`), instead of stopping.
   * @default false
   */
  readonly quarantine?: boolean;

  /**
   * Other origins (`scheme://host[:port]`) leaves or pages may be fetched from (`ALLOWED_ORIGINS`).
   * @default - the catalog index's origin only
   */
  readonly allowedOrigins?: readonly string[];

  /**
   * Days a run-log item lives before DynamoDB's TTL removes it (`RUN_LOG_DAYS`).
   * @default 30
   */
  readonly runLogDays?: number;

  /**
   * The cursor table to use instead of creating one: share it between syncs so that one can depend on
   * another's cursor. It needs `pk`/`sk` string keys and TTL on `expiresAt` (see the contract).
   * @default - a table is created (on-demand, point-in-time recovery, TTL, retained)
   */
  readonly table?: dynamodb.ITable;

  /**
   * The snapshot bucket to use instead of creating one (share it between syncs with distinct prefixes).
   * For the consumer path it must send its events to EventBridge: buckets created by a CatalogSync do.
   * @default - a bucket is created (no public access, TLS only, encrypted, versioned, logged, retained)
   */
  readonly bucket?: s3.IBucket;

  /**
   * Time between two runs: an EventBridge `rate()` in whole minutes. It must be at least `timeout`, so runs do
   * not pile up. The alarms count in periods of this length.
   * @default Duration.minutes(5)
   */
  readonly schedule?: Duration;

  /**
   * Whether the schedule runs. Deploy with `false` to set things up (e.g. seed the cursor), then enable.
   * The no-successful-run alarm has its actions off while the schedule is off.
   * @default true
   */
  readonly enabled?: boolean;

  /**
   * Memory of the function in MB (CPU grows with it).
   * @default 1024 (to be revisited with the benchmark's figures)
   */
  readonly memorySize?: number;

  /**
   * Time limit of one run. The handler stops taking new work 5–30 s before it and checkpoints.
   * @default Duration.minutes(5) (to be revisited with the benchmark's figures)
   */
  readonly timeout?: Duration;

  /**
   * Reserved concurrency of the function. Not needed for correctness (overlapping runs are safe) nor for cost
   * (the schedule starts one run per period and `schedule >= timeout`); set it to cap runs started by hand.
   * A reservation fails to deploy on accounts whose concurrency quota is the new-account minimum of 10.
   * @default - none: the function uses the account's unreserved pool
   */
  readonly reservedConcurrency?: number;

  /**
   * Lambda runtime: Node.js 22 or newer (the bundle targets the same Node.js major).
   * @default lambda.Runtime.NODEJS_22_X
   */
  readonly runtime?: lambda.Runtime;

  /**
   * Retention of the function's log group (its logs also carry the EMF metrics).
   * @default logs.RetentionDays.ONE_MONTH
   */
  readonly logRetention?: logs.RetentionDays;

  /**
   * How long a scheduled event may wait (throttled, or queued behind a busy Lambda service) before it is dropped
   * to the dead-letter queue. From 1 minute to `schedule`: an older tick is pointless, the next one takes over.
   * @default Duration.minutes(2)
   */
  readonly maxEventAge?: Duration;

  /**
   * The lag alarm fires when the cursor lags the catalog head (`CursorLagSeconds`) by more than this in every
   * run of `lagAlarmPeriods` periods in a row. Expect it during a backfill.
   * @default Duration.hours(1)
   */
  readonly lagThreshold?: Duration;

  /**
   * Periods in a row the lag must stay above `lagThreshold` for the lag alarm to fire.
   * @default 3
   */
  readonly lagAlarmPeriods?: number;

  /**
   * The missed-run alarm fires when no run succeeded (`RunSucceeded`) in this many periods in a row.
   * @default 3
   */
  readonly missedRunPeriods?: number;

  /**
   * SNS topic notified when an alarm fires and when it clears.
   * @default - alarms only change state; no notification
   */
  readonly alarmTopic?: sns.ITopic;

  /**
   * Whether to create the reference consumer path: an EventBridge rule on this sync's `commits/` object-created
   * events into an SQS queue (`commitQueue`) with its own dead-letter queue.
   * @default true
   */
  readonly commitEvents?: boolean;

  /**
   * Bucket receiving the snapshot bucket's server access logs (only when the bucket is created here).
   * @default - a bucket is created for them, keeping logs `accessLogsRetention`
   */
  readonly accessLogsBucket?: s3.IBucket;

  /**
   * How long server access logs are kept in the access-logs bucket created here.
   * @default Duration.days(90)
   */
  readonly accessLogsRetention?: Duration;

  /**
   * How long noncurrent object versions are kept in the bucket created here (overlapping runs rewrite
   * identical objects, which leaves noncurrent versions behind).
   * @default Duration.days(30)
   */
  readonly noncurrentVersionRetention?: Duration;
}

/** Syncs seen per table and per bucket in this app, to refuse two syncs on one cursor or overlapping prefixes. */
const syncsByTable = new WeakMap<IConstruct, Map<string, string>>();
const syncsByBucket = new WeakMap<IConstruct, Array<{ prefix: string; path: string }>>();

/** One NuGet catalog follower: schedule → function → table + bucket, with alarms and a consumer queue. */
export class CatalogSync extends Construct {
  /** The cursor table (created here or given). */
  readonly table: dynamodb.ITable;
  /** The snapshot bucket (created here or given). */
  readonly bucket: s3.IBucket;
  /** The bucket of the snapshot bucket's server access logs, when the snapshot bucket was created here. */
  readonly accessLogsBucket?: s3.IBucket;
  /** The function that runs one slice per tick. */
  readonly function: NodejsFunction;
  /** The function's log group. */
  readonly logGroup: logs.LogGroup;
  /** The secret of the private feed's credentials, when one was given. */
  readonly sourceSecret?: secretsmanager.ISecret;
  /** The EventBridge rule that starts a run every `schedule`. */
  readonly scheduleRule: events.Rule;
  /** Failed runs (on-failure destination) and ticks EventBridge could not deliver (rule target DLQ). */
  readonly deadLetterQueue: sqs.Queue;
  /** `commits/` object-created events for downstream consumers, when `commitEvents` is on. */
  readonly commitQueue?: sqs.Queue;
  /** Dead-letter queue of `commitQueue` (messages received too often, events EventBridge could not deliver). */
  readonly commitDeadLetterQueue?: sqs.Queue;
  /** The EventBridge rule feeding `commitQueue`. */
  readonly commitRule?: events.Rule;
  /** Cursor name (`CURSOR_NAME`). */
  readonly cursorName: string;
  /** Key prefix (`SNAPSHOT_PREFIX`). */
  readonly prefix: string;
  /** Powertools service name: the `service` dimension of this sync's metrics. */
  readonly serviceName: string;
  /** The function fails: any error in a period. */
  readonly errorsAlarm: cloudwatch.Alarm;
  /** The dead-letter queue holds a message. */
  readonly deadLetterAlarm: cloudwatch.Alarm;
  /** The cursor lags the catalog head by more than the threshold. */
  readonly lagAlarm: cloudwatch.Alarm;
  /** No run succeeded in `missedRunPeriods` periods. */
  readonly missedRunAlarm: cloudwatch.Alarm;
  /** Partition keys this sync may read: its own cursor and its dependencies'. */
  private readonly readableKeys: readonly string[];

  constructor(scope: Construct, id: string, props: CatalogSyncProps = {}) {
    super(scope, id);
    // Server access logs are allowed by a bucket policy, not by the legacy LogDeliveryWrite ACL (which would
    // need ACLs enabled on the logs bucket), whatever the host app's feature flags say.
    this.node.setContext('@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy', true);
    this.cursorName = props.cursorName ?? DEFAULT_CURSOR_NAME;
    this.prefix = props.prefix ?? '';
    this.serviceName = `catalog-sync-${this.cursorName}`;
    const dependsOn = [...(props.dependsOn ?? [])];
    const rate = props.schedule ?? DEFAULT_SCHEDULE;
    const timeout = props.timeout ?? DEFAULT_TIMEOUT;
    const maxEventAge = props.maxEventAge ?? DEFAULT_MAX_EVENT_AGE;
    const runtime = props.runtime ?? lambda.Runtime.NODEJS_22_X;
    const enabled = props.enabled ?? true;

    // The engine's settings (lambda/contract/settings.ts), checked at synth time by the same parser the handler uses.
    const settings = {
      CATALOG_SOURCE: props.source ?? DEFAULT_SOURCE,
      CURSOR_NAME: this.cursorName,
      DEPENDS_ON: dependsOn.join(','),
      SNAPSHOT_PREFIX: this.prefix,
      START_CURSOR: props.startCursor ?? MIN_TIMESTAMP,
      MAX_COMMITS: String(props.maxCommits ?? DEFAULT_MAX_COMMITS),
      MAX_LEAVES: String(props.maxLeaves ?? DEFAULT_MAX_LEAVES),
      CONCURRENCY: String(props.concurrency ?? DEFAULT_CONCURRENCY),
      QUARANTINE: String(props.quarantine ?? false),
      ALLOWED_ORIGINS: (props.allowedOrigins ?? []).join(','),
      RUN_LOG_DAYS: String(props.runLogDays ?? DEFAULT_RUN_LOG_DAYS),
    };
    this.validate(settings, { rate, timeout, maxEventAge, runtime, props });
    if (props.sourceSecret !== undefined) this.sourceSecret = sourceSecretOf(this, 'SourceSecret', props.sourceSecret, props.sourceSecretKeyArn);

    // --- state: table and bucket -----------------------------------------------------------------------
    this.table = props.table ?? this.createTable();
    if (props.bucket) {
      this.bucket = props.bucket;
    } else {
      const created = this.createBucket(props);
      this.bucket = created.bucket;
      this.accessLogsBucket = created.logs;
    }
    this.register();
    // The contract's variables in its order, then Powertools' and Node's.
    const { CATALOG_SOURCE, CURSOR_NAME, DEPENDS_ON, ...rest } = settings;
    const environment: Record<string, string> = {
      CATALOG_SOURCE,
      // The secret's ARN only: its value is read by the function at run time, never put in the template.
      ...(this.sourceSecret ? { [SOURCE_SECRET_ENV]: this.sourceSecret.secretArn } : {}),
      CURSOR_NAME,
      DEPENDS_ON,
      CURSOR_TABLE: this.table.tableName,
      SNAPSHOT_BUCKET: this.bucket.bucketName,
      ...rest,
      POWERTOOLS_SERVICE_NAME: this.serviceName,
      POWERTOOLS_METRICS_NAMESPACE: DEFAULT_METRICS_NAMESPACE,
      NODE_OPTIONS: '--enable-source-maps',
    };

    // --- the function ----------------------------------------------------------------------------------
    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // A role of our own, so that nothing but the statements below is attached (no managed policy).
    const role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `catalog-sync ${this.cursorName}: cursor items, PutObject under its prefix, its logs${this.sourceSecret ? ', its source secret' : ''}`,
    });
    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetters', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });

    const runtimeMajor = /^nodejs(\d+)/.exec(runtime.name)?.[1];
    this.function = new NodejsFunction(this, 'Function', {
      entry: join(PROJECT_ROOT, 'lambda', 'handler.ts'),
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: join(PROJECT_ROOT, 'package-lock.json'),
      runtime,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySize ?? DEFAULT_MEMORY_MB,
      timeout,
      role,
      logGroup: this.logGroup,
      environment,
      // ListFunctions shows the description to anyone allowed to list functions: no query values in it.
      description: `catalog-sync: cursor ${this.cursorName} of ${redactUrl(CATALOG_SOURCE)}`,
      ...(props.reservedConcurrency === undefined ? {} : { reservedConcurrentExecutions: props.reservedConcurrency }),
      // Asynchronous invocation (the schedule): no retry, since the next tick is the retry and overlapping runs
      // are safe; a tick that cannot start within maxEventAge is dropped; a failed run goes to the DLQ with
      // its error (the destination record holds the request and the response, a plain DLQ only the event).
      retryAttempts: 0,
      maxEventAge,
      onFailure: new SendMessageOnly(this.deadLetterQueue),
      bundling: {
        // No Docker engine: the esbuild of package.json (devDependency) bundles on this machine.
        forceDockerBundling: false,
        format: OutputFormat.ESM,
        target: runtimeMajor ? `node${runtimeMajor}` : 'node22',
        platform: 'node',
        mainFields: ['module', 'main'],
        minify: true,
        sourceMap: true,
        sourcesContent: false,
        // CommonJS dependencies (undici, parts of the SDK) call require(): give the ESM bundle one.
        banner: "import { createRequire as __catalogSyncRequire } from 'node:module'; const require = __catalogSyncRequire(import.meta.url);",
        // The AWS SDK is bundled, not taken from the runtime: the Lambda runs the version of package-lock.json
        // that the integration tests exercise (ConditionalCheckFailedException handing back the stored item;
        // S3 request checksums, whose defaults changed in 3.729), while the runtime's copy is updated by AWS
        // without notice. Cost: about 0.5 MB more bundle (1.5 MB in all).
        bundleAwsSDK: true,
        externalModules: [],
        logLevel: LogLevel.WARNING,
      },
    });

    if (runtime.name !== latestNodeRuntime().name) {
      Validations.of(this.function).acknowledge({
        id: 'AwsSolutions-L1',
        reason: `${runtime.name} is chosen deliberately (the runtime prop; Node.js 22 by default): the bundle targets it and the project supports Node.js >= 20.18, and Node.js 22 is a maintained LTS until April 2027. Move to a newer runtime with the "runtime" prop once the tests run on it.`,
      });
    }

    this.readableKeys = [this.cursorName, ...dependsOn];
    this.grantFunction(role);

    // --- the schedule ----------------------------------------------------------------------------------
    this.scheduleRule = new events.Rule(this, 'Schedule', {
      description: `catalog-sync ${this.cursorName}: one slice every ${rate.toMinutes()} min`,
      schedule: events.Schedule.rate(rate),
      enabled,
    });
    this.scheduleRule.addTarget(
      new targets.LambdaFunction(this.function, {
        // Delivery to Lambda's queue: no retry and a short age, for the same reason as above; a tick
        // EventBridge cannot deliver (permissions, function gone) lands in the same DLQ.
        retryAttempts: 0,
        maxEventAge,
        deadLetterQueue: this.deadLetterQueue,
      }),
    );
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue IS the dead-letter queue of the schedule: the on-failure destination of the function and the DLQ of the rule target. A DLQ of a DLQ would only hide failures; the dead-letter alarm watches it.',
    });

    // --- alarms ----------------------------------------------------------------------------------------
    const actions = props.alarmTopic ? [new cloudwatchActions.SnsAction(props.alarmTopic)] : [];
    const alarm = (alarmId: string, alarmProps: cloudwatch.AlarmProps): cloudwatch.Alarm => {
      const created = new cloudwatch.Alarm(this, alarmId, alarmProps);
      created.addAlarmAction(...actions);
      created.addOkAction(...actions);
      return created;
    };
    this.errorsAlarm = alarm('ErrorsAlarm', {
      alarmDescription: `catalog-sync ${this.cursorName}: a run failed. Its error is in the logs and in the dead-letter queue.`,
      metric: this.function.metricErrors({ period: rate, statistic: cloudwatch.Stats.SUM }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.deadLetterAlarm = alarm('DeadLettersAlarm', {
      alarmDescription: `catalog-sync ${this.cursorName}: the dead-letter queue holds failed or undelivered runs. Read them, then purge the queue.`,
      metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: cloudwatch.Stats.MAXIMUM }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    const lagThreshold = props.lagThreshold ?? DEFAULT_LAG_THRESHOLD;
    const lagPeriods = props.lagAlarmPeriods ?? 3;
    this.lagAlarm = alarm('LagAlarm', {
      alarmDescription: `catalog-sync ${this.cursorName}: the cursor has lagged the catalog head by more than ${lagThreshold.toHumanString()} for ${lagPeriods} periods (expected during a backfill).`,
      metric: this.metric('CursorLagSeconds', { period: rate, statistic: cloudwatch.Stats.MINIMUM }),
      threshold: lagThreshold.toSeconds(),
      evaluationPeriods: lagPeriods,
      datapointsToAlarm: lagPeriods,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      // No data means no run: the missed-run alarm says so.
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    const missedPeriods = props.missedRunPeriods ?? 3;
    this.missedRunAlarm = alarm('MissedRunsAlarm', {
      alarmDescription: `catalog-sync ${this.cursorName}: no run succeeded in the last ${missedPeriods} periods of ${rate.toHumanString()}.`,
      metric: this.metric('RunSucceeded', { period: rate, statistic: cloudwatch.Stats.SUM }),
      threshold: 1,
      evaluationPeriods: missedPeriods,
      datapointsToAlarm: missedPeriods,
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.BREACHING,
      actionsEnabled: enabled,
    });

    // --- the reference consumer path --------------------------------------------------------------------
    if (props.commitEvents ?? true) {
      this.commitDeadLetterQueue = new sqs.Queue(this, 'CommitEventsDeadLetters', {
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        retentionPeriod: Duration.days(14),
      });
      this.commitQueue = new sqs.Queue(this, 'CommitEvents', {
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        retentionPeriod: Duration.days(14),
        visibilityTimeout: Duration.minutes(5),
        deadLetterQueue: { queue: this.commitDeadLetterQueue, maxReceiveCount: 5 },
      });
      this.commitRule = new events.Rule(this, 'CommitCreated', {
        description: `catalog-sync ${this.cursorName}: a commit manifest was written under ${this.prefix}commits/`,
        eventPattern: {
          source: ['aws.s3'],
          detailType: ['Object Created'],
          detail: {
            bucket: { name: [this.bucket.bucketName] },
            object: { key: events.Match.prefix(`${this.prefix}commits/`) },
          },
        },
        targets: [new targets.SqsQueue(this.commitQueue, { deadLetterQueue: this.commitDeadLetterQueue })],
      });
    }
  }

  /** A metric of this sync's EMF output (namespace `CatalogSync`, dimension `service`). */
  metric(metricName: string, props: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: DEFAULT_METRICS_NAMESPACE,
      metricName,
      dimensionsMap: { service: this.serviceName },
      ...props,
    });
  }

  /**
   * Lets an operator (the CLI's `status` and `runs` with `--cursor-table`) read this sync's cursor and run log:
   * `GetItem` and `Query` on its own items (and its dependencies' cursors), nothing else.
   */
  grantStatusRead(grantee: iam.IGrantable): iam.Grant {
    return iam.Grant.addToPrincipal({
      grantee,
      actions: ['dynamodb:GetItem', 'dynamodb:Query'],
      resourceArns: [this.table.tableArn],
      conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': this.readableKeys } },
    });
  }

  /** Exactly the calls the handler makes (lambda/stores/dynamo-store.ts, s3-store.ts), on exactly its items. */
  private grantFunction(role: iam.Role): void {
    // The logs of this function only (no CreateLogGroup: the group exists).
    this.logGroup.grantWrite(role);
    // Its own cursor and its dependencies' (GetItem with ConsistentRead).
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'ReadCursors',
        actions: ['dynamodb:GetItem'],
        resources: [this.table.tableArn],
        conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [...this.readableKeys] } },
      }),
    );
    // Moves its own cursor (conditional UpdateItem) and appends to its own run log (PutItem). The Lambda never
    // queries the run log (only the CLI's `runs` does: see grantStatusRead).
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'WriteOwnCursorAndRunLog',
        actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
        resources: [this.table.tableArn],
        conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [this.cursorName] } },
      }),
    );
    // Leaves, manifests and quarantine records, under its prefix. No reads, no deletes, no ACLs.
    const objects = this.bucket.arnForObjects(`${this.prefix}*`);
    role.addToPrincipalPolicy(new iam.PolicyStatement({ sid: 'PutSnapshots', actions: ['s3:PutObject'], resources: [objects] }));
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${nagResource(Stack.of(this).resolve(objects))}]`,
      reason: `Every object this sync writes is named by a package and a commit, unknown in advance: PutObject (only) on keys under its own prefix "${this.prefix}" of the snapshot bucket, which no other sync writes.`,
    });
    // The private feed's credentials: GetSecretValue on that one secret (and kms:Decrypt of its customer key).
    if (this.sourceSecret) {
      const secretArn = grantSourceSecretRead(role, this.sourceSecret);
      if (secretArn.endsWith('-??????')) {
        Validations.of(role).acknowledge({
          id: `AwsSolutions-IAM5[Resource::${nagResource(Stack.of(this).resolve(secretArn))}]`,
          reason:
            'The source secret was given by name or partial ARN: "-??????" matches exactly the six characters Secrets Manager appends to that name (as AWS advises), GetSecretValue only. Give its complete ARN to drop the wildcard.',
        });
      }
    }
  }

  private createTable(): dynamodb.Table {
    return new dynamodb.Table(this, 'Table', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: 'expiresAt',
      // Encrypted at rest with the AWS owned key (the default): no KMS permission nor cost for the function.
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }

  private createBucket(props: CatalogSyncProps): { bucket: s3.Bucket; logs?: s3.IBucket } {
    let logsBucket = props.accessLogsBucket;
    if (!logsBucket) {
      const created = new s3.Bucket(this, 'AccessLogs', {
        blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
        // Server access logs can only be delivered to SSE-S3 buckets.
        encryption: s3.BucketEncryption.S3_MANAGED,
        enforceSSL: true,
        minimumTLSVersion: 1.2,
        objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
        lifecycleRules: [{ expiration: props.accessLogsRetention ?? Duration.days(90) }],
        removalPolicy: RemovalPolicy.RETAIN,
      });
      // No AwsSolutions-S1 finding here: cdk-nag recognises an access-log destination bucket.
      logsBucket = created;
    }
    const bucket = new s3.Bucket(this, 'Snapshots', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      versioned: true,
      serverAccessLogsBucket: logsBucket,
      serverAccessLogsPrefix: 'snapshots/',
      lifecycleRules: [
        { noncurrentVersionExpiration: props.noncurrentVersionRetention ?? Duration.days(30) },
        { abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // Object events to EventBridge, set on the bucket itself: `eventBridgeEnabled` would add a custom
    // resource (a Lambda with s3:PutBucketNotification on *) to do what CloudFormation does natively.
    (bucket.node.defaultChild as s3.CfnBucket).notificationConfiguration = {
      eventBridgeConfiguration: { eventBridgeEnabled: true },
    };
    return { bucket, logs: logsBucket };
  }

  /** One sync per cursor name per table, and no two syncs writing under overlapping prefixes of one bucket. */
  private register(): void {
    const cursors = syncsByTable.get(this.table) ?? new Map<string, string>();
    syncsByTable.set(this.table, cursors);
    const other = cursors.get(this.cursorName);
    if (other) throw new CatalogSyncPropsError(`${this.node.path}: cursor ${JSON.stringify(this.cursorName)} is already followed by ${other} in the same table: give each sync its own cursorName`);
    cursors.set(this.cursorName, this.node.path);

    const prefixes = syncsByBucket.get(this.bucket) ?? [];
    syncsByBucket.set(this.bucket, prefixes);
    const clash = prefixes.find((p) => p.prefix.startsWith(this.prefix) || this.prefix.startsWith(p.prefix));
    if (clash) {
      throw new CatalogSyncPropsError(
        `${this.node.path}: prefix ${JSON.stringify(this.prefix)} overlaps prefix ${JSON.stringify(clash.prefix)} of ${clash.path} in the same bucket: ` +
          'give each sync sharing a bucket its own prefix, none the start of another (e.g. "nuget/" and "mirror/"), or give it its own bucket',
      );
    }
    prefixes.push({ prefix: this.prefix, path: this.node.path });
  }

  private validate(
    environment: Record<string, string>,
    o: { rate: Duration; timeout: Duration; maxEventAge: Duration; runtime: lambda.Runtime; props: CatalogSyncProps },
  ): void {
    const fail = (message: string): never => {
      throw new CatalogSyncPropsError(`${this.node.path}: ${message}`);
    };
    const credentials = embeddedCredentialsProblem(environment.CATALOG_SOURCE ?? '');
    if (credentials) fail(credentials);
    const source = environment.CATALOG_SOURCE ?? '';
    if (o.props.sourceSecret !== undefined && !Token.isUnresolved(source) && URL.canParse(source) && new URL(source).protocol !== 'https:') {
      fail(`sourceSecret: the credentials are sent over https only, and source (CATALOG_SOURCE) ${JSON.stringify(redactUrl(source))} is not https`);
    }
    if (o.props.sourceSecretKeyArn !== undefined && typeof o.props.sourceSecret !== 'string') {
      fail(
        o.props.sourceSecret === undefined
          ? 'sourceSecretKeyArn is the key of sourceSecret: give sourceSecret too'
          : 'sourceSecretKeyArn: the ISecret given as sourceSecret brings its own encryptionKey (Secret.fromSecretAttributes)',
      );
    }
    // Settings given as tokens (e.g. CloudFormation parameters) are checked by the function at start instead.
    if (!Object.values(environment).some((value) => Token.isUnresolved(value))) {
      try {
        parseSettings(environment);
      } catch (error) {
        if (error instanceof SettingsError) fail(error.message);
        throw error;
      }
      if (IAM_SPECIAL.test(this.prefix)) fail(`prefix ${JSON.stringify(this.prefix)} must not hold *, ? or $ (IAM wildcards and variables)`);
      const days = Number(environment.RUN_LOG_DAYS);
      if (!Number.isInteger(days) || days < 1) fail(`RUN_LOG_DAYS: runLogDays must be a whole number of days, at least 1 (got ${environment.RUN_LOG_DAYS})`);
    }
    const rateSeconds = o.rate.toSeconds();
    if (rateSeconds < 60 || rateSeconds % 60 !== 0) fail(`schedule must be whole minutes, at least 1 (got ${o.rate.toHumanString()})`);
    if (o.timeout.toSeconds() > rateSeconds) {
      fail(`schedule (${o.rate.toHumanString()}) must be at least the timeout (${o.timeout.toHumanString()}), so runs do not pile up`);
    }
    if (o.timeout.toSeconds() < 30 || o.timeout.toSeconds() > 900) fail(`timeout must be from 30 seconds to 15 minutes (got ${o.timeout.toHumanString()})`);
    const age = o.maxEventAge.toSeconds();
    if (age < 60 || age > Math.min(rateSeconds, 6 * 3600)) {
      fail(`maxEventAge must be from 1 minute to the schedule (${o.rate.toHumanString()}) and at most 6 hours (got ${o.maxEventAge.toHumanString()})`);
    }
    const major = Number(/^nodejs(\d+)/.exec(o.runtime.name)?.[1] ?? NaN);
    if (!(major >= 22)) fail(`runtime must be Node.js 22 or newer (got ${o.runtime.name})`);
    const memory = o.props.memorySize;
    if (memory !== undefined && (!Number.isInteger(memory) || memory < 128 || memory > 10_240)) fail(`memorySize must be 128 to 10240 MB (got ${memory})`);
    for (const [name, value] of [
      ['lagAlarmPeriods', o.props.lagAlarmPeriods],
      ['missedRunPeriods', o.props.missedRunPeriods],
      ['reservedConcurrency', o.props.reservedConcurrency],
    ] as const) {
      if (value !== undefined && (!Number.isInteger(value) || value < 1)) fail(`${name} must be a whole number, at least 1 (got ${value})`);
    }
  }
}

/**
 * The on-failure destination, granting the function's role `sqs:SendMessage` only (the stock `SqsDestination`
 * also grants `GetQueueAttributes` and `GetQueueUrl`, which Lambda does not use to deliver).
 */
class SendMessageOnly implements lambda.IDestination {
  constructor(private readonly queue: sqs.IQueue) {}

  bind(_scope: Construct, fn: lambda.IFunction): lambda.DestinationConfig {
    fn.addToRolePolicy(new iam.PolicyStatement({ sid: 'SendFailedRuns', actions: ['sqs:SendMessage'], resources: [this.queue.queueArn] }));
    return { destination: this.queue.queueArn };
  }
}

/** The newest Node.js runtime this aws-cdk-lib knows (what cdk-nag's AwsSolutions-L1 asks for). */
function latestNodeRuntime(): lambda.Runtime {
  const major = (runtime: lambda.Runtime) => Number(/^nodejs(\d+)\.x$/.exec(runtime.name)?.[1] ?? 0);
  return lambda.Runtime.ALL.filter((runtime) => major(runtime) > 0).reduce((a, b) => (major(b) > major(a) ? b : a));
}

/**
 * A resolved ARN written the way cdk-nag names it in an AwsSolutions-IAM5 finding (its `flattenCfnReference`):
 * `{"Fn::GetAtt": ["Bucket", "Arn"]}` + `/prefix*` → `<Bucket.Arn>/prefix*`. The acknowledgement must name the
 * finding exactly; the cdk-nag test checks that every acknowledgement answers a finding.
 */
function nagResource(node: unknown): string {
  if (node === undefined) return '';
  if (typeof node === 'string') return node.replace(/\$\{/g, '<').replace(/\}/g, '>');
  const o = node as Record<string, unknown>;
  if (Array.isArray(o['Fn::Join'])) {
    const [delimiter, items] = o['Fn::Join'] as [string, unknown[]];
    return items.map(nagResource).join(delimiter);
  }
  if (o['Fn::Sub'] !== undefined) return nagResource(o['Fn::Sub']);
  if (Array.isArray(o['Fn::GetAtt'])) {
    const [resource, attribute] = o['Fn::GetAtt'] as [unknown, unknown];
    return `<${nagResource(resource)}.${nagResource(attribute)}>`;
  }
  if (o['Fn::ImportValue'] !== undefined) return nagResource(o['Fn::ImportValue']);
  if (o.Ref !== undefined) return `<${nagResource(o.Ref)}>`;
  return JSON.stringify(node);
}
