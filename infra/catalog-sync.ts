/**
 * `CatalogSync`: one follower of a NuGet V3 catalog, as it should run in production. Put it in your own CDK
 * app, or deploy `infra/app.ts` as it is (configured from `cdk.json` context).
 *
 * What it builds (see docs/deploy.md for the picture):
 * - the cursor table (`pk`/`sk`, on-demand, point-in-time recovery, TTL on `expiresAt`, retained), unless `table` is given;
 * - the snapshot bucket (no public access, TLS only, SSE-S3, versioned, retained, server access logs,
 *   object events to EventBridge), unless `bucket` is given;
 * - the function (Node.js 22, arm64, ESM bundle made by the local esbuild) with exactly the permissions the
 *   code uses: DynamoDB item actions on its own cursor's items, `s3:PutObject` under its own prefix, `s3:GetObject`
 *   of its `filter.json` and `watermark.json`, `s3:ListBucket` (a missing key then answers 404, not 403);
 * - the schedule (EventBridge rule, every 5 minutes), no retries (the next tick is the retry), failures to a DLQ;
 * - four alarms (errors, dead letters, cursor lag, no successful run), optionally to an SNS topic;
 * - the reference consumer path: `commits/` object-created events into an SQS queue with its own DLQ, and an
 *   alarm on that DLQ (to the same topic);
 * - a CloudWatch dashboard (lag, leaves/s, errors, duration, DLQ depths, alarms), unless `dashboard` is false;
 * - stack outputs naming the table, bucket, prefix, function, log group, queues and dashboard, unless `outputs` is false;
 * - with `view`, `feed`, `viewRebuild`: the latest view, the private feed, the view's rebuild on Step Functions.
 *
 * Two syncs may share one table (a dependency is a cursor item of the same table) and one bucket (each under its
 * own prefix): pass the first one's `table` and `bucket` to the second.
 */
import { Token, type Duration } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct, type IConstruct } from 'constructs';
import {
  DEFAULT_CONCURRENCY,
  DEFAULT_CURSOR_NAME,
  DEFAULT_MAX_COMMITS,
  DEFAULT_MAX_LEAVES,
  DEFAULT_METRICS_NAMESPACE,
  DEFAULT_RUN_LOG_DAYS,
  DEFAULT_SOURCE,
  MIN_TIMESTAMP,
  parseSettings,
  redactUrl,
  SettingsError,
  SOURCE_SECRET_ENV,
} from '../lambda/contract/index.js';
import { CatalogSyncPropsError, type CatalogSyncProps } from './catalog-sync-props.js';
import { CommitEvents } from './constructs/commit-events.js';
import { SnapshotStorage } from './constructs/snapshot-storage.js';
import { SyncAlarms, syncMetric } from './constructs/sync-alarms.js';
import { SyncDashboard } from './constructs/sync-dashboard.js';
import { SyncFunction } from './constructs/sync-function.js';
import { addSyncOutputs } from './constructs/sync-outputs.js';
import type { CatalogConsumer } from './constructs/catalog-consumer.js';
import { addLatestView } from './constructs/latest-view.js';
import { addFeed, feedNeedsView, type SyncFeed } from './constructs/feed.js';
import { addViewRebuild, type ViewRebuild } from './constructs/view-rebuild-wiring.js';
import { DEFAULT_LAG_THRESHOLD, DEFAULT_MAX_EVENT_AGE, DEFAULT_SCHEDULE, DEFAULT_TIMEOUT } from './defaults.js';
import { embeddedCredentialsProblem, sourceSecretOf } from './source-secret.js';

/** Wildcards and policy variables in IAM resource ARNs: a prefix holding one could not be granted exactly. */
const IAM_SPECIAL = /[*?$]/;

// Syncs seen per table and per bucket in this app, to refuse two syncs on one cursor or overlapping prefixes.
const syncsByTable = new WeakMap<IConstruct, Map<string, string>>();
const syncsByBucket = new WeakMap<IConstruct, Array<{ prefix: string; path: string }>>();

