/**
 * The feed's Lambda handler (`catalog-sync/feed/lambda`, what a `CatalogConsumer` runs) on S3 + DynamoDB Local: an
 * invocation brings the feed up to the latest view (never past it: `view-latest` is among the consumers it depends
 * on, whatever `DEPENDS_ON` says), and reports its counts; a missing `FEED_BASE_URL` is an error naming it. One
 * stopped by its time budget returns without making the packages of commits it read ahead for no batch, and the next
 * invocation makes them. Each invocation, commits or none, emits the feed's counts as metrics (`FeedPackagesStored`,
 * `FeedBytesStored`, `FeedPackagesRemoved`, `FeedPackagesWaiting`, `FeedPackagesQuarantined`) in its consumer's
 * EMF record, which the feed writer's quarantine alarm watches.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Feed } from '../../../lambda/feed/feed.js';
import { DEFAULT_FEED_BATCH } from '../../../lambda/feed/feed-consumer.js';
import { feedEnvironment, feedHandler } from '../../../lambda/feed/lambda.js';
import { safetyMarginMs } from '../../../lambda/runtime/deadline.js';
import { keepView, S3ViewDocuments } from '../../../lambda/view/index.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { FeedCatalog } from '../../../testkit/feed-kit.js';
import { FlatContainer } from '../../../testkit/flat-container.js';
import { SyncHarness } from '../../../testkit/sync-harness.js';
import { writeMirror } from '../../../testkit/view-mirror.js';
import { captureEmf, type Emf } from '../emf-kit.js';

let harness: SyncHarness;
let replica: CatalogReplica;
const saved = { ...process.env };
const built = new FeedCatalog();
const prefix = 'nuget/';
const context = { getRemainingTimeInMillis: () => 300_000 };
const scheduleEvent = { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} };
const FEED_METRIC_NAMES = [
  'FeedPackagesStored',
  'FeedBytesStored',
  'FeedPackagesRemoved',
  'FeedPackagesWaiting',
  'FeedPackagesQuarantined',
] as const;

/** The one EMF record of an invocation that holds the feed's metrics (the consumer's too), with its values. */
function feedMetricsOf(emf: readonly Emf[]): { record: Emf; values: Record<string, unknown> } {
  const records = emf.filter((record) => FEED_METRIC_NAMES.some((name) => name in record));
  expect(records).toHaveLength(1);
  const record = records[0]!;
  return { record, values: Object.fromEntries(FEED_METRIC_NAMES.map((name) => [name, record[name]])) };
}

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

  it("emits the feed's counts, 0s with no commit: bytes not the leaf's are FeedPackagesQuarantined, a withheld package FeedPackagesWaiting", async () => {
    const metered = new FeedCatalog();
    metered.commit([
      { id: 'Metric.Good', version: '1.0.0' },
      { id: 'Metric.Bad', version: '1.0.0' },
      { id: 'Metric.Late', version: '1.0.0' },
    ]);
    const source = await CatalogReplica.start({ catalog: metered.catalog });
    source.packages.corrupt('Metric.Bad', '1.0.0');
    source.packages.withhold('Metric.Late', '1.0.0');
    const meteredPrefix = 'metered/';
    const mirror = {
      store: harness.snapshots,
      prefix: meteredPrefix,
      where: `s3://${harness.bucket}/${meteredPrefix}`,
    };
    const view = { documents: new S3ViewDocuments(harness.bucket, harness.clients.s3), prefix: meteredPrefix };
    const handler = feedHandler({
      ...process.env,
      SNAPSHOT_PREFIX: meteredPrefix,
      CATALOG_SOURCE: source.serviceIndexUrl,
      FEED_BASE_URL: 'https://feed.example.test/',
    });
    try {
      await writeMirror(harness.snapshots, meteredPrefix, metered.catalog.commits);
      // The view has not moved: no commit, and still a datapoint of each.
      const idle = await captureEmf(() => handler(scheduleEvent, context));
      expect(idle.result).toMatchObject({ commits: 0 });
      expect(feedMetricsOf(idle.emf).values).toEqual({
        FeedPackagesStored: 0,
        FeedBytesStored: 0,
        FeedPackagesRemoved: 0,
        FeedPackagesWaiting: 0,
        FeedPackagesQuarantined: 0,
      });

      await keepView(view, { mirror, cursors: harness.store, lease: false });
      const made = await captureEmf(() => handler(scheduleEvent, context));
      expect(made.result).toMatchObject({ commits: 1, feed: { stored: 1, waiting: 1, quarantined: 1 } });
      const { record, values } = feedMetricsOf(made.emf);
      expect(values).toEqual({
        FeedPackagesStored: 1,
        FeedBytesStored: metered.latest('Metric.Good', '1.0.0').package!.bytes.length,
        FeedPackagesRemoved: 0,
        FeedPackagesWaiting: 1,
        FeedPackagesQuarantined: 1,
      });
      // What the construct's alarm watches: namespace CatalogSync, the one dimension service, the consumer's name.
      expect(record['service']).toBe('catalog-sync-consumer-feed');
      expect(record['ConsumerCommits']).toBe(1);
      const [directive] = record._aws.CloudWatchMetrics;
      expect(directive).toMatchObject({ Namespace: 'CatalogSync', Dimensions: [['service']] });
      const units = Object.fromEntries(directive!.Metrics.map((metric) => [metric.Name, metric.Unit]));
      expect(units).toMatchObject({
        FeedPackagesStored: 'Count',
        FeedBytesStored: 'Bytes',
        FeedPackagesRemoved: 'Count',
        FeedPackagesWaiting: 'Count',
        FeedPackagesQuarantined: 'Count',
      });
      expect(
        await harness.snapshots.getBytes(`${meteredPrefix}feed-state/quarantine/metric.bad/1.0.0.json`),
      ).toBeDefined();

      // A delete removes the stored package; the quarantined one is not counted again.
      const gone = metered.commit([{ id: 'Metric.Good', version: '1.0.0', delete: true }]);
      await writeMirror(harness.snapshots, meteredPrefix, [gone]);
      await keepView(view, { mirror, cursors: harness.store, lease: false });
      const removed = await captureEmf(() => handler(scheduleEvent, context));
      expect(feedMetricsOf(removed.emf).values).toMatchObject({
        FeedPackagesStored: 0,
        FeedPackagesRemoved: 1,
        FeedPackagesQuarantined: 0,
      });
    } finally {
      await source.stop();
    }
  });

  it('stopped by its time budget, returns without the packages of commits no batch took; the next invocation makes them', async () => {
    // One package; then a batch's worth of commits of a package the feed leaves out, behind which the read waits
    // while the first batch is made (its download held), having read the manifest of the last commit ahead (its three
    // packages started): the budget runs out then, and that commit goes to no batch.
    const stops = new FeedCatalog();
    stops.commit([{ id: 'Stop.First', version: '1.0.0' }]);
    for (let n = 1; n <= DEFAULT_FEED_BATCH; n++) stops.commit([{ id: 'Left.Out', version: `1.0.${n}` }]);
    const ids = ['Stop.Begun', 'Stop.Next', 'Stop.Queued'];
    stops.commit(ids.map((id) => ({ id, version: '1.0.0' })));
    const nupkg = (id: string): string => FlatContainer.packagePath(id, '1.0.0');
    const source = await CatalogReplica.start({ catalog: stops.catalog });
    const stopPrefix = 'stopped/';
    const mirror = { store: harness.snapshots, prefix: stopPrefix, where: `s3://${harness.bucket}/${stopPrefix}` };
    await writeMirror(harness.snapshots, stopPrefix, stops.catalog.commits);
    await keepView(
      { documents: new S3ViewDocuments(harness.bucket, harness.clients.s3), prefix: stopPrefix },
      { mirror, cursors: harness.store, lease: false },
    );
    // Two packages made at once, both places held by held downloads: Stop.First's (the first batch's) and Stop.Begun's
    // (read ahead); Stop.Next takes Stop.First's place when that batch ends, so Stop.Queued has not begun when the
    // read is over.
    const handler = feedHandler({
      ...process.env,
      SNAPSHOT_PREFIX: stopPrefix,
      CATALOG_SOURCE: source.serviceIndexUrl,
      FEED_BASE_URL: 'https://feed.example.test/',
      INCLUDE_IDS: 'Stop.*',
      FEED_CONCURRENCY: '2',
    });
    const first = source.hold(nupkg('Stop.First'));
    const begun = source.hold((path) => path === nupkg('Stop.Begun') || path === nupkg('Stop.Next'));
    // The time budget runs out when the test says: the face's timer (its remaining time less the margin) is caught,
    // and its callback called at that point instead of an hour later.
    const remaining = 3_600_000;
    const budgetMs = remaining - safetyMarginMs(remaining);
    const realSetTimeout = globalThis.setTimeout;
    let budgetOver: (() => void) | undefined;
    const timers = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((
      callback: (...args: unknown[]) => void,
      ms?: number,
      ...args: unknown[]
    ) => {
      if (ms === budgetMs) budgetOver = () => callback(...args);
      return realSetTimeout(callback, ms, ...args);
    }) as typeof setTimeout);
    // Stop.Begun and Stop.Next are let go once the face waits for the packages under way (its read is over): until
    // then they keep Stop.Queued from beginning.
    const realIdle = Feed.prototype.idle;
    const idle = vi.spyOn(Feed.prototype, 'idle').mockImplementation(function (this: Feed) {
      begun.release();
      return realIdle.call(this);
    });
    try {
      const stopping = handler(scheduleEvent, { getRemainingTimeInMillis: () => remaining });
      // Stop.Begun's download asked for: the last commit is read ahead, its other packages wait for a place.
      await begun.arrived;
      expect(budgetOver).toBeDefined();
      budgetOver?.();
      first.release();
      const run = await stopping;
      timers.mockRestore();
      idle.mockRestore();
      expect(run).toMatchObject({ stoppedBy: 'aborted', feed: { stored: 3, quarantined: 0 } });
      // The cursor is on the last commit a batch took, before the last commit.
      expect(run.commits).toBeLessThan(stops.catalog.commits.length);
      expect(run.cursorAfter).toBe(stops.catalog.commits[run.commits - 1]!.timestamp);
      expect(source.countRequests(nupkg('Stop.Queued'))).toBe(0);
      expect(await harness.snapshots.getBytes(`${stopPrefix}feed/flat/stop.queued/index.json`)).toBeUndefined();

      const rest = await handler(scheduleEvent, context);
      expect(rest).toMatchObject({
        stoppedBy: 'caught-up',
        commits: stops.catalog.commits.length - run.commits,
        feed: { stored: 1, quarantined: 0 },
      });
      for (const id of ['Stop.First', ...ids]) {
        expect(source.countRequests(nupkg(id))).toBe(1);
        const flat = await harness.snapshots.getBytes(`${stopPrefix}feed/flat/${id.toLowerCase()}/index.json`);
        expect(JSON.parse(flat!.toString('utf8'))).toEqual({ versions: ['1.0.0'] });
      }
    } finally {
      timers.mockRestore();
      idle.mockRestore();
      first.release();
      begun.release();
      await source.stop();
    }
  });
});
