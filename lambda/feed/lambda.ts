/**
 * The private feed as a Lambda function (`import { feedHandler } from 'catalog-sync/feed/lambda'`): the built-in
 * consumer `feed` run by `batchConsumerHandler`, 64 commits at a time, never past the latest view (`view-latest` is
 * always among the consumers it depends on), and after each invocation's commits the packages whose retry is due. The
 * `CatalogConsumer` construct deploys it with the consumer's settings (`CONSUMER_NAME` = `feed`, `CURSOR_TABLE`,
 * `SNAPSHOT_BUCKET`, `SNAPSHOT_PREFIX`, …) and the feed's:
 *
 * - `FEED_BASE_URL` (required): the URL at which `{SNAPSHOT_PREFIX}feed/` is served (CloudFront's);
 * - `CATALOG_SOURCE` (default nuget.org's service index), whose `PackageBaseAddress/3.0.0` packages come from, or
 *   `PACKAGE_BASE_ADDRESS` itself; `SOURCE_SECRET_ARN` for a private source's credentials, `ALLOWED_ORIGINS`;
 * - `INCLUDE_IDS`, `EXCLUDE_IDS`: the packages the feed holds (the sync's filters);
 * - `FEED_CONCURRENCY` (packages made at once, default 16), `FEED_DOWNLOADS` (downloads at once, default 16), which
 *   hold together at most 160 MiB (`DEFAULT_DOWNLOAD_MEMORY`; 25 MiB of a large package: its parts in flight):
 *   a function of 512 MB has room for it.
 *
 * Each invocation, commits or none, failed or not, emits what the feed did besides the consumer's metrics (the same
 * EMF record: namespace `CatalogSync`, `service` = `catalog-sync-consumer-feed`): `FeedPackagesStored`,
 * `FeedBytesStored`, `FeedPackagesRemoved`, `FeedPackagesWaiting` and `FeedPackagesQuarantined` (`FEED_METRICS`,
 * feed-metrics.ts); the feed writer's `QuarantinedAlarm` watches the last.
 *
 * Its role needs, besides a consumer's: `s3:PutObject`, `s3:DeleteObject`, `s3:AbortMultipartUpload` on
 * `{prefix}feed/*` and `{prefix}feed-state/*` (`FEED_KEYS`), `s3:GetObject` there and on the mirror, `s3:ListBucket`
 * (the waiting packages; and a 404, not a 403, for a missing key).
 */
import type { Context } from 'aws-lambda';
import { HttpClient } from '../catalog/http-client.js';
import { batchConsumerHandler, type ConsumerRun } from '../consumer/lambda.js';
import { FEED_CONSUMER } from '../contract/feed.js';
import { parseSettings, SettingsError } from '../contract/index.js';
import { VIEW_CONSUMER } from '../contract/view.js';
import { consumerLambdaSettings } from '../runtime/lambda-settings.js';
import { sourceSecretId, sourceSecrets, withSourceCredentials } from '../runtime/source-secret.js';
import { awsClients, S3SnapshotStore } from '../stores/index.js';
import { zeroCounts, type FeedCounts } from './feed-context.js';
import { readAheadBatches } from './feed-consumer.js';
import { addFeedMetrics } from './feed-metrics.js';
import { DEFAULT_FEED_CONCURRENCY, DEFAULT_FEED_DOWNLOADS, Feed } from './feed.js';
import { S3FeedStorage } from './s3-feed-storage.js';

/** What one invocation did: the consumer's run and the feed's counts. */
export interface FeedRun extends ConsumerRun {
  readonly feed: FeedCounts;
}

/** The feed's environment on top of a consumer's: its name `feed` by default, `view-latest` always depended on. */
export function feedEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const dependsOn = new Set([VIEW_CONSUMER, ...(env.DEPENDS_ON ?? '').split(',').map((name) => name.trim())]);
  dependsOn.delete('');
  return { ...env, CONSUMER_NAME: env.CONSUMER_NAME?.trim() || FEED_CONSUMER, DEPENDS_ON: [...dependsOn].join(',') };
}

/** The feed consumer's handler, its clients and its feed opened on the first invocation from `env`. */
export function feedHandler(
  env: NodeJS.ProcessEnv = process.env,
): (event: unknown, context: Pick<Context, 'getRemainingTimeInMillis'>) => Promise<FeedRun> {
  const feedEnv = feedEnvironment(env);
  let opened: Promise<Feed> | undefined;
  const open = (): Promise<Feed> => {
    opened ??= openFeed(feedEnv).catch((error: unknown) => {
      opened = undefined;
      throw error;
    });
    return opened;
  };
  // The counts of the invocation under way, taken when it ends (Lambda runs one invocation at a time per container).
  let counts = zeroCounts();
  const consume = batchConsumerHandler(
    async (commits) => (await open()).applyBatch(commits),
    readAheadBatches(open),
    feedEnv,
    {
      builtIn: true,
      afterRun: async ({ run, context, metrics }) => {
        const feed = await open();
        try {
          // No package's writes outlive the invocation: runs read ahead for commits no batch took (the time budget
          // stopped the read) end first, those not begun yet dropped (the next invocation reads their commits again).
          feed.abandonReadAhead();
          await feed.idle();
          // Packages the source did not serve yet, tried again when due, commits or none (a schedule's wake-up).
          if (run !== undefined && context.getRemainingTimeInMillis() > 60_000) await feed.retryDue();
        } finally {
          counts = feed.takeCounts();
          addFeedMetrics(metrics, counts);
        }
      },
    },
  );
  return async (event, context) => {
    await open();
    const run = await consume(event, context);
    return { ...run, feed: counts };
  };
}

async function openFeed(env: NodeJS.ProcessEnv): Promise<Feed> {
  const consumer = consumerLambdaSettings(env);
  const secretId = sourceSecretId(env);
  const parsed = parseSettings(env);
  const settings =
    secretId === undefined ? parsed : withSourceCredentials(env, parsed, await sourceSecrets.read(secretId));
  const baseUrl = env.FEED_BASE_URL?.trim();
  if (!baseUrl) throw new SettingsError('FEED_BASE_URL', 'is required: the URL at which the feed/ folder is served');
  const whole = (name: string, fallback: number): number => {
    const text = env[name]?.trim();
    if (!text) return fallback;
    if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > 256)
      throw new SettingsError(name, `${JSON.stringify(text)} must be a whole number from 1 to 256`);
    return Number(text);
  };
  const downloads = whole('FEED_DOWNLOADS', DEFAULT_FEED_DOWNLOADS);
  const http = new HttpClient({ connections: downloads });
  for (const origin of settings.allowedOrigins) http.allowOrigin(origin);
  http.useCredentialsOf(settings.source);
  const packageBaseAddress = env.PACKAGE_BASE_ADDRESS?.trim();
  const { s3 } = awsClients(env, downloads + DEFAULT_FEED_CONCURRENCY);
  return Feed.open({
    storage: new S3FeedStorage(consumer.bucket, s3),
    mirror: {
      store: new S3SnapshotStore(consumer.bucket, s3),
      prefix: consumer.prefix,
      where: `s3://${consumer.bucket}/${consumer.prefix}`,
    },
    baseUrl,
    http,
    source: settings.source,
    downloads,
    concurrency: whole('FEED_CONCURRENCY', DEFAULT_FEED_CONCURRENCY),
    ...(packageBaseAddress ? { packageBaseAddress } : {}),
    ...(settings.idFilter === undefined ? {} : { idFilter: settings.idFilter }),
  });
}

/** The deployed handler. */
export const handler = feedHandler();
