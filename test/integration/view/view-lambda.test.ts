/**
 * The view's Lambda handler (`catalog-sync/view/lambda`, what `CatalogSync`'s `view: true` deploys) on S3 +
 * DynamoDB Local: a scheduled invocation brings the view to the watermark; it equals the catalog's view; a second
 * invocation after more commits applies just those. On a mirror whose filter history has a widening `--refilter`,
 * each invocation says the view is stale: `ViewStale` in its metrics, the change in its log (issue 32).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageIndexKey } from '../../../lambda/view/index.js';
import { viewHandler } from '../../../lambda/view/lambda.js';
import { generateCatalog } from '../../../testkit/catalog-generator.js';
import { mulberry32 } from '../../../testkit/prng.js';
import { SyncHarness } from '../../../testkit/sync-harness.js';
import { decorate, expectedView, writeMirror } from '../../../testkit/view-mirror.js';
import { captureEmf as capture, type Emf } from '../emf-kit.js';

let harness: SyncHarness;
const saved = { ...process.env };

beforeAll(async () => {
  harness = await SyncHarness.create();
  // The SDK reads its endpoints from the process's environment, as on Lambda.
  Object.assign(process.env, harness.env());
});
afterAll(() => {
  for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
  Object.assign(process.env, saved);
  harness.clients.s3.destroy();
  harness.clients.dynamo.destroy();
});

const scheduleEvent = { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} };
const context = { getRemainingTimeInMillis: () => 300_000 };

describe('viewHandler', () => {
  it('keeps the view up to the watermark, invocation after invocation', async () => {
    const catalog = generateCatalog({
      commits: 30,
      seed: 2424,
      leavesPerCommit: [1, 4],
      deleteRatio: 0.25,
      semver2Ratio: 0.3,
    });
    const decorations = decorate(catalog.commits, mulberry32(24), 0.3);
    const prefix = 'nuget/';
    const handler = viewHandler({ ...process.env, CONSUMER_NAME: 'view-latest', SNAPSHOT_PREFIX: prefix });
    await writeMirror(harness.snapshots, prefix, catalog.commits.slice(0, 18));
    const first = await capture(() => handler(scheduleEvent, context));
    expect(first.result).toMatchObject({ consumer: 'view-latest', commits: 18, stoppedBy: 'caught-up', lagSeconds: 0 });
    await writeMirror(harness.snapshots, prefix, catalog.commits.slice(18));
    const second = await capture(() => handler(scheduleEvent, context));
    expect(second.result).toMatchObject({ commits: 12, stoppedBy: 'caught-up' });
    for (const index of expectedView(prefix, catalog.commits, decorations).values()) {
      const key = packageIndexKey(prefix, (index as { id: string }).id);
      expect(JSON.parse((await harness.snapshots.getBytes(key))!.toString('utf8')), key).toEqual(index);
    }
  });

  it('emits ViewStale: the widening id filter changes the view lacks leaves for (0 without any)', async () => {
    const catalog = generateCatalog({ commits: 6, seed: 2525, leavesPerCommit: [1, 2] });
    const prefix = 'stale/';
    const handler = viewHandler({ ...process.env, CONSUMER_NAME: 'view-latest', SNAPSHOT_PREFIX: prefix });
    await writeMirror(harness.snapshots, prefix, catalog.commits.slice(0, 3));
    const staleOf = (emf: Emf[]) => emf.map((record) => record['ViewStale']).filter((value) => value !== undefined);
    expect(staleOf((await capture(() => handler(scheduleEvent, context))).emf)).toEqual([0]);
    // `run --refilter` from include a* to a*, c* after the third commit; the follower goes on.
    const until = catalog.commits[2]!.timestamp;
    await harness.snapshots.putJson(`${prefix}filter.json`, {
      include: ['a*', 'c*'],
      exclude: [],
      history: [{ include: ['a*'], exclude: [], until }],
    });
    await writeMirror(harness.snapshots, prefix, catalog.commits.slice(3));
    const stale = await capture(() => handler(scheduleEvent, context));
    expect(stale.result).toMatchObject({ commits: 3, stoppedBy: 'caught-up' });
    expect(staleOf(stale.emf)).toEqual([1]);
    expect(JSON.parse((await harness.snapshots.getBytes(`${prefix}view.json`))!.toString('utf8'))).toMatchObject({
      historySeen: 1,
      stale: [{ change: 0, previous: { include: ['a*'] }, next: { include: ['a*', 'c*'] } }],
    });
  });
});