/**
 * One NuGet catalog follower: schedule → function → table + bucket, with alarms and a consumer queue. It checks its
 * props, builds the function's settings, and composes its resource groups (constructs/) in its own scope.
 */
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
  /** The engine's settings of this sync (lambda/contract/settings.ts), as its function's environment holds them. */
  readonly settings: Readonly<Record<string, string>>;
  /** The function fails: any error in a period. */
  readonly errorsAlarm: cloudwatch.Alarm;
  /** The dead-letter queue holds a message. */
  readonly deadLetterAlarm: cloudwatch.Alarm;
  /** The cursor lags the catalog head by more than the threshold. */
  readonly lagAlarm: cloudwatch.Alarm;
  /** No run succeeded in `missedRunPeriods` periods. */
  readonly missedRunAlarm: cloudwatch.Alarm;
  /** The commit-events dead-letter queue holds a message, when `commitEvents` is on. */
  readonly commitDeadLetterAlarm?: cloudwatch.Alarm;
  /** The sync's CloudWatch dashboard, unless `dashboard` is false. Add a backfill's row with `addBackfill`. */
  readonly dashboard?: SyncDashboard;
  /** The latest view's consumer (`view: true`), or undefined. */
  readonly view?: CatalogConsumer;
  /** The private feed's parts (`feed`): its CloudFront distribution. */
  readonly feed?: SyncFeed;
  /** The latest view's rebuild on Step Functions (`viewRebuild`), or undefined. */
  readonly viewRebuild?: ViewRebuild;
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

    // The engine's settings (lambda/contract/settings.ts), checked at synth time by the engine's own parser.
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
      // Only when given: an unfiltered sync's template stays as it was.
      ...(props.includeIds?.length ? { INCLUDE_IDS: props.includeIds.join(',') } : {}),
      ...(props.excludeIds?.length ? { EXCLUDE_IDS: props.excludeIds.join(',') } : {}),
    };
    this.validate(settings, { rate, timeout, maxEventAge, runtime, props });
    this.settings = settings;
    if (props.sourceSecret !== undefined)
      this.sourceSecret = sourceSecretOf(this, 'SourceSecret', props.sourceSecret, props.sourceSecretKeyArn);

    // --- state: table and bucket -----------------------------------------------------------------------
    const storage = new SnapshotStorage(this, props);
    this.table = storage.table;
    this.bucket = storage.bucket;
    if (storage.accessLogsBucket) this.accessLogsBucket = storage.accessLogsBucket;
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

    // --- the function and its schedule -----------------------------------------------------------------
    this.readableKeys = [this.cursorName, ...dependsOn];
    const run = new SyncFunction(this, {
      cursorName: this.cursorName,
      prefix: this.prefix,
      readableKeys: this.readableKeys,
      table: this.table,
      bucket: this.bucket,
      ...(this.sourceSecret ? { sourceSecret: this.sourceSecret } : {}),
      environment,
      // ListFunctions shows the description to anyone allowed to list functions: no query values in it.
      description: `catalog-sync: cursor ${this.cursorName} of ${redactUrl(CATALOG_SOURCE)}`,
      schedule: rate,
      enabled,
      timeout,
      maxEventAge,
      runtime,
      ...(props.memorySize === undefined ? {} : { memorySize: props.memorySize }),
      ...(props.reservedConcurrency === undefined ? {} : { reservedConcurrency: props.reservedConcurrency }),
      ...(props.logRetention === undefined ? {} : { logRetention: props.logRetention }),
    });
    this.function = run.function;
    this.logGroup = run.logGroup;
    this.deadLetterQueue = run.deadLetterQueue;
    this.scheduleRule = run.scheduleRule;

    // --- alarms ----------------------------------------------------------------------------------------
    const alarms = new SyncAlarms(this, {
      cursorName: this.cursorName,
      serviceName: this.serviceName,
      function: this.function,
      deadLetterQueue: this.deadLetterQueue,
      schedule: rate,
      enabled,
      ...(props.lagThreshold === undefined ? {} : { lagThreshold: props.lagThreshold }),
      ...(props.lagAlarmPeriods === undefined ? {} : { lagAlarmPeriods: props.lagAlarmPeriods }),
      ...(props.missedRunPeriods === undefined ? {} : { missedRunPeriods: props.missedRunPeriods }),
      ...(props.alarmTopic === undefined ? {} : { alarmTopic: props.alarmTopic }),
    });
    this.errorsAlarm = alarms.errorsAlarm;
    this.deadLetterAlarm = alarms.deadLetterAlarm;
    this.lagAlarm = alarms.lagAlarm;
    this.missedRunAlarm = alarms.missedRunAlarm;

    // --- the reference consumer path --------------------------------------------------------------------
    if (props.commitEvents ?? true) {
      const commits = new CommitEvents(this, {
        cursorName: this.cursorName,
        bucket: this.bucket,
        prefix: this.prefix,
        ...(props.alarmTopic === undefined ? {} : { alarmTopic: props.alarmTopic }),
      });
      this.commitQueue = commits.queue;
      this.commitDeadLetterQueue = commits.deadLetterQueue;
      this.commitRule = commits.rule;
      this.commitDeadLetterAlarm = commits.deadLetterAlarm;
    }

    // --- the dashboard -------------------------------------------------------------------------------------
    if (props.dashboard ?? true) {
      this.dashboard = new SyncDashboard(this, 'Dashboard', {
        cursorName: this.cursorName,
        serviceName: this.serviceName,
        function: this.function,
        deadLetterQueue: this.deadLetterQueue,
        ...(this.commitDeadLetterQueue ? { commitDeadLetterQueue: this.commitDeadLetterQueue } : {}),
        schedule: rate,
        timeout,
        lagThreshold: props.lagThreshold ?? DEFAULT_LAG_THRESHOLD,
        alarms: [
          this.errorsAlarm,
          this.deadLetterAlarm,
          this.lagAlarm,
          this.missedRunAlarm,
          ...(this.commitDeadLetterAlarm ? [this.commitDeadLetterAlarm] : []),
        ],
        ...(props.dashboardName === undefined ? {} : { dashboardName: props.dashboardName }),
      });
    }
    // --- the latest view (after the dashboard, which shows its lag) ----------------------------------------
    if (props.view === true || feedNeedsView(props)) this.view = addLatestView(this, props.alarmTopic);
    const outputPrefix = props.outputs === false ? undefined : (props.outputPrefix ?? id.replace(/[^A-Za-z0-9]/g, ''));
    if (props.feed) this.feed = addFeed(this, props.feed, outputPrefix, props.alarmTopic);
    const withView = { ...props, view: this.view !== undefined };
    if (props.viewRebuild) this.viewRebuild = addViewRebuild(this, withView, outputPrefix);
    // --- the stack outputs ---------------------------------------------------------------------------------
    if (outputPrefix !== undefined) {
      addSyncOutputs(this, outputPrefix, {
        cursorName: this.cursorName,
        tableName: this.table.tableName,
        bucketName: this.bucket.bucketName,
        prefix: this.prefix,
        functionName: this.function.functionName,
        logGroupName: this.logGroup.logGroupName,
        deadLetterQueueUrl: this.deadLetterQueue.queueUrl,
        ...(this.dashboard ? { dashboardName: this.dashboard.dashboard.dashboardName } : {}),
        ...(this.commitQueue
          ? { commitQueueUrl: this.commitQueue.queueUrl, commitQueueArn: this.commitQueue.queueArn }
          : {}),
      });
    }
  }

  /** A metric of this sync's EMF output (namespace `CatalogSync`, dimension `service`). */
  metric(metricName: string, props: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return syncMetric(this.serviceName, metricName, props);
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

  /** One sync per cursor name per table, and no two syncs writing under overlapping prefixes of one bucket. */
  private register(): void {
    const cursors = syncsByTable.get(this.table) ?? new Map<string, string>();
    syncsByTable.set(this.table, cursors);
    const other = cursors.get(this.cursorName);
    if (other)
      throw new CatalogSyncPropsError(
        `${this.node.path}: cursor ${JSON.stringify(this.cursorName)} is already followed by ${other} in the same table: give each sync its own cursorName`,
      );
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
    if (
      o.props.sourceSecret !== undefined &&
      !Token.isUnresolved(source) &&
      URL.canParse(source) &&
      new URL(source).protocol !== 'https:'
    ) {
      fail(
        `sourceSecret: the credentials are sent over https only, and source (CATALOG_SOURCE) ${JSON.stringify(redactUrl(source))} is not https`,
      );
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
      if (IAM_SPECIAL.test(this.prefix))
        fail(`prefix ${JSON.stringify(this.prefix)} must not hold *, ? or $ (IAM wildcards and variables)`);
      const days = Number(environment.RUN_LOG_DAYS);
      if (!Number.isInteger(days) || days < 1)
        fail(`RUN_LOG_DAYS: runLogDays must be a whole number of days, at least 1 (got ${environment.RUN_LOG_DAYS})`);
    }
    const rateSeconds = o.rate.toSeconds();
    if (rateSeconds < 60 || rateSeconds % 60 !== 0)
      fail(`schedule must be whole minutes, at least 1 (got ${o.rate.toHumanString()})`);
    if (o.timeout.toSeconds() > rateSeconds) {
      fail(
        `schedule (${o.rate.toHumanString()}) must be at least the timeout (${o.timeout.toHumanString()}), so runs do not pile up`,
      );
    }
    if (o.timeout.toSeconds() < 30 || o.timeout.toSeconds() > 900)
      fail(`timeout must be from 30 seconds to 15 minutes (got ${o.timeout.toHumanString()})`);
    const age = o.maxEventAge.toSeconds();
    if (age < 60 || age > Math.min(rateSeconds, 6 * 3600)) {
      fail(
        `maxEventAge must be from 1 minute to the schedule (${o.rate.toHumanString()}) and at most 6 hours (got ${o.maxEventAge.toHumanString()})`,
      );
    }
    const major = Number(/^nodejs(\d+)/.exec(o.runtime.name)?.[1] ?? NaN);
    if (!(major >= 22)) fail(`runtime must be Node.js 22 or newer (got ${o.runtime.name})`);
    const memory = o.props.memorySize;
    if (memory !== undefined && (!Number.isInteger(memory) || memory < 128 || memory > 10_240))
      fail(`memorySize must be 128 to 10240 MB (got ${memory})`);
    for (const [name, value] of [
      ['lagAlarmPeriods', o.props.lagAlarmPeriods],
      ['missedRunPeriods', o.props.missedRunPeriods],
      ['reservedConcurrency', o.props.reservedConcurrency],
    ] as const) {
      if (value !== undefined && (!Number.isInteger(value) || value < 1))
        fail(`${name} must be a whole number, at least 1 (got ${value})`);
    }
  }
}
