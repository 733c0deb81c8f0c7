/**
 * One backfill plan of a cursor at a time (issue 21), on DynamoDB Local + s3rver and on a folder: planners started
 * at once make one plan and the others are refused naming it; a plan whose lease is live is not run twice; a rerun
 * asking another `until` or `rangeLeaves` is refused naming both; abandoning lets a new plan start; a lapsed or
 * given-back lease, or a holder known to be gone, lets the plan be taken up; ranges stay small enough for a batch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_RANGE_ITEM_BYTES, MAX_RANGE_LEAVES } from '../../../lambda/contract/index.js';
import type { CatalogIndex } from '../../../lambda/catalog/index.js';
import { formatTimestamp, parseTimestamp } from '../../../lambda/contract/time.js';
import {
  abandonBackfill,
  BackfillRunningError,
  cutRanges,
  planBackfill,
  releaseBackfillLease,
} from '../../../lambda/backfill/index.js';
import { generateCatalog, type GeneratedCatalog } from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { commitTicks } from '../../../testkit/sync-harness.js';
import {
  openTarget,
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
    seed: 2121,
    leavesPerCommit: [1, 4],
    sameMillisecondPairs: 2,
    deleteRatio: 0.1,
  });
  replica = await CatalogReplica.start({ catalog, pageSize: 5, splitCommits: true });
});
afterAll(async () => {
  await replica.stop();
  for (const target of targets) target.close();
});

async function fresh(kind: (typeof TARGET_KINDS)[number]): Promise<BackfillTarget> {
  const target = await openTarget(kind);
  targets.push(target);
  return target;
}

describe.each(TARGET_KINDS)('one backfill plan at a time (%s)', (kind) => {
  it('eight planners at once make one plan; each other one is refused naming it, and makes nothing', async () => {
    const target = await fresh(kind);
    const settings = settingsOf(replica.serviceIndexUrl);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, () =>
        withDeps(target, settings, (deps) => planBackfill(settings, deps, { rangeLeaves: 10 })),
      ),
    );
    const planned = outcomes.filter((o) => o.status === 'fulfilled').map((o) => o.value);
    expect(planned).toHaveLength(1);
    const id = planned[0]!.plan.backfillId;
    for (const outcome of outcomes) {
      if (outcome.status === 'fulfilled') continue;
      expect(outcome.reason).toBeInstanceOf(BackfillRunningError);
      expect(outcome.reason).toMatchObject({ code: 'CS_ERR_BACKFILL_RUNNING', backfillId: id });
      expect(String(outcome.reason.message)).toMatch(
        new RegExp(`backfill ${id} of cursor catalog-to-s3 is (running|being planned).*--abandon`),
      );
    }
    // One plan item and one ranges file: nothing of the losers.
    const keys = (await target.keys()).filter((key) => key.startsWith('backfill/'));
    expect(keys).toEqual([`backfill/${id}/ranges.json`]);
    expect((await target.stores.backfills.newestPlan(settings.cursorName))?.backfillId).toBe(id);
  });

  it('a plan whose lease is live is not resumed by a second planner (a second execution); a given-back or lapsed one is', async () => {
    const target = await fresh(kind);
    const settings = settingsOf(replica.serviceIndexUrl);
    const first = await withDeps(target, settings, (deps) => planBackfill(settings, deps, { rangeLeaves: 10 }));
    const refused = await withDeps(target, settings, (deps) => planBackfill(settings, deps)).catch((e: unknown) => e);
    expect(refused).toMatchObject({
      code: 'CS_ERR_BACKFILL_RUNNING',
      backfillId: first.plan.backfillId,
      leaseUntil: first.plan.leaseUntil,
    });
    expect(String(refused)).toContain(`its lease lasts until ${new Date(first.plan.leaseUntil).toISOString()}`);
    await withDeps(target, settings, (deps) => releaseBackfillLease(settings, deps, first.plan.backfillId));
    // The follower is no longer held off, and a rerun takes the plan up at once.
    expect(
      (await target.stores.backfills.readPlan(settings.cursorName, first.plan.backfillId))!.leaseUntil,
    ).toBeLessThanOrEqual(Date.now());
    const resumed = await withDeps(target, settings, (deps) => planBackfill(settings, deps, { leaseSeconds: 0 }));
    expect(resumed).toMatchObject({ resumed: true, plan: { backfillId: first.plan.backfillId } });
    // Lease 0: lapsed at once, so the next planner takes it up too.
    expect((await withDeps(target, settings, (deps) => planBackfill(settings, deps))).resumed).toBe(true);
  });

  it('two planners taking up one lapsed plan at once: one takes it, the other is refused', async () => {
    const target = await fresh(kind);
    const settings = settingsOf(replica.serviceIndexUrl);
    const first = await withDeps(target, settings, (deps) =>
      planBackfill(settings, deps, { rangeLeaves: 10, leaseSeconds: 0 }),
    );
    const outcomes = await Promise.allSettled(
      [1, 2, 3].map(() => withDeps(target, settings, (deps) => planBackfill(settings, deps))),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    for (const o of outcomes)
      if (o.status === 'rejected')
        expect(o.reason).toMatchObject({ code: 'CS_ERR_BACKFILL_RUNNING', backfillId: first.plan.backfillId });
  });

  it('a holder known to be gone (a killed CLI) is taken over at once; a live one is not', async () => {
    const target = await fresh(kind);
    const settings = settingsOf(replica.serviceIndexUrl);
    const first = await withDeps(target, settings, (deps) =>
      planBackfill(settings, deps, { rangeLeaves: 10, holder: '111@here' }),
    );
    expect(first.plan.leaseHolder).toBe('111@here');
    const alive = await withDeps(target, settings, (deps) =>
      planBackfill(settings, deps, { holder: '222@here', holderGone: () => false }),
    ).catch((e: unknown) => e);
    expect(String(alive)).toContain('(held by 111@here)');
    const taken = await withDeps(target, settings, (deps) =>
      planBackfill(settings, deps, { holder: '222@here', holderGone: (h) => h === '111@here' }),
    );
    expect(taken).toMatchObject({
      resumed: true,
      plan: { backfillId: first.plan.backfillId, leaseHolder: '222@here' },
    });
    expect((await target.stores.backfills.readPlan(settings.cursorName, first.plan.backfillId))?.leaseHolder).toBe(
      '222@here',
    );
  });

  it('a rerun asking another until or rangeLeaves is refused naming both; abandoning lets a new plan start', async () => {
    const target = await fresh(kind);
    const settings = settingsOf(replica.serviceIndexUrl);
    const until = commitTicks(catalog, 20);
    const first = await withDeps(target, settings, (deps) =>
      planBackfill(settings, deps, { rangeLeaves: 10, until, leaseSeconds: 0 }),
    );
    expect(first.plan).toMatchObject({ until: formatTimestamp(until), rangeLeaves: 10 });
    const other = commitTicks(catalog, 25);
    const error = await withDeps(target, settings, (deps) =>
      planBackfill(settings, deps, { until: other, rangeLeaves: 7 }),
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'CS_ERR_BACKFILL_MISMATCH', backfillId: first.plan.backfillId });
    expect(String(error)).toContain(
      `until ${formatTimestamp(until)} and rangeLeaves 10, but until ${formatTimestamp(other)} and rangeLeaves 7 was asked`,
    );
    // The same asked again (or nothing) resumes it.
    expect(
      (
        await withDeps(target, settings, (deps) =>
          planBackfill(settings, deps, { until, rangeLeaves: 10, leaseSeconds: 0 }),
        )
      ).resumed,
    ).toBe(true);

    const abandoned = await withDeps(target, settings, (deps) => abandonBackfill(settings, deps));
    expect(abandoned).toMatchObject({ backfillId: first.plan.backfillId, status: 'abandoned' });
    expect(await withDeps(target, settings, (deps) => abandonBackfill(settings, deps))).toBeUndefined();
    const next = await withDeps(target, settings, (deps) =>
      planBackfill(settings, deps, { until: other, rangeLeaves: 7 }),
    );
    expect(next).toMatchObject({
      resumed: false,
      plan: { until: formatTimestamp(other), rangeLeaves: 7, bound: formatTimestamp(other) },
    });
    expect(next.plan.backfillId).not.toBe(first.plan.backfillId);
  });

  it("refuses a rangeLeaves above the bound, naming it; ranges stay under a batch's bytes whatever rangeLeaves", async () => {
    const target = await fresh(kind);
    const settings = settingsOf(replica.serviceIndexUrl);
    const error = await withDeps(target, settings, (deps) =>
      planBackfill(settings, deps, { rangeLeaves: MAX_RANGE_LEAVES + 1 }),
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'CS_ERR_SETTINGS' });
    expect(String(error)).toContain(`rangeLeaves`);
    expect(await target.stores.backfills.readActive(settings.cursorName)).toBeUndefined();
  });
});

describe('ranges are cut by bytes too', () => {
  it('a feed of many small pages: every range item stays under MAX_RANGE_ITEM_BYTES at the largest rangeLeaves', () => {
    // 20,000 pages of 1 leaf each, with long URLs: a leaf bound alone would make one item of megabytes.
    const base = parseTimestamp('2020-01-01T00:00:00Z');
    const items = Array.from({ length: 20_000 }, (_, i) => ({
      url: `https://feed.example/v3/catalog0/a-rather-long-path-segment-to-make-urls-long/page${i}.json`,
      commitId: `00000000-0000-0000-0000-${String(i).padStart(12, '0')}`,
      commitTimeStamp: formatTimestamp(base + BigInt(i + 1) * 10_000n),
      commitTicks: base + BigInt(i + 1) * 10_000n,
      count: 1,
    }));
    const index: CatalogIndex = {
      commitId: items.at(-1)!.commitId,
      commitTimeStamp: items.at(-1)!.commitTimeStamp,
      commitTicks: items.at(-1)!.commitTicks,
      items,
    };
    const ranges = cutRanges(index, base, index.commitTicks, MAX_RANGE_LEAVES, 'x');
    const sizes = ranges.map((range) => Buffer.byteLength(JSON.stringify(range)));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(MAX_RANGE_ITEM_BYTES);
    expect(ranges.reduce((n, r) => n + r.leaves, 0)).toBe(20_000);
    // Four of the largest make a batch well under Step Functions' 256 KiB.
    expect(4 * Math.max(...sizes)).toBeLessThan(256 * 1024 * 0.8);
  });
});
