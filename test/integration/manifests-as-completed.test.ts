/**
 * The follower writes each commit's manifest as soon as that commit's leaves are stored, so manifests appear in
 * any order and a slow PUT holds back only the cursor; the cursor and `watermark.json` still never pass a commit
 * whose manifest is missing, and a leaf stalled past STRAGGLER_MS gives its slot to the others. On s3rver and DynamoDB (Local), observed at the instant of every cursor write and
 * every watermark PUT; the order of completions is set by holding one PUT (testkit/held-store.ts), not by timing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitKey, leafKey, manifestKey } from '../../lambda/contract/keys.js';
import { formatTimestamp, parseTimestamp, type Ticks } from '../../lambda/contract/time.js';
import { SyncError } from '../../lambda/sync/engine.js';
import { generateCatalog, type GeneratedCatalog } from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { holdKey, type HoldOptions } from '../../testkit/held-store.js';
import { commitTicks, RecordingCursorStore, SyncHarness } from '../../testkit/sync-harness.js';

let catalog: GeneratedCatalog;
let replica: CatalogReplica;

beforeAll(async () => {
  catalog = generateCatalog({ commits: 12, seed: 1919, leavesPerCommit: [1, 3] });
  replica = await CatalogReplica.start({ catalog, pageSize: 50 });
});
afterAll(async () => {
  await replica.stop();
});

const manifestOf = (i: number): string => manifestKey('', commitKey(commitTicks(catalog, i)));

/**
 * Checks, at each cursor write and each watermark PUT, that every commit at or before it is stored whole, and that
 * a watermark never leads the stored cursor. Returns the stores to run with and the problems seen.
 */
function watched(harness: SyncHarness) {
  const violations: string[] = [];
  const watermarks: string[] = [];
  const cursors = new RecordingCursorStore(harness.store, async (value) => {
    for (const problem of await harness.verify(catalog, replica.origin, value))
      violations.push(`cursor ${formatTimestamp(value)}: ${problem}`);
  });
  const beforeJson: HoldOptions['beforeJson'] = async (key, value) => {
    if (key !== 'watermark.json') return;
    const cursor = (value as { cursor: string }).cursor;
    watermarks.push(cursor);
    const stored = await harness.cursor();
    if (stored === undefined || parseTimestamp(cursor) > parseTimestamp(stored))
      violations.push(`watermark ${cursor} ahead of the stored cursor ${stored}`);
    for (const problem of await harness.verify(catalog, replica.origin, parseTimestamp(cursor)))
      violations.push(`watermark ${cursor}: ${problem}`);
  };
  return { cursors, beforeJson, violations, watermarks };
}

async function storedWatermark(harness: SyncHarness): Promise<Ticks | undefined> {
  const watermark = (await harness.snapshots.getJson('watermark.json')) as { cursor: string } | undefined;
  return watermark === undefined ? undefined : parseTimestamp(watermark.cursor);
}

