/**
 * The latest view after a widening `--refilter` (issue 32, part 3), on a folder, in process, with the real follower,
 * backfill and view: a mirror synced with `include a*` and its view; `--refilter` to `a*, c*` and the follower goes
 * on; upkeep then builds the `c*` packages' indexes from the commits after the change only. The view must say so
 * (stale, with what to run) rather than be silently incomplete; the refill backfill marks its change refilled in
 * `filter.json`; `view --rebuild --added` (the hook `backfill` runs) then makes the view the one computed from the
 * mirror, leaves the cursor, and the view is whole again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { finishBackfill, planBackfill, runRange } from '../../../lambda/backfill/index.js';
import { readConsumerCursor } from '../../../lambda/consumer/consumer-cursors.js';
import { idFilterOf, keepsId, type IdFilter } from '../../../lambda/contract/id-filter.js';
import { formatTimestamp, MIN_TIMESTAMP, parseTimestamp, type Ticks } from '../../../lambda/contract/time.js';
import { checkIdFilter, markRefilled, readIdFilterRecord, runSlice } from '../../../lambda/sync/index.js';
import { describeViewStatus, readViewStatus } from '../../../lambda/sync/cli/view-status.js';
import { viewAfterRefill } from '../../../lambda/view/cli/view.js';
import { folderViewStores, keepView, packageIndexKey, type ViewStores } from '../../../lambda/view/index.js';
import { generateCatalog } from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { settingsOf, withDeps, type BackfillTarget } from '../../../testkit/backfill-harness.js';
import { LocalStore } from '../../../lambda/stores/local-store.js';
import { expectedView } from '../../../testkit/view-mirror.js';
import type { GeneratedCommit } from '../../../testkit/generated-commit.js';

const catalog = generateCatalog({ commits: 40, seed: 3203, leavesPerCommit: [1, 4], deleteRatio: 0.2 });
/** The follower takes this many commits under the first filter. */
const BEFORE = 25;
const A = idFilterOf(['a*'], [])!;
const AC = idFilterOf(['a*', 'c*'], [])!;

let replica: CatalogReplica;
let dir: string;
let target: BackfillTarget;
let view: ViewStores;

