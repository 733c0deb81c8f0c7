/**
 * The view's distributed rebuild engine, item by item as a Step Functions map or the CLI's workers run it (issue 32):
 * one rebuild at a time per mirror (a second planner is told who holds it; its own holder and a holder known gone
 * take it again; other settings are refused naming both), the cursor moved only by a finish that finds every range
 * and shard done (and again: the same summary), a deadline that stops a batch, abandon; and on S3 + DynamoDB Local
 * (the Lambdas' stores: records in the bucket, the plan in the cursor table), upkeep's Lambda waiting while a
 * rebuild holds the view, then going on from its bound, with the same bytes as the catalog's view.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumerKey } from '../../../lambda/consumer/consumer-cursors.js';
import { prefix as kuuidPrefix } from '../../../lambda/ids/kuuid.js';
import { LocalStore } from '../../../lambda/stores/local-store.js';
import {
  abandonRebuild,
  awsViewStores,
  finishRebuild,
  FolderRecordStore,
  LocalViewDocuments,
  packageIndexKey,
  planRebuild,
  rebuildRunning,
  runRebuildBatch,
  ViewRebuildIncompleteError,
  ViewRebuildMismatchError,
  type PlannedRebuild,
  type RebuildStores,
} from '../../../lambda/view/index.js';
import { viewHandler } from '../../../lambda/view/lambda.js';
import { generateCatalog } from '../../../testkit/catalog-generator.js';
import { mulberry32 } from '../../../testkit/prng.js';
import { SyncHarness } from '../../../testkit/sync-harness.js';
import { decorate, expectedView, writeMirror } from '../../../testkit/view-mirror.js';

function planOf(planned: PlannedRebuild): Extract<PlannedRebuild, { running: false }> {
  if (planned.running) throw new Error(`expected a plan, got one running: ${JSON.stringify(planned)}`);
  return planned;
}

describe('view rebuild engine (folder)', () => {
  let dir: string;
  let stores: RebuildStores;
  const catalog = generateCatalog({ commits: 20, seed: 32, leavesPerCommit: [1, 4], deleteRatio: 0.2 });
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'catalog-sync-view-engine-'));
    const store = new LocalStore(dir);
    await writeMirror(store, '', catalog.commits);
    stores = {
      mirror: { store, prefix: '', where: dir },
      cursors: store,
      plans: store,
      records: new FolderRecordStore(join(dir, 'records')),
      documents: new LocalViewDocuments(dir, store),
    };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('one rebuild at a time: a second holder is told who holds it; its own holder, or one gone, takes it again; other shards are refused', async () => {
    const first = planOf(await planRebuild(stores, { holder: 'a', shards: 3, rangeManifests: 5 }));
    expect(first).toMatchObject({ resumed: false, plan: { ranges: 4, shards: 3, manifests: 20, leaseHolder: 'a' } });
    expect(first.ranges.map((range) => range.manifests)).toEqual([5, 5, 5, 5]);
    expect(first.shards.map((shard) => shard.n)).toEqual([4, 5, 6]);
    const second = await planRebuild(stores, { holder: 'b' });
    expect(second).toMatchObject({ running: true, rebuildId: first.plan.backfillId, holder: 'a', planning: false });
    expect(await rebuildRunning(stores.plans, first.plan.cursorName)).toMatchObject({ holder: 'a' });
    const again = planOf(await planRebuild(stores, { holder: 'a' }));
    expect(again).toMatchObject({ resumed: true, plan: { backfillId: first.plan.backfillId } });
    const takenOver = planOf(await planRebuild(stores, { holder: 'b', holderGone: (holder) => holder === 'a' }));
    expect(takenOver).toMatchObject({ resumed: true, plan: { leaseHolder: 'b' } });
    const refused = planRebuild(stores, { holder: 'b', shards: 4 });
    await expect(refused).rejects.toBeInstanceOf(ViewRebuildMismatchError);
    await expect(refused).rejects.toThrow(/unfinished with shards 3, but shards 4 was asked/);
    expect(await abandonRebuild(stores)).toBe(first.plan.backfillId);
    expect(await stores.records.getItems(first.plan.backfillId, 'ranges')).toBeUndefined();
    expect(await rebuildRunning(stores.plans, first.plan.cursorName)).toBeUndefined();
  });

  it('moves the cursor only when every range and shard is done; a finish asked again gives the same summary', async () => {
    const { plan, ranges, shards } = planOf(await planRebuild(stores, { holder: 'c', shards: 2, rangeManifests: 7 }));
    const cursor = consumerKey(stores.mirror, 'view-latest');
    const ref = { rebuildId: plan.backfillId };
    // A deadline already passed: the batch stops before its first item, not done.
    expect(await runRebuildBatch(stores, { ...ref, items: ranges }, { deadline: Date.now() - 1 })).toMatchObject({
      done: false,
      items: [{ n: 0, done: false }],
    });
    expect(await runRebuildBatch(stores, { ...ref, items: ranges }, { holder: 'c' })).toMatchObject({ done: true });
    expect(await runRebuildBatch(stores, { ...ref, items: shards.slice(0, 1) })).toMatchObject({ done: true });
    const early = finishRebuild(stores, ref);
    await expect(early).rejects.toBeInstanceOf(ViewRebuildIncompleteError);
    await expect(early).rejects.toThrow(`view rebuild ${plan.backfillId}: 1 item(s) not done (${shards[1]!.n})`);
    expect(await stores.cursors.read(cursor)).toBeUndefined();
    // Done items are skipped when a batch comes again.
    const rerun = await runRebuildBatch(stores, { ...ref, items: [...shards].reverse() });
    expect(rerun.items.map((item) => item.skipped)).toEqual([false, true]);
    const summary = await finishRebuild(stores, ref);
    expect(summary).toMatchObject({ commits: 20, cursorMoved: true, ranges: 3, shards: 2 });
    expect(summary.packages).toBe(expectedView('', catalog.commits, new Map()).size);
    expect((await stores.cursors.read(cursor))?.commitId).toBe(plan.boundCommitId);
    expect(await finishRebuild(stores, ref)).toEqual(summary);
    expect(await stores.records.getItems(plan.backfillId, 'shards')).toBeUndefined();
  });

  it('a rebuild planned in the same second as the one before it is the newest plan: upkeep sees it running', async () => {
    await sameSecondPlans(stores);
  });
});

/**
 * kuuid ids of one second are random after their prefix: a plan planned in the same second as the finished one before
 * it gets the id right after that one's, rather than one that sorts before it (and would be passed over as "newest").
 */
