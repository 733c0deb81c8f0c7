/**
 * The three backfill handlers called exactly as the state machine calls them (infra/constructs/catalog-backfill.ts),
 * against the catalog replica, DynamoDB Local (or dynalite) and s3rver: the planner with the execution's input;
 * the ranges file read back the way the Distributed Map's ItemReader reads it (GetObject, a JSON array); batches
 * formed the way ItemBatcher forms them (MaxItemsPerBatch items, BatchInput with the backfill id); the worker per
 * batch, some batches retried or duplicated, one given almost no time so that it comes back not done and is
 * looped; the finalizer. backfill-definition-run.test.ts runs the synthesized definition itself with these handlers.
 */
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BackfillRange } from '../../../lambda/contract/index.js';
import { formatTimestamp } from '../../../lambda/contract/time.js';
import { generateCatalog, type GeneratedCatalog } from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { commitTicks, SyncHarness } from '../../../testkit/sync-harness.js';

const BATCH = 3; // MaxItemsPerBatch of this test's map
const ENOUGH = { getRemainingTimeInMillis: () => 600_000 };
const NO_TIME = { getRemainingTimeInMillis: () => 5_000 }; // the safety margin takes all of it

describe('the backfill handlers, as the Distributed Map calls them', () => {
  let catalog: GeneratedCatalog;
  let replica: CatalogReplica;
  let harness: SyncHarness;
  const saved = { ...process.env };

  beforeAll(async () => {
    catalog = generateCatalog({
      commits: 160,
      seed: 12,
      leavesPerCommit: [1, 6],
      sameMillisecondPairs: 4,
      trimTrailingZeros: true,
      deleteRatio: 0.1,
    });
    replica = await CatalogReplica.start({ catalog, pageSize: 25, splitCommits: true });
    harness = await SyncHarness.create();
    Object.assign(
      process.env,
      harness.env({ CATALOG_SOURCE: replica.serviceIndexUrl, CURSOR_NAME: 'bf', CONCURRENCY: '8' }),
    );
  });
  afterAll(async () => {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
    await replica.stop();
  });

  it("plan → ItemReader → ItemBatcher → workers (retried, duplicated, looped) → finish: the follower's result, cursor on B", async () => {
    const planner = (await import('../../../lambda/backfill/lambda/planner.js')).handler;
    const worker = (await import('../../../lambda/backfill/lambda/worker.js')).handler;
    const finalizer = (await import('../../../lambda/backfill/lambda/finalizer.js')).handler;

    // Plan: the execution's input.
    const planned = await planner({ rangeLeaves: 40 });
    expect(planned).toMatchObject({
      bucket: harness.bucket,
      rangesKey: `backfill/${planned.backfillId}/ranges.json`,
      resumed: false,
    });
    expect(planned.ranges).toBeGreaterThan(2 * BATCH);

    // ItemReader: s3:getObject of Bucket/Key from the planner's output, InputType JSON (an array).
    const object = await harness.clients.s3.send(
      new GetObjectCommand({ Bucket: planned.bucket, Key: planned.rangesKey }),
    );
    const items = JSON.parse(await object.Body!.transformToString('utf8')) as BackfillRange[];
    expect(Array.isArray(items)).toBe(true);
    expect(items.map((item) => item.n)).toEqual([...Array(planned.ranges).keys()]);

    // ItemBatcher: MaxItemsPerBatch items, BatchInput { backfillId, passes: 0 }.
    const batches = [];
    for (let i = 0; i < items.length; i += BATCH)
      batches.push({ Items: items.slice(i, i + BATCH), BatchInput: { backfillId: planned.backfillId, passes: 0 } });

    // A batch given almost no time comes back not done and is looped back (the Again state: passes + 1).
    const stopped = await worker(batches[0]!, NO_TIME);
    expect(stopped.done).toBe(false);
    // Finishing before every range is done fails with the coded error, and moves nothing.
    await expect(finalizer({ backfillId: planned.backfillId })).rejects.toMatchObject({
      code: 'CS_ERR_BACKFILL_INCOMPLETE',
    });
    expect(await harness.cursor('bf')).toBeUndefined();
    const looped = await worker({ ...batches[0]!, BatchInput: { ...batches[0]!.BatchInput, passes: 1 } }, ENOUGH);
    expect(looped.done).toBe(true);

    // A duplicated batch (two child executions of one batch at once) and a retried one (run again after success).
    const [a, b] = await Promise.all([worker(batches[1]!, ENOUGH), worker(batches[1]!, ENOUGH)]);
    expect(a.done || b.done).toBe(true);
    // The one that lost the race (stoppedBy lost-race) is not done: the state machine loops it, and it is then.
    for (const outcome of [a, b]) {
      if (outcome.done) continue;
      expect(outcome.ranges.some((range) => range.stoppedBy === 'lost-race')).toBe(true);
      expect(
        (await worker({ ...batches[1]!, BatchInput: { ...batches[1]!.BatchInput, passes: 1 } }, ENOUGH)).done,
      ).toBe(true);
    }
    for (const batch of batches.slice(2)) expect((await worker(batch, ENOUGH)).done).toBe(true);
    const retried = await worker(batches[2]!, ENOUGH);
    expect(retried).toMatchObject({ done: true, slowDowns: 0 });
    expect(retried.ranges.every((range) => range.skipped)).toBe(true);

    // Finish: the cursor on B (the index head), everything a follower stores, byte for byte.
    const summary = await finalizer({ backfillId: planned.backfillId });
    const head = commitTicks(catalog, -1);
    const leaves = catalog.commits.reduce((n, commit) => n + commit.leaves.length, 0);
    expect(summary).toMatchObject({
      runId: planned.backfillId,
      cursorName: 'bf',
      cursorAfter: formatTimestamp(head),
      commits: catalog.commits.length,
      leaves,
      caughtUp: true,
    });
    expect(await harness.cursor('bf')).toBe(formatTimestamp(head));
    expect(await harness.verify(catalog, replica.origin, head)).toEqual([]);
    const keys = await harness.keys();
    expect(keys.filter((key) => key.startsWith('leaves/'))).toHaveLength(leaves);
    expect(keys.filter((key) => key.startsWith('commits/'))).toHaveLength(catalog.commits.length);
    // Idempotent: the finish step retried returns the same summary and moves nothing.
    expect(await finalizer({ backfillId: planned.backfillId })).toEqual(summary);
    // A new execution after the finish plans a new, empty backfill (B at the cursor) instead of resuming.
    const again = await planner({});
    expect(again.backfillId).not.toBe(planned.backfillId);
    expect(again.ranges).toBe(0);
  });

  it('an execution with an until short of the head finishes as until, not caught up: the catalog has more', async () => {
    const planner = (await import('../../../lambda/backfill/lambda/planner.js')).handler;
    const worker = (await import('../../../lambda/backfill/lambda/worker.js')).handler;
    const finalizer = (await import('../../../lambda/backfill/lambda/finalizer.js')).handler;
    const until = formatTimestamp(commitTicks(catalog, 59));
    process.env.CURSOR_NAME = 'bf-until';
    try {
      const planned = await planner({ until, rangeLeaves: 1_000 });
      const object = await harness.clients.s3.send(
        new GetObjectCommand({ Bucket: planned.bucket, Key: planned.rangesKey }),
      );
      const items = JSON.parse(await object.Body!.transformToString('utf8')) as BackfillRange[];
      expect(
        (await worker({ Items: items, BatchInput: { backfillId: planned.backfillId, passes: 0 } }, ENOUGH)).done,
      ).toBe(true);
      const summary = await finalizer({ backfillId: planned.backfillId });
      expect(summary).toMatchObject({
        cursorName: 'bf-until',
        cursorAfter: until,
        commits: 60,
        caughtUp: false,
        stoppedBy: 'until',
      });
      expect(await harness.cursor('bf-until')).toBe(until);
    } finally {
      process.env.CURSOR_NAME = 'bf';
    }
  });

  it("INCLUDE_IDS/EXCLUDE_IDS other than the mirror's filter.json: planner, worker and finish refuse, naming both filters and --refilter", async () => {
    const planner = (await import('../../../lambda/backfill/lambda/planner.js')).handler;
    const worker = (await import('../../../lambda/backfill/lambda/worker.js')).handler;
    const finalizer = (await import('../../../lambda/backfill/lambda/finalizer.js')).handler;
    const env = { CURSOR_NAME: 'bf-filter', SNAPSHOT_PREFIX: 'filtered/', INCLUDE_IDS: 'A*' };
    const before = Object.fromEntries(Object.keys(env).map((key) => [key, process.env[key]]));
    Object.assign(process.env, env);
    try {
      // A first backfill with a filter records it, and stores only what it keeps.
      const until = catalog.commits[19]!.timestamp;
      const first = await planner({ until, rangeLeaves: 1000 });
      const object = await harness.clients.s3.send(
        new GetObjectCommand({ Bucket: first.bucket, Key: first.rangesKey }),
      );
      const items = JSON.parse(await object.Body!.transformToString('utf8')) as BackfillRange[];
      const batch = { Items: items, BatchInput: { backfillId: first.backfillId, passes: 0 } };
      expect((await worker(batch, ENOUGH)).done).toBe(true);
      await finalizer({ backfillId: first.backfillId });
      expect(JSON.parse((await harness.getObject('filtered/filter.json')).body.toString('utf8'))).toEqual({
        include: ['a*'],
        exclude: [],
      });
      const stored = (await harness.keys('filtered/leaves/')).map((key) => key.split('/')[3]!);
      expect(stored.length).toBeGreaterThan(0);
      expect(stored.every((id) => /^a/i.test(id))).toBe(true);

      // The construct's filter changed without `run --refilter`: every handler refuses before storing anything.
      process.env.INCLUDE_IDS = 'a*, c*';
      const refused = {
        code: 'CS_ERR_ID_FILTER_CHANGED',
        message: expect.stringMatching(
          /^INCLUDE_IDS\/EXCLUDE_IDS: this mirror was synced with include a\*, and this run asks for include a\*, c\*: .*catalog-sync run --refilter/,
        ),
      };
      const keysBefore = await harness.keys('filtered/');
      await expect(planner({ until: catalog.commits[39]!.timestamp })).rejects.toMatchObject(refused);
      await expect(worker(batch, ENOUGH)).rejects.toMatchObject(refused);
      await expect(finalizer({ backfillId: first.backfillId })).rejects.toMatchObject(refused);
      expect(await harness.keys('filtered/')).toEqual(keysBefore);
      expect(await harness.cursor('bf-filter')).toBe(formatTimestamp(commitTicks(catalog, 19)));
      // No filter at all is another filter too.
      delete process.env.INCLUDE_IDS;
      await expect(planner({})).rejects.toMatchObject({
        code: 'CS_ERR_ID_FILTER_CHANGED',
        message: expect.stringContaining('this run asks for no filter'),
      });
    } finally {
      for (const [key, value] of Object.entries(before)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
  });
});
