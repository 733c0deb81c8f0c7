/**
 * The feed's Lambda handler (`catalog-sync/feed/lambda`, what a `CatalogConsumer` runs) on S3 + DynamoDB Local: an
 * invocation brings the feed up to the latest view (never past it: `view-latest` is among the consumers it depends
 * on, whatever `DEPENDS_ON` says), and reports its counts; a missing `FEED_BASE_URL` is an error naming it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedEnvironment, feedHandler } from '../../../lambda/feed/lambda.js';
import { keepView, S3ViewDocuments } from '../../../lambda/view/index.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { FeedCatalog } from '../../../testkit/feed-kit.js';
import { SyncHarness } from '../../../testkit/sync-harness.js';
import { writeMirror } from '../../../testkit/view-mirror.js';

let harness: SyncHarness;
let replica: CatalogReplica;
const saved = { ...process.env };
const built = new FeedCatalog();
const prefix = 'nuget/';
const context = { getRemainingTimeInMillis: () => 300_000 };
const scheduleEvent = { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} };

beforeAll(async () => {
  harness = await SyncHarness.create();
  Object.assign(process.env, harness.env());
  built.commit([
    { id: 'Lambda.One', version: '1.0.0' },
    {
      id: 'Lambda.Two',
      version: '1.0.0-beta',
      vulnerabilities: [{ advisoryUrl: 'https://example.com/a', severity: '1' }],
    },
  ]);
  built.commit([{ id: 'Lambda.One', version: '2.0.0' }]);
  replica = await CatalogReplica.start({ catalog: built.catalog });
});
afterAll(async () => {
  for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
  Object.assign(process.env, saved);
  await replica?.stop();
  harness.clients.s3.destroy();
  harness.clients.dynamo.destroy();
});

describe('feedHandler', () => {
  it('keeps the feed up to the latest view, never past it', async () => {
    const env = {
      ...process.env,
      SNAPSHOT_PREFIX: prefix,
      CATALOG_SOURCE: replica.serviceIndexUrl,
      FEED_BASE_URL: 'https://feed.example.test/',
    };
    expect(feedEnvironment({ DEPENDS_ON: 'other' })).toMatchObject({
      CONSUMER_NAME: 'feed',
      DEPENDS_ON: 'view-latest,other',
    });
    const handler = feedHandler(env);
    const mirror = { store: harness.snapshots, prefix, where: `s3://${harness.bucket}/${prefix}` };
    const view = { documents: new S3ViewDocuments(harness.bucket, harness.clients.s3), prefix };
    await writeMirror(harness.snapshots, prefix, built.catalog.commits);
    // The view has not moved: the feed reads nothing.
    expect(await handler(scheduleEvent, context)).toMatchObject({ consumer: 'feed', commits: 0, feed: { stored: 0 } });
    await keepView(view, { mirror, cursors: harness.store, lease: false });
    const run = await handler(scheduleEvent, context);
    expect(run).toMatchObject({
      consumer: 'feed',
      commits: 2,
      stoppedBy: 'caught-up',
      feed: { stored: 3, quarantined: 0 },
    });
    const flat = await harness.snapshots.getBytes(`${prefix}feed/flat/lambda.one/index.json`);
    expect(JSON.parse(flat!.toString('utf8'))).toEqual({ versions: ['1.0.0', '2.0.0'] });
    expect(await handler(scheduleEvent, context)).toMatchObject({ commits: 0, feed: { stored: 0 } });

    const { FEED_BASE_URL: _unset, ...withoutBase } = env;
    await expect(feedHandler(withoutBase)(scheduleEvent, context)).rejects.toThrow(/FEED_BASE_URL: is required/);
  });
});
