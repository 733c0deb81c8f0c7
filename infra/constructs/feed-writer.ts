/**
 * The feed's writer on AWS: a {@link CatalogConsumer} named `feed` running the feed's handler
 * (lambda/feed/lambda.ts), after the latest view (`view-latest`, whose cursor it never passes). Besides a consumer's
 * reads (GetObject under the prefix: the manifests, the leaves, the view's `packages/`; its own and the view's cursor
 * items), it may write and delete under `{prefix}feed/` and `{prefix}feed-state/` only (`FEED_KEYS`), and abort its
 * own multipart uploads there (a package that is not the leaf's leaves no parts behind). The packages come from the
 * sync's source, with its credentials secret when it has one. Besides a consumer's alarms it has `QuarantinedAlarm`:
 * the function's `FeedPackagesQuarantined` (lambda/feed/lambda.ts) summed over 5 minutes at 1 or more, to the alarm
 * topic and on the dashboard.
 */
import { Duration, Stack, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import {
  FEED_CONSUMER,
  FEED_KEYS,
  FEED_METRICS,
  FEED_STATE_FOLDER,
  SOURCE_SECRET_ENV,
  VIEW_CONSUMER,
} from '../../lambda/contract/index.js';
import { CatalogSyncPropsError } from '../props-error.js';
import { CatalogConsumer } from './catalog-consumer.js';
import type { ConsumableSync } from './consumable-sync.js';
import { handlerCode } from './handler-entry.js';
import { grantBucketKey } from './mirror-grants.js';
import { nagResource } from './nag.js';
import { atLeastOnceAlarm, syncMetric } from './sync-alarms.js';

/** The feed writer's settings (`CatalogSyncFeedProps.writer`). */
export interface FeedWriterOptions {
  /**
   * The URL at which `{prefix}feed/` is served, which every document names (`FEED_BASE_URL`).
   * @default - the feed distribution's base URL (required when `distribution` is false)
   */
  readonly baseUrl?: string;
  /** Packages made at once in a batch (`FEED_CONCURRENCY`). @default 64 */
  readonly concurrency?: number;
  /** Downloads at once, at most 2 of them over 5 MiB (`FEED_DOWNLOADS`). @default 16 */
  readonly downloads?: number;
  /** Where the source serves packages (`PACKAGE_BASE_ADDRESS`). @default - the source's `PackageBaseAddress/3.0.0` */
  readonly packageBaseAddress?: string;
  /** Memory of the function, in MB: more memory is more CPU for SHA-512 and TLS, and more network. @default 1024 */
  readonly memorySize?: number;
  /** Time limit of one invocation (a 250 MB package from a slow source). @default Duration.minutes(15) */
  readonly timeout?: Duration;
  /** Consecutive 5-minute periods with failures before the stuck alarm fires. @default 3 */
  readonly stuckPeriods?: number;
}

/** What the writer takes of its `CatalogSync`: the engine settings its source and filters come from. */
export interface FeedWriterSync extends ConsumableSync {
  /** The sync's engine settings (`CATALOG_SOURCE`, `ALLOWED_ORIGINS`, `INCLUDE_IDS`, `EXCLUDE_IDS`). */
  readonly settings: Readonly<Record<string, string>>;
  readonly sourceSecret?: secretsmanager.ISecret;
}

const DEFAULT_WRITER_MEMORY = 1024;
const DEFAULT_WRITER_TIMEOUT = Duration.minutes(15);

/** The feed's writer: its consumer, and the alarm on the versions it quarantines. */
export interface FeedWriter {
  readonly writer: CatalogConsumer;
  /** `FeedPackagesQuarantined` >= 1 in 5 minutes (construct id `Writer/QuarantinedAlarm`). */
  readonly quarantinedAlarm: cloudwatch.Alarm;
}

/** Adds the feed's writer under `scope` (construct id `Writer`), writing documents for `baseUrl`. */
export function addFeedWriter(
  scope: Construct,
  sync: FeedWriterSync,
  options: FeedWriterOptions & { readonly baseUrl: string; readonly alarmTopic?: sns.ITopic },
): FeedWriter {
  for (const [name, value] of [
    ['concurrency', options.concurrency],
    ['downloads', options.downloads],
  ] as const)
    if (value !== undefined && (!Number.isInteger(value) || value < 1 || value > 256))
      throw new CatalogSyncPropsError(`feed.writer.${name} ${value} must be a whole number from 1 to 256`);
  const writer = new CatalogConsumer(scope, 'Writer', {
    sync,
    consumerName: FEED_CONSUMER,
    entry: handlerCode('feed/lambda').entry,
    dependsOn: [VIEW_CONSUMER],
    memorySize: options.memorySize ?? DEFAULT_WRITER_MEMORY,
    timeout: options.timeout ?? DEFAULT_WRITER_TIMEOUT,
    ...(options.stuckPeriods === undefined ? {} : { stuckPeriods: options.stuckPeriods }),
    ...(options.alarmTopic ? { alarmTopic: options.alarmTopic } : {}),
  });
  const fn = writer.function;
  const { CATALOG_SOURCE, ALLOWED_ORIGINS, INCLUDE_IDS, EXCLUDE_IDS } = sync.settings;
  const environment: Record<string, string | undefined> = {
    FEED_BASE_URL: options.baseUrl,
    CATALOG_SOURCE,
    ALLOWED_ORIGINS,
    INCLUDE_IDS,
    EXCLUDE_IDS,
    PACKAGE_BASE_ADDRESS: options.packageBaseAddress,
    FEED_CONCURRENCY: options.concurrency?.toString(),
    FEED_DOWNLOADS: options.downloads?.toString(),
    [SOURCE_SECRET_ENV]: sync.sourceSecret?.secretArn,
  };
  for (const [name, value] of Object.entries(environment)) if (value) fn.addEnvironment(name, value);
  sync.sourceSecret?.grantRead(fn);

  const objects = FEED_KEYS.map((keys) => sync.bucket.arnForObjects(`${sync.prefix}${keys}`));
  fn.addToRolePolicy(
    new iam.PolicyStatement({
      sid: 'WriteFeed',
      actions: ['s3:PutObject', 's3:DeleteObject', 's3:AbortMultipartUpload'],
      resources: objects,
    }),
  );
  for (const resource of objects)
    Validations.of(fn.role ?? fn).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${nagResource(Stack.of(sync).resolve(resource))}]`,
      reason: `The feed writes one object per package, version and document, ids unknown in advance: PutObject, DeleteObject and AbortMultipartUpload (only) under "${sync.prefix}feed/" and "${sync.prefix}feed-state/".`,
    });
  // Writes through the bucket's customer key too (the consumer's grant is Decrypt only).
  grantBucketKey(fn, sync.bucket, ['kms:GenerateDataKey']);
  const quarantinedAlarm = addQuarantinedAlarm(writer, sync, options.alarmTopic);
  sync.dashboard?.addFeedWriter(writer.serviceName, quarantinedAlarm);
  return { writer, quarantinedAlarm };
}

/**
 * The alarm on the function's own `FeedPackagesQuarantined` (the same namespace and `service` dimension as the
 * consumer's metrics: the function's `POWERTOOLS_METRICS_NAMESPACE` and `POWERTOOLS_SERVICE_NAME`).
 */
function addQuarantinedAlarm(writer: CatalogConsumer, sync: FeedWriterSync, alarmTopic?: sns.ITopic): cloudwatch.Alarm {
  const records = `s3://${sync.bucket.bucketName}/${sync.prefix}${FEED_STATE_FOLDER}quarantine/{lowerid}/{lowerversion}.json`;
  return atLeastOnceAlarm(
    writer,
    'QuarantinedAlarm',
    `catalog-sync feed writer: package versions were quarantined (${FEED_METRICS.quarantined} >= 1), never stored nor listed: ` +
      "the bytes the source served were not the leaf's packageHash/packageSize (tampering or corruption), the leaf had no usable hash or size, " +
      'the package was larger than the feed takes, or the source did not serve it for 24 h. ' +
      `Each has a record (reason, url, expected and actual size and hash) at ${records}; ` +
      '`catalog-sync verify --feed --bucket … --cursor-table …` lists them ("quarantined" lines: not drift, which --repair leaves as they are). ' +
      "Check the source's bytes at the record's url; the feed tries a version again only when the catalog gives it a new leaf.",
    syncMetric(writer.serviceName, FEED_METRICS.quarantined, {
      period: Duration.minutes(5),
      statistic: cloudwatch.Stats.SUM,
    }),
    alarmTopic,
  );
}
