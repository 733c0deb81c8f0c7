/**
 * The backfill's rules, each on its own (local folder unless the store matters): finish refuses while a range is
 * not done; `until` between two commits lands the cursor on the newest commit before it and the follower goes on;
 * a leaf that fails validation is quarantined exactly as the follower would, or (quarantine off) stops its range
 * with a coded error naming the URL; the follower gate (a live lease holds the follower off, an expired one does
 * not, a finished backfill lets it go on); and a rerun resumes the same plan, skipping done ranges. One plan at a
 * time, abandoning and refused reruns: backfill-one-plan.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatTimestamp, parseTimestamp } from '../../../lambda/contract/time.js';
import { runSlice } from '../../../lambda/sync/index.js';
import {
  BackfillRangeError,
  finishBackfill,
  planBackfill,
  releaseBackfillLease,
  runRange,
} from '../../../lambda/backfill/index.js';
import { generateCatalog, type GeneratedCatalog } from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { commitTicks } from '../../../testkit/sync-harness.js';
import {
  comparableKeys,
  openTarget,
  runsOf,
  settingsOf,
  TARGET_KINDS,
  withDeps,
  type BackfillTarget,
} from '../../../testkit/backfill-harness.js';

let catalog: GeneratedCatalog;
let replica: CatalogReplica;
const targets: BackfillTarget[] = [];

beforeAll(async () => {
  catalog = generateCatalog({
    commits: 30,
    seed: 1213,
    leavesPerCommit: [1, 4],
    sameMillisecondPairs: 2,
    deleteRatio: 0.2,
  });
  replica = await CatalogReplica.start({ catalog, pageSize: 5, splitCommits: true });
});
afterAll(async () => {
  await replica.stop();
  for (const target of targets) target.close();
});

async function fresh(kind: (typeof TARGET_KINDS)[number] = 'local folder'): Promise<BackfillTarget> {
  const target = await openTarget(kind);
  targets.push(target);
  return target;
}

describe('backfill rules', () => {
  it('finish refuses with a code while a range is not done, and the cursor does not move', async () => {
    const target = await fresh();
    const settings = settingsOf(replica.serviceIndexUrl);
    const { plan, ranges } = await withDeps(target, settings, (deps) =>
      planBackfill(settings, deps, { rangeLeaves: 10 }),
    );
    for (const range of ranges.slice(1)) await withDeps(target, settings, (deps) => runRange(settings, deps, range));
    const error = await withDeps(target, settings, (deps) => finishBackfill(settings, deps, plan.backfillId)).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'CS_ERR_BACKFILL_INCOMPLETE', notDone: [0], notDoneCount: 1 });
    expect(String(error)).toContain('range(s) not done (0)');
    expect(await target.stores.cursors.read(settings.cursorName)).toBeUndefined();
    expect(await target.stores.snapshots.getJson('watermark.json')).toBeUndefined();
    expect(await runsOf(target)).toEqual([]);
  });

  it.each(TARGET_KINDS)(
    'until between two commits: the cursor lands on the newest commit before it, then the follower goes on (%s)',
    async (kind) => {
      const target = await fresh(kind);
      const settings = settingsOf(replica.serviceIndexUrl);
      const k = 17;
      const until = commitTicks(catalog, k) + 1n;
      const { plan, ranges } = await withDeps(target, settings, (deps) =>
        planBackfill(settings, deps, { rangeLeaves: 8, until }),
      );
      expect(plan.bound).toBe(formatTimestamp(until));
      expect(ranges.at(-1)!.hi).toBe(formatTimestamp(until));
      for (const range of ranges)
        expect(await withDeps(target, settings, (deps) => runRange(settings, deps, range))).toMatchObject({
          done: true,
        });
      const summary = await withDeps(target, settings, (deps) => finishBackfill(settings, deps, plan.backfillId));
      expect(summary).toMatchObject({ cursorAfter: formatTimestamp(commitTicks(catalog, k)), commits: k + 1 });
      expect((await target.stores.cursors.read(settings.cursorName))?.commitId).toBe(catalog.commits[k]!.commitId);
      expect(await target.verify(catalog, replica.origin, commitTicks(catalog, k))).toEqual([]);
      // Nothing after the bound was stored.
      const later = (await target.keys()).filter((key) => key.startsWith('commits/')).length;
      expect(later).toBe(k + 1);

      const next = await withDeps(target, settings, (deps) => runSlice(settings, deps));
      expect(next).toMatchObject({
        caughtUp: true,
        cursorBefore: formatTimestamp(commitTicks(catalog, k)),
        commits: catalog.commits.length - k - 1,
      });
      expect(await target.verify(catalog, replica.origin, commitTicks(catalog, -1))).toEqual([]);
    },
  );

  it('a leaf that fails validation: quarantined as the follower does it, or (quarantine off) a coded error naming the URL', async () => {
    const bad = catalog.commits[12]!.leaves[0]!;
    const badUrl = replica.leafUrl(bad);
    replica.overrideBody(new URL(badUrl).pathname, '{"@type": "PackageDetails"}');
    try {
      const quarantined = settingsOf(replica.serviceIndexUrl, { QUARANTINE: 'true' });
      const [backfilled, followed] = [await fresh(), await fresh()];
      const { plan, ranges } = await withDeps(backfilled, quarantined, (deps) =>
        planBackfill(quarantined, deps, { rangeLeaves: 10 }),
      );
      for (const range of ranges) await withDeps(backfilled, quarantined, (deps) => runRange(quarantined, deps, range));
      const summary = await withDeps(backfilled, quarantined, (deps) =>
        finishBackfill(quarantined, deps, plan.backfillId),
      );
      const follower = await withDeps(followed, quarantined, (deps) => runSlice(quarantined, deps));
      expect(summary).toMatchObject({ quarantined: 1, leaves: follower.leaves, cursorAfter: follower.cursorAfter });
      const keys = comparableKeys(await backfilled.keys());
      expect(keys).toEqual(comparableKeys(await followed.keys()));
      expect(keys.some((key) => key.startsWith('quarantine/'))).toBe(true);
      for (const key of keys)
        expect((await backfilled.object(key)).body.equals((await followed.object(key)).body), key).toBe(true);

      const strict = settingsOf(replica.serviceIndexUrl);
      const target = await fresh();
      const planned = await withDeps(target, strict, (deps) => planBackfill(strict, deps, { rangeLeaves: 10 }));
      const t = commitTicks(catalog, 12);
      const range = planned.ranges.find((r) => parseTimestamp(r.lo) < t && t <= parseTimestamp(r.hi))!;
      const error = await withDeps(target, strict, (deps) => runRange(strict, deps, range)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BackfillRangeError);
      expect(error).toMatchObject({ code: 'CS_ERR_BACKFILL_RANGE', n: range.n, url: badUrl });
      expect(String((error as Error).message)).toContain(badUrl);
      expect((error as Error).cause).toMatchObject({ code: 'CS_ERR_INVALID_DOCUMENT' });
      expect(
        (await target.stores.backfills.readRange(strict.cursorName, planned.plan.backfillId, range.n))?.done ?? false,
      ).toBe(false);
    } finally {
      replica.clearFaults();
    }
  });

  it.each(TARGET_KINDS)(
    'the follower gate: a live lease holds the follower off, an expired one does not (%s)',
    async (kind) => {
      const target = await fresh(kind);
      const settings = settingsOf(replica.serviceIndexUrl);
      await withDeps(target, settings, (deps) => planBackfill(settings, deps, { rangeLeaves: 10 }));
      const indexPath = new URL(replica.catalogIndexUrl).pathname;
      const indexReads = replica.countRequests(indexPath);
      const held = await withDeps(target, settings, (deps) => runSlice(settings, deps));
      expect(held).toMatchObject({
        stoppedBy: 'backfill',
        caughtUp: false,
        commits: 0,
        cursorBefore: formatTimestamp(settings.startCursor),
        cursorAfter: formatTimestamp(settings.startCursor),
      });
      expect(replica.countRequests(indexPath)).toBe(indexReads);
      expect(await target.stores.cursors.read(settings.cursorName)).toBeUndefined();
      expect((await runsOf(target))[0]).toEqual(held);

      const expired = await fresh(kind);
      await withDeps(expired, settings, (deps) => planBackfill(settings, deps, { rangeLeaves: 10, leaseSeconds: 0 }));
      const runs = await withDeps(expired, settings, (deps) => runSlice(settings, deps));
      expect(runs).toMatchObject({
        stoppedBy: 'caught-up',
        caughtUp: true,
        cursorAfter: formatTimestamp(commitTicks(catalog, -1)),
      });
    },
  );

  it('a rerun resumes the same plan: same id and ranges, done ranges skipped, and finishes', async () => {
    const target = await fresh();
    const settings = settingsOf(replica.serviceIndexUrl);
    const first = await withDeps(target, settings, (deps) => planBackfill(settings, deps, { rangeLeaves: 10 }));
    const half = first.ranges.slice(0, Math.ceil(first.ranges.length / 2));
    for (const range of half) await withDeps(target, settings, (deps) => runRange(settings, deps, range));
    // A clean stop gives the lease back: the rerun takes the plan up at once (the same rangeLeaves, or none, asked).
    await withDeps(target, settings, (deps) => releaseBackfillLease(settings, deps, first.plan.backfillId));
    const again = await withDeps(target, settings, (deps) => planBackfill(settings, deps, { rangeLeaves: 10 }));
    expect(again.resumed).toBe(true);
    expect(again.plan.backfillId).toBe(first.plan.backfillId);
    expect(again.ranges).toEqual(first.ranges);
    for (const range of again.ranges) {
      const outcome = await withDeps(target, settings, (deps) => runRange(settings, deps, range));
      expect(outcome).toMatchObject({ n: range.n, done: true, skipped: half.some((h) => h.n === range.n) });
    }
    const summary = await withDeps(target, settings, (deps) => finishBackfill(settings, deps, first.plan.backfillId));
    expect(summary).toMatchObject({
      cursorAfter: formatTimestamp(commitTicks(catalog, -1)),
      commits: catalog.commits.length,
    });
    // After the finish a new plan starts from B: nothing left, so it has no range and finishes at once.
    const after = await withDeps(target, settings, (deps) => planBackfill(settings, deps));
    expect(after).toMatchObject({
      resumed: false,
      ranges: [],
      plan: { ranges: 0, status: 'finished', start: formatTimestamp(commitTicks(catalog, -1)) },
    });
    // The follower is no longer held off: it goes on from B (nothing new here).
    const follower = await withDeps(target, settings, (deps) => runSlice(settings, deps));
    expect(follower).toMatchObject({
      stoppedBy: 'caught-up',
      caughtUp: true,
      commits: 0,
      cursorBefore: formatTimestamp(commitTicks(catalog, -1)),
    });
  });

  it('a plan whose ranges file is gone is abandoned and a new plan made; an unknown plan is a coded plan error', async () => {
    const target = await fresh();
    const settings = settingsOf(replica.serviceIndexUrl);
    const { plan } = await withDeps(target, settings, (deps) =>
      planBackfill(settings, deps, { rangeLeaves: 10, leaseSeconds: 0 }),
    );
    await target.stores.snapshots.deleteKey(`backfill/${plan.backfillId}/ranges.json`);
    const again = await withDeps(target, settings, (deps) => planBackfill(settings, deps));
    expect(again).toMatchObject({ resumed: false, plan: { status: 'running' } });
    expect(again.plan.backfillId).not.toBe(plan.backfillId);
    expect(await target.stores.backfills.readPlan(settings.cursorName, plan.backfillId)).toMatchObject({
      status: 'abandoned',
    });
    await expect(
      withDeps(target, settings, (deps) => finishBackfill(settings, deps, plan.backfillId)),
    ).rejects.toMatchObject({ code: 'CS_ERR_BACKFILL_PLAN' });
    await expect(
      withDeps(target, settings, (deps) => finishBackfill(settings, deps, '001xVi6T451oQz1OTQhs0fsMut1CPbXm')),
    ).rejects.toMatchObject({
      code: 'CS_ERR_BACKFILL_PLAN',
    });
  });

  it.each(TARGET_KINDS)(
    'three duplicate workers at once on every range: each done at its newest commit, totals once (%s)',
    async (kind) => {
      const target = await fresh(kind);
      const settings = settingsOf(replica.serviceIndexUrl);
      const { plan, ranges } = await withDeps(target, settings, (deps) =>
        planBackfill(settings, deps, { rangeLeaves: 10 }),
      );
      for (const range of ranges) {
        const outcomes = await Promise.all(
          [1, 2, 3].map(() => withDeps(target, settings, (deps) => runRange(settings, deps, range))),
        );
        expect(outcomes.some((o) => o.done)).toBe(true);
        const owned = catalog.commits.filter(
          (c) =>
            parseTimestamp(c.timestamp) > parseTimestamp(range.lo) &&
            parseTimestamp(c.timestamp) <= parseTimestamp(range.hi),
        );
        const state = await target.stores.backfills.readRange(settings.cursorName, plan.backfillId, range.n);
        expect(state).toMatchObject({
          done: true,
          commits: owned.length,
          leaves: owned.reduce((n, c) => n + c.leaves.length, 0),
        });
        expect(state?.progress).toBe(
          owned.length === 0 ? undefined : formatTimestamp(parseTimestamp(owned.at(-1)!.timestamp)),
        );
      }
      const summary = await withDeps(target, settings, (deps) => finishBackfill(settings, deps, plan.backfillId));
      expect(summary).toMatchObject({
        cursorAfter: formatTimestamp(commitTicks(catalog, -1)),
        commits: catalog.commits.length,
      });
      expect(await target.verify(catalog, replica.origin, commitTicks(catalog, -1))).toEqual([]);
    },
  );
});