beforeAll(async () => {
  replica = await CatalogReplica.start({ catalog, pageSize: 8 });
  dir = mkdtempSync(join(tmpdir(), 'catalog-sync-view-refilter-'));
  const store = new LocalStore(dir);
  const stores = { cursors: store, snapshots: store, runLog: store, backfills: store };
  target = { kind: 'local folder', stores } as unknown as BackfillTarget;
  view = folderViewStores(dir);
});
afterAll(async () => {
  await replica.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A run of the follower as `run` makes it: the filter checked (and recorded, or changed with `refilter`) first. */
async function follow(filter: IdFilter, raw: Record<string, string>, refilter = false): Promise<Ticks | undefined> {
  const settings = settingsOf(replica.serviceIndexUrl, { INCLUDE_IDS: filter.include.join(','), ...raw });
  const check = await checkIdFilter(target.stores.snapshots, '', settings.idFilter, {
    cursor: async () => (await target.stores.cursors.read(settings.cursorName))?.value,
    refilter,
    setting: '--include/--exclude',
    howToChange: 'pass --refilter',
    onUnchecked: (error) => {
      throw error;
    },
  });
  await withDeps(target, settings, (deps) => runSlice(settings, deps));
  return check.at;
}

/** The catalog's commits as a mirror under `filter` holds them. */
const under = (filter: IdFilter, commits: readonly GeneratedCommit[]): GeneratedCommit[] =>
  commits.map((commit) => ({ ...commit, leaves: commit.leaves.filter((leaf) => keepsId(filter, leaf.id)) }));

async function storedIndex(id: string): Promise<unknown> {
  const stored = await view.documents.read(packageIndexKey('', id));
  return stored === undefined ? undefined : JSON.parse(stored.bytes.toString('utf8'));
}

describe('the latest view after a widening --refilter', () => {
  it('says it is stale until the refill and a rebuild of the added packages make it whole', async () => {
    await follow(A, { MAX_COMMITS: String(BEFORE) });
    const upkeep = () => keepView(view, { mirror: view.mirror, cursors: view.cursors, lease: false });
    expect(await upkeep()).toMatchObject({ commits: BEFORE, stale: [] });

    const at = (await follow(AC, {}, true))!;
    expect(at).toBeDefined();
    const told: unknown[] = [];
    const after = await keepView(view, {
      mirror: view.mirror,
      cursors: view.cursors,
      lease: false,
      onStale: (stale) => told.push(stale),
    });
    const stale = {
      change: 0,
      until: formatTimestamp(at),
      previous: { include: ['a*'], exclude: [] },
      next: { include: ['a*', 'c*'], exclude: [] },
      since: expect.any(String),
    };
    expect(after).toMatchObject({ commits: catalog.commits.length - BEFORE, stale: [stale] });
    expect(told).toEqual([[stale]]);
    // What it says: the packages kept by the new filter, not the old, lack their versions up to the change.
    expect(describeViewStatus((await readViewStatus(target.stores.snapshots, ''))!)).toMatch(
      /^view view-latest: STALE since .*: packages kept by include a\*, c\* but not by include a\* lack their versions up to .*; store them first with the refill backfill/,
    );
    // It is so: a c* package with versions before the change lacks them.
    const expectedNow = expectedView('', under(AC, catalog.commits), new Map());
    expect(await storedIndex('Contoso.Payments.Core1')).not.toEqual(expectedNow.get('contoso.payments.core1'));

    // The refill backfill the CLI printed: its own cursor, from the catalog's start to the change, under a*, c*.
    const refill = settingsOf(replica.serviceIndexUrl, {
      INCLUDE_IDS: 'a*,c*',
      CURSOR_NAME: 'catalog-to-s3-refill',
    });
    const { plan, ranges } = await withDeps(target, refill, (deps) => planBackfill(refill, deps, { until: at }));
    for (const range of ranges) await withDeps(target, refill, (deps) => runRange(refill, deps, range));
    await withDeps(target, refill, (deps) => finishBackfill(refill, deps, plan.backfillId));
    const { history } = await readIdFilterRecord(target.stores.snapshots, '');
    expect(history[0]).toMatchObject({ refilledAt: expect.any(String), refilledBy: plan.backfillId });
    // Refilled, but not yet rebuilt: still stale (upkeep does not read the rewritten manifests), with the next step.
    const refilled = await upkeep();
    expect(refilled.stale).toEqual([{ ...stale, refilledAt: history[0]!.refilledAt }]);

    // What `backfill` runs after a refill: the rebuild of the added packages only, the cursor left.
    const cursor = (await readConsumerCursor(view.cursors, view.mirror, 'view-latest'))?.stored;
    const said: string[] = [];
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((text) => {
      said.push(String(text));
      return true;
    });
    try {
      await viewAfterRefill({ dataDir: dir } as Parameters<typeof viewAfterRefill>[0]);
    } finally {
      stderr.mockRestore();
    }
    expect(said.join('')).toMatch(
      /rebuilt \d+ packages added by id filter changes from 40 commits .*; cursor view-latest left/,
    );
    expect(said.join('')).not.toContain('STALE');
    expect((await readConsumerCursor(view.cursors, view.mirror, 'view-latest'))?.stored).toBe(cursor);
    for (const [id, index] of expectedNow) expect(await storedIndex(id), id).toEqual(index);
    expect(await readViewStatus(target.stores.snapshots, '')).toMatchObject({
      stale: [],
      rebuilt: { only: 'added', upTo: expect.any(String) },
    });
    expect((await upkeep()).stale).toEqual([]);
  });

  it('a backfill marks a widening refilled only when it stored every commit up to the change under a filter keeping what it added', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'catalog-sync-refilled-'));
    onTestFinished(() => rmSync(folder, { recursive: true, force: true }));
    const store = new LocalStore(folder);
    const until = '2024-01-01T00:00:00.0000000Z';
    await store.putJson('filter.json', {
      include: ['a*', 'c*'],
      exclude: [],
      history: [{ include: ['a*'], exclude: [], until }],
    });
    const start = parseTimestamp(MIN_TIMESTAMP);
    const bound = parseTimestamp(until);
    const coverage = { backfillId: 'B', filter: AC, start, bound };
    // From a cursor it had (not the catalog's start), short of the change, or under a filter without c*: nothing.
    expect(await markRefilled(store, '', { ...coverage, start: start + 1n })).toEqual([]);
    expect(await markRefilled(store, '', { ...coverage, bound: bound - 1n })).toEqual([]);
    expect(await markRefilled(store, '', { ...coverage, filter: A })).toEqual([]);
    expect(await markRefilled(store, '', coverage)).toEqual([0]);
    // Once: a finish retried marks nothing more, and the record keeps what it had.
    expect(await markRefilled(store, '', { ...coverage, backfillId: 'C' })).toEqual([]);
    expect(await store.getJson('filter.json')).toEqual({
      include: ['a*', 'c*'],
      exclude: [],
      history: [{ include: ['a*'], exclude: [], until, refilledAt: expect.any(String), refilledBy: 'B' }],
    });
  });
});
