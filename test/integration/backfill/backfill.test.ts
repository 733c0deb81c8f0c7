/**
 * THE backfill acceptance test (issue 12), on S3 + DynamoDB and on the local folder: a generated catalog with
 * split commits, same-millisecond commits, deletes, a shuffled index and small pages (so, many ranges) is
 * backfilled by running every range in shuffled order, some twice, some twice at once, one interrupted and
 * resumed, then finished. It must store exactly what a follower stores from the same catalog (every key, byte
 * for byte, S3 metadata included), land the cursor on B, write the watermark, log the backfill, and a follower
 * must then go on from B with no gap.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackfillStatus, type BackfillRange } from '../../../lambda/contract/backfill.js';
import { formatTimestamp, parseTimestamp } from '../../../lambda/contract/time.js';
import { runSlice } from '../../../lambda/sync/index.js';
import { finishBackfill, planBackfill, runRange, type RangeOutcome } from '../../../lambda/backfill/index.js';
import { appendCommits, generateCatalog, type GeneratedCatalog } from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { mulberry32 } from '../../../testkit/prng.js';
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

describe.each(TARGET_KINDS)('backfill acceptance: %s', (kind) => {
  let catalog: GeneratedCatalog;
  let replica: CatalogReplica;
  let backfilled: BackfillTarget;
  let followed: BackfillTarget;

  beforeAll(async () => {
    catalog = generateCatalog({
      commits: 70,
      seed: 1212,
      leavesPerCommit: [1, 5],
      sameMillisecondPairs: 6,
      deleteRatio: 0.2,
    });
    replica = await CatalogReplica.start({ catalog, pageSize: 7, splitCommits: true });
    backfilled = await openTarget(kind);
    followed = await openTarget(kind);
  });
  afterAll(async () => {
    await replica.stop();
    backfilled.close();
    followed.close();
  });

  it('stores exactly what a follower stores, lands the cursor on B, and a follower goes on with no gap', async () => {
    const settings = settingsOf(replica.serviceIndexUrl);
    const head = commitTicks(catalog, -1);
    const { plan, ranges, resumed } = await withDeps(backfilled, settings, (deps) =>
      planBackfill(settings, deps, { rangeLeaves: 12 }),
    );
    expect(resumed).toBe(false);
    expect(plan).toMatchObject({
      status: 'running',
      start: formatTimestamp(settings.startCursor),
      bound: formatTimestamp(head),
      ranges: ranges.length,
    });
    expect(ranges.length).toBeGreaterThan(8);
    // The ranges file, as a Distributed Map's ItemReader reads it.
    expect(await backfilled.stores.snapshots.getJson(`backfill/${plan.backfillId}/ranges.json`)).toEqual(ranges);

    const run = (range: BackfillRange, extra = {}): Promise<RangeOutcome> =>
      withDeps(backfilled, settings, (deps) => runRange(settings, deps, range), extra);
    // One range is interrupted (its signal aborted, as Ctrl-C would: `interrupted`) when its second commit's first
    // leaf is requested: one leaf at a time, so its first commit is complete and checkpointed. Then it is resumed.
    const commitsIn = (range: BackfillRange) =>
      catalog.commits.filter(
        (c) =>
          parseTimestamp(c.timestamp) > parseTimestamp(range.lo) &&
          parseTimestamp(c.timestamp) <= parseTimestamp(range.hi),
      );
    const interrupted = ranges.reduce((a, b) => (commitsIn(b).length > commitsIn(a).length ? b : a));
    expect(commitsIn(interrupted).length).toBeGreaterThanOrEqual(2);
    const secondPaths = new Set(
      commitsIn(interrupted)[1]!.leaves.map((leaf) => new URL(replica.leafUrl(leaf)).pathname),
    );
    const stop = new AbortController();
    replica.onRequest = (request) => {
      if (secondPaths.has(request.path)) stop.abort();
    };
    const oneAtATime = settingsOf(replica.serviceIndexUrl, { CONCURRENCY: '1' });
    const cut = await withDeps(backfilled, oneAtATime, (deps) => runRange(oneAtATime, deps, interrupted), {
      signal: stop.signal,
    });
    replica.onRequest = undefined;
    expect(cut).toMatchObject({ n: interrupted.n, done: false, skipped: false, stoppedBy: 'interrupted' });
    expect(cut.totals.commits).toBe(1);
    const kept = await backfilled.stores.backfills.readRange(settings.cursorName, plan.backfillId, interrupted.n);
    expect(kept).toMatchObject({ done: false, commits: cut.totals.commits });
    // finish refuses while ranges are not done, and moves nothing.
    await expect(
      withDeps(backfilled, settings, (deps) => finishBackfill(settings, deps, plan.backfillId)),
    ).rejects.toMatchObject({ code: 'CS_ERR_BACKFILL_INCOMPLETE' });
    expect(await backfilled.stores.cursors.read(settings.cursorName)).toBeUndefined();

    // Every range, shuffled; every third one twice at once, every fifth one again afterwards.
    const order = mulberry32(7).shuffle([...ranges]);
    const outcomes: RangeOutcome[] = [];
    for (const [i, range] of order.entries()) {
      if (i % 3 === 0) outcomes.push(...(await Promise.all([run(range), run(range)])));
      else outcomes.push(await run(range));
      if (i % 5 === 0) expect(await run(range)).toMatchObject({ n: range.n, done: true, skipped: true });
    }
    // A duplicate at once may lose the race to its twin: it stops, and the twin completes the range.
    for (const outcome of outcomes) expect(outcome.done || outcome.stoppedBy === 'lost-race').toBe(true);
    // The interrupted range resumed after its checkpointed commit: the runs that completed it took the rest only.
    const resumedRuns = outcomes.filter((o) => o.n === interrupted.n && o.done && o.stoppedBy === 'caught-up');
    expect(resumedRuns.length).toBeGreaterThanOrEqual(1);
    for (const outcome of resumedRuns) expect(outcome.totals.commits).toBe(commitsIn(interrupted).length - 1);

    const summary = await withDeps(backfilled, settings, (deps) => finishBackfill(settings, deps, plan.backfillId));
    const leaves = catalog.commits.reduce((n, c) => n + c.leaves.length, 0);
    const deletes = catalog.commits.reduce((n, c) => n + c.leaves.filter((l) => l.type === 'PackageDelete').length, 0);
    expect(summary).toMatchObject({
      runId: plan.backfillId,
      cursorBefore: plan.start,
      cursorAfter: formatTimestamp(head),
      commits: catalog.commits.length,
      leaves,
      deletes,
      quarantined: 0,
      caughtUp: true,
      stoppedBy: 'caught-up',
    });
    expect((await backfilled.stores.cursors.read(settings.cursorName))?.stored).toBe(formatTimestamp(head));
    expect(await backfilled.stores.snapshots.getJson('watermark.json')).toMatchObject({
      cursor: formatTimestamp(head),
      commitId: catalog.commits.at(-1)!.commitId,
    });
    expect((await runsOf(backfilled)).find((r) => r.runId === plan.backfillId)).toEqual(summary);
    expect((await backfilled.stores.backfills.readPlan(settings.cursorName, plan.backfillId))?.status).toBe(
      BackfillStatus.finished,
    );
    // Idempotent: a second finish returns the same summary and moves nothing.
    expect(await withDeps(backfilled, settings, (deps) => finishBackfill(settings, deps, plan.backfillId))).toEqual(
      summary,
    );
    expect((await runsOf(backfilled)).filter((r) => r.runId === plan.backfillId)).toHaveLength(1);

    // A follower of the same catalog, into its own store, to the head.
    const follower = await withDeps(followed, settings, (deps) => runSlice(settings, deps));
    expect(follower).toMatchObject({
      caughtUp: true,
      cursorAfter: formatTimestamp(head),
      commits: catalog.commits.length,
      leaves,
    });
    const keys = comparableKeys(await backfilled.keys());
    expect(keys).toEqual(comparableKeys(await followed.keys()));
    for (const key of keys) {
      const [a, b] = await Promise.all([backfilled.object(key), followed.object(key)]);
      expect(a.body.equals(b.body), key).toBe(true);
      expect(a.metadata, key).toEqual(b.metadata);
    }
    expect(await backfilled.verify(catalog, replica.origin, head)).toEqual([]);

    // The catalog grows; a follower goes on from B with no gap.
    appendCommits(catalog, 12, 99);
    const grown = commitTicks(catalog, -1);
    const next = await withDeps(backfilled, settings, (deps) => runSlice(settings, deps));
    expect(next).toMatchObject({
      caughtUp: true,
      stoppedBy: 'caught-up',
      cursorBefore: formatTimestamp(head),
      cursorAfter: formatTimestamp(grown),
      commits: 12,
    });
    expect(await backfilled.verify(catalog, replica.origin, grown)).toEqual([]);
    expect(parseTimestamp(next.cursorAfter)).toBe(grown);
  }, 240_000);
});
