/**
 * What a {@link CatalogSync} is given: its props, every one documented with its default, and the error it
 * throws at synth when one cannot be deployed.
 */
import type { Duration } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { CatalogSyncFeedProps } from './constructs/feed.js';

export { CatalogSyncPropsError } from './props-error.js';

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
   * nowhere else, and read only `{prefix}filter.json` and `{prefix}watermark.json`. Syncs sharing a bucket need prefixes that do not overlap (end them with `/`). It may not hold
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
   * Most commits in one run (`MAX_COMMITS`). The function's time bounds a run; this is a guard.
   * @default 1000000 (the engine's default)
   */
  readonly maxCommits?: number;

  /**
   * Most leaves in one run (`MAX_LEAVES`): a guard on memory; the function's time bounds a run.
   * @default 1000000 (the engine's default)
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
   * Store only packages whose id matches one of these globs (`INCLUDE_IDS`; case-insensitive, `*` and `?`). Changing
   * the filter of a mirror with data is refused by the function until `catalog-sync run --refilter` accepts it once.
   * @default - every package
   */
  readonly includeIds?: readonly string[];

  /**
   * Never store packages whose id matches one of these globs (`EXCLUDE_IDS`).
   * @default - none excluded
   */
  readonly excludeIds?: readonly string[];

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
   * Whether to create this sync's CloudWatch dashboard: cursor lag, leaves per second, errors and failed runs,
   * duration, the dead-letter queues' depths, the alarms' states (and a backfill's executions, with
   * `dashboard.addBackfill`). A dashboard costs a few dollars a month beyond the free tier's three.
   * @default true
   */
  readonly dashboard?: boolean;

  /**
   * Whether to keep the latest view of every package (`{prefix}packages/{id}/index.json`, contract.md "The latest
   * view"): a `CatalogConsumer` named `view-latest` (the sync's `view`) that applies each commit up to the
   * watermark, with S3 conditional writes against stale writers.
   * @default false (true with a `feed` whose writer is on: the feed is written from the view)
   */
  readonly view?: boolean;

  /**
   * The mirror's private NuGet feed (`{prefix}feed/`, contract.md "The feed"): CloudFront in front of that prefix
   * only (`feed.distribution`, docs/deploy.md "The feed"), with its base URL as the output `FeedBaseUrl`, and its
   * writer, the consumer `feed` after the latest view (`feed.writer`).
   * @default - none
   */
  readonly feed?: CatalogSyncFeedProps;

  /**
   * Whether to deploy the latest view's rebuild on Step Functions (`ViewRebuild`, the sync's `viewRebuild`; needs
   * `view: true`): a state machine that rebuilds every package's index from the manifests in minutes, started with
   * `catalog-sync view --rebuild --state-machine ARN`. It costs nothing until started (docs/deploy.md).
   * @default false
   */
  readonly viewRebuild?: boolean;

  /**
   * Name of the dashboard (unique per account and region).
   * @default - generated by CloudFormation
   */
  readonly dashboardName?: string;

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

  /**
   * Whether to add stack outputs naming what a user looks up after a deploy: `CursorTable`, `SnapshotBucket`,
   * `SnapshotPrefix`, `CursorName`, `FunctionName`, `LogGroup`, `DeadLetterQueueUrl`, `DashboardName`,
   * `CommitQueueUrl` and `CommitQueueArn` (the last three when there is a dashboard and a commit queue).
   * @default true
   */
  readonly outputs?: boolean;

  /**
   * Prefix of the outputs' logical ids (`{outputPrefix}SnapshotBucket`): two syncs in one stack need different ones.
   * @default - the construct's id, letters and digits only (`Sync` gives `SyncSnapshotBucket`)
   */
  readonly outputPrefix?: string;
}