describe('the follower writes manifests as commits complete', () => {
  it('a slow leaf PUT of commit 2: later manifests are written first, the cursor and watermark wait for it', async () => {
    const harness = await SyncHarness.create();
    const watch = watched(harness);
    const slowLeaf = catalog.commits[2]!.leaves[0]!;
    const slowKey = leafKey('', commitKey(commitTicks(catalog, 2)), slowLeaf.id, slowLeaf.version);
    const held = holdKey(harness.snapshots, slowKey, { beforeJson: watch.beforeJson });
    const running = harness.run(
      replica.serviceIndexUrl,
      { CONCURRENCY: '8' },
      { snapshots: held.store, cursors: watch.cursors, watermarkIntervalMs: 0 },
    );
    await held.reached;
    const later = catalog.commits.slice(3).map((_, i) => manifestOf(i + 3));
    await held.whenStored(later);
    // Every later commit's manifest is stored before commit 2's.
    expect(held.stored.has(manifestOf(2))).toBe(false);
    expect(await harness.exists(manifestOf(2))).toBe(false);
    for (const key of later) expect(await harness.exists(key)).toBe(true);
    // Neither the cursor nor the watermark has passed commit 2.
    const cursor = await harness.cursor();
    if (cursor !== undefined) expect(parseTimestamp(cursor) < commitTicks(catalog, 2)).toBe(true);
    const watermark = await storedWatermark(harness);
    if (watermark !== undefined) expect(watermark < commitTicks(catalog, 2)).toBe(true);
    held.release();
    const summary = await running;
    expect(summary).toMatchObject({
      stoppedBy: 'caught-up',
      commits: catalog.commits.length,
      cursorAfter: formatTimestamp(commitTicks(catalog, -1)),
    });
    expect(await storedWatermark(harness)).toBe(commitTicks(catalog, -1));
    expect(await harness.verify(catalog, replica.origin, commitTicks(catalog, -1))).toEqual([]);
    expect(watch.violations).toEqual([]);
    // Watermarks were written during the run (at least one while commit 2 was held, and the closing one), each
    // naming a cursor no older than the one before it.
    expect(watch.watermarks.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < watch.watermarks.length; i++)
      expect(watch.watermarks[i]! >= watch.watermarks[i - 1]!).toBe(true);
  });

  it('a leaf held past STRAGGLER_MS gives its slot back: with CONCURRENCY 1, every later commit completes while it is held', async () => {
    const harness = await SyncHarness.create();
    const watch = watched(harness);
    const slowLeaf = catalog.commits[1]!.leaves[0]!;
    const slowKey = leafKey('', commitKey(commitTicks(catalog, 1)), slowLeaf.id, slowLeaf.version);
    const held = holdKey(harness.snapshots, slowKey, { beforeJson: watch.beforeJson });
    const running = harness.run(
      replica.serviceIndexUrl,
      { CONCURRENCY: '1' },
      { snapshots: held.store, cursors: watch.cursors, watermarkIntervalMs: 0 },
    );
    await held.reached;
    // With its one slot held by the stalled leaf this would never resolve.
    await held.whenStored(catalog.commits.slice(2).map((_, i) => manifestOf(i + 2)));
    expect(await harness.cursor()).toBe(formatTimestamp(commitTicks(catalog, 0)));
    held.release();
    expect(await running).toMatchObject({ stoppedBy: 'caught-up', commits: catalog.commits.length });
    expect(await harness.verify(catalog, replica.origin, commitTicks(catalog, -1))).toEqual([]);
    expect(watch.violations).toEqual([]);
  });

  it('a manifest PUT that fails: the cursor and watermark stop before its commit, later manifests are whole, a rerun completes', async () => {
    const harness = await SyncHarness.create();
    const watch = watched(harness);
    const failing = holdKey(harness.snapshots, manifestOf(5), { fail: true, beforeJson: watch.beforeJson });
    failing.release();
    const error = await harness
      .run(
        replica.serviceIndexUrl,
        { CONCURRENCY: '8' },
        { snapshots: failing.store, cursors: watch.cursors, watermarkIntervalMs: 0 },
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SyncError);
    expect((error as Error).message).toContain(`PUT ${manifestOf(5)} failed`);
    const lastGood = commitTicks(catalog, 4);
    expect((error as SyncError).summary).toMatchObject({
      stoppedBy: 'error',
      commits: 5,
      cursorAfter: formatTimestamp(lastGood),
    });
    expect(await harness.cursor()).toBe(formatTimestamp(lastGood));
    expect(await storedWatermark(harness)).toBe(lastGood);
    for (const watermark of watch.watermarks) expect(parseTimestamp(watermark) <= lastGood).toBe(true);
    expect(await harness.exists(manifestOf(5))).toBe(false);
    expect(await harness.strayManifests(catalog, replica.origin, lastGood)).toEqual([]);
    expect(watch.violations).toEqual([]);
    const rerun = await harness.run(replica.serviceIndexUrl);
    expect(rerun).toMatchObject({
      stoppedBy: 'caught-up',
      cursorBefore: formatTimestamp(lastGood),
      commits: catalog.commits.length - 5,
    });
    expect(await harness.verify(catalog, replica.origin, commitTicks(catalog, -1))).toEqual([]);
    expect(await storedWatermark(harness)).toBe(commitTicks(catalog, -1));
  });
});