async function sameSecondPlans(stores: RebuildStores): Promise<void> {
  const second = kuuidPrefix();
  const late = `${second}4gfFC3${'000000'.repeat(2)}4gfFC2`;
  const early = `${second}${'000000'.repeat(3)}000001`;
  const first = planOf(await planRebuild(stores, { holder: 'd', shards: 1, rebuildId: late }));
  await runRebuildBatch(stores, { rebuildId: late, items: [...first.ranges, ...first.shards] });
  await finishRebuild(stores, { rebuildId: late });
  const next = planOf(await planRebuild(stores, { holder: 'e', shards: 1, rebuildId: early }));
  expect(next.plan.backfillId).toBe(`${second}4gfFC3${'000000'.repeat(2)}4gfFC3`);
  expect(await stores.plans.newestPlan(next.plan.cursorName)).toMatchObject({ backfillId: next.plan.backfillId });
  expect(await rebuildRunning(stores.plans, next.plan.cursorName)).toMatchObject({
    rebuildId: next.plan.backfillId,
    holder: 'e',
  });
  expect(await abandonRebuild(stores)).toBe(next.plan.backfillId);
}

describe('view rebuild engine on S3 + DynamoDB Local, and upkeep waiting for it', () => {
  let harness: SyncHarness;
  const saved = { ...process.env };
  beforeAll(async () => {
    harness = await SyncHarness.create();
    Object.assign(process.env, harness.env());
  });
  afterAll(() => {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
    harness.clients.s3.destroy();
    harness.clients.dynamo.destroy();
  });

  it('runs as the map children would, holds upkeep off, then upkeep goes on from its bound: the catalog view', async () => {
    const catalog = generateCatalog({ commits: 24, seed: 3232, leavesPerCommit: [1, 4], deleteRatio: 0.25 });
    const decorations = decorate(catalog.commits, mulberry32(32), 0.3);
    const prefix = 'nuget/';
    await writeMirror(harness.snapshots, prefix, catalog.commits.slice(0, 16));
    const stores = awsViewStores({
      bucket: harness.bucket,
      cursorTable: harness.table,
      prefix,
      clients: harness.clients,
    });
    const { plan, ranges, shards } = planOf(
      await planRebuild(stores, { holder: 'arn:execution', shards: 4, rangeManifests: 6, slices: 4 }),
    );
    expect(plan.cursorName).toBe(`consumer#s3://${harness.bucket}/${prefix}#view-latest`);
    expect(await stores.records.getItems(plan.backfillId, 'ranges')).toEqual(ranges);
    expect(ranges.map((range) => range.manifests)).toEqual([6, 6, 4]);
    await writeMirror(harness.snapshots, prefix, catalog.commits.slice(16));
    // Upkeep's Lambda while the rebuild holds the view: nothing read, nothing written.
    const handler = viewHandler({ ...process.env, CONSUMER_NAME: 'view-latest', SNAPSHOT_PREFIX: prefix });
    const context = { getRemainingTimeInMillis: () => 300_000 };
    expect(await handler({}, context)).toMatchObject({
      stoppedBy: 'rebuild-running',
      commits: 0,
      rebuild: { rebuildId: plan.backfillId, holder: 'arn:execution' },
    });
    const batch = { rebuildId: plan.backfillId, leaseHolder: 'arn:execution' };
    for (const range of ranges)
      await runRebuildBatch(stores, { ...batch, items: [range] }, { holder: 'arn:execution' });
    await runRebuildBatch(stores, { ...batch, items: shards }, { holder: 'arn:execution' });
    expect(await finishRebuild(stores, { rebuildId: plan.backfillId })).toMatchObject({
      commits: 16,
      cursorMoved: true,
    });
    expect(await harness.keys(`${prefix}view-rebuild/`)).toEqual([]);
    // The rebuild finished: upkeep takes the 8 commits after its bound.
    expect(await handler({}, context)).toMatchObject({ commits: 8, stoppedBy: 'caught-up' });
    for (const index of expectedView(prefix, catalog.commits, decorations).values()) {
      const key = packageIndexKey(prefix, (index as { id: string }).id);
      expect(JSON.parse((await harness.snapshots.getBytes(key))!.toString('utf8')), key).toEqual(index);
    }
  });
  it('a rebuild planned in the same second as the one before it is the newest plan (DynamoDB Query order)', async () => {
    const prefix = 'same-second/';
    await writeMirror(harness.snapshots, prefix, generateCatalog({ commits: 2, seed: 3233 }).commits);
    await sameSecondPlans(
      awsViewStores({ bucket: harness.bucket, cursorTable: harness.table, prefix, clients: harness.clients }),
    );
  });
});
