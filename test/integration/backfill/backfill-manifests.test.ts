/**
 * A range's manifests are written as its commits complete, not one after another in commit order
 * (`watermark.json` is the watermark), so a slow manifest PUT does not hold back later commits; but the range's
 * progress only ever moves over commits whose manifests are stored, and a manifest that fails stops the range
 * before its commit. The follower does the same (test/integration/manifests-as-completed.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitKey, manifestKey } from '../../../lambda/contract/keys.js';
import { formatTimestamp } from '../../../lambda/contract/time.js';
import { planBackfill, runRange } from '../../../lambda/backfill/index.js';
import { openTarget, settingsOf, withDeps, type BackfillTarget } from '../../../testkit/backfill-harness.js';
import { generateCatalog, type GeneratedCatalog } from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { holdKey } from '../../../testkit/held-store.js';
import { commitTicks } from '../../../testkit/sync-harness.js';

let catalog: GeneratedCatalog;
let replica: CatalogReplica;
const targets: BackfillTarget[] = [];

beforeAll(async () => {
  catalog = generateCatalog({ commits: 12, seed: 4242, leavesPerCommit: [1, 3] });
  replica = await CatalogReplica.start({ catalog, pageSize: 50 });
});
afterAll(async () => {
  await replica.stop();
  for (const target of targets) target.close();
});

async function manifestsStored(target: BackfillTarget): Promise<string[]> {
  return (await target.keys()).filter((key) => key.startsWith('commits/'));
}

describe('a range writes manifests as its commits complete', () => {
  it('a held manifest does not hold back later ones, and progress waits for it', async () => {
    const target = await openTarget('local folder');
    targets.push(target);
    const settings = settingsOf(replica.serviceIndexUrl);
    const { ranges } = await withDeps(target, settings, (deps) => planBackfill(settings, deps, { rangeLeaves: 1_000 }));
    expect(ranges).toHaveLength(1);
    const range = ranges[0]!;
    const heldKey = manifestKey('', commitKey(commitTicks(catalog, 2)));
    const held = holdKey(target.stores.snapshots, heldKey);
    const running = withDeps(target, settings, (deps) => runRange(settings, deps, range), { snapshots: held.store });
    await held.reached;
    // Every other commit completes meanwhile; its manifest is stored though commit 2's is not.
    const others = catalog.commits
      .map((_, i) => manifestKey('', commitKey(commitTicks(catalog, i))))
      .filter((key) => key !== heldKey);
    await held.whenStored(others);
    expect(await manifestsStored(target)).toEqual([...others].sort());
    const state = await target.stores.backfills.readRange(settings.cursorName, range.backfillId, range.n);
    // Progress never passes the commit whose manifest is not stored.
    expect(state?.done ?? false).toBe(false);
    if (state?.progress !== undefined) expect(state.progress < formatTimestamp(commitTicks(catalog, 2))).toBe(true);
    held.release();
    const outcome = await running;
    expect(outcome).toMatchObject({ done: true, stoppedBy: 'caught-up' });
    const done = await target.stores.backfills.readRange(settings.cursorName, range.backfillId, range.n);
    expect(done).toMatchObject({
      done: true,
      progress: formatTimestamp(commitTicks(catalog, catalog.commits.length - 1)),
      commits: catalog.commits.length,
    });
    expect(await target.verify(catalog, replica.origin, commitTicks(catalog, catalog.commits.length - 1))).toEqual([]);
  });

  it('a manifest that fails stops the range before its commit: not done, progress before it, and a rerun completes', async () => {
    const target = await openTarget('local folder');
    targets.push(target);
    const settings = settingsOf(replica.serviceIndexUrl);
    const { ranges } = await withDeps(target, settings, (deps) => planBackfill(settings, deps, { rangeLeaves: 1_000 }));
    const range = ranges[0]!;
    const failing = holdKey(target.stores.snapshots, manifestKey('', commitKey(commitTicks(catalog, 5))), {
      fail: true,
    });
    failing.release();
    const error = await withDeps(target, settings, (deps) => runRange(settings, deps, range), {
      snapshots: failing.store,
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'CS_ERR_BACKFILL_RANGE' });
    const state = await target.stores.backfills.readRange(settings.cursorName, range.backfillId, range.n);
    expect(state?.done ?? false).toBe(false);
    expect(state?.progress).toBe(formatTimestamp(commitTicks(catalog, 4)));
    const rerun = await withDeps(target, settings, (deps) => runRange(settings, deps, range));
    expect(rerun).toMatchObject({ done: true });
    expect(await target.verify(catalog, replica.origin, commitTicks(catalog, catalog.commits.length - 1))).toEqual([]);
  });
});
