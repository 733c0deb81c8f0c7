/**
 * The backfill store, against DynamoDB (the shared emulator) and the embedded local folder: a plan is created
 * once, the newest plan of a cursor is found among older plans and range items, a lease only moves forward and
 * never on a finished plan, a finished plan keeps its first summary, a range's progress only moves forward
 * (a compare-and-set on the stored progress), and a done range stays done with its totals.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackfillStatus, type BackfillPlan } from '../../../lambda/contract/backfill.js';
import type { RunSummary } from '../../../lambda/contract/run-summary.js';
import { id as newId } from '../../../lambda/ids/kuuid.js';
import { DynamoStore } from '../../../lambda/stores/dynamo-store.js';
import { LocalStore } from '../../../lambda/stores/index.js';
import type { BackfillStore, CursorStore } from '../../../lambda/stores/types.js';
import { clientsFor, createCursorTable } from '../../../testkit/emulators.js';
import { testServices, uniqueName } from '../../../testkit/env.js';

const subjects: { name: string; store: BackfillStore & CursorStore }[] = [];
const cleanups: (() => void)[] = [];

beforeAll(async () => {
  const services = testServices();
  const table = uniqueName('backfill-stores');
  await createCursorTable(services.dynamoEndpoint, table);
  const clients = clientsFor(services);
  cleanups.push(() => clients.destroy());
  subjects.push({ name: `DynamoDB (${services.dynamoKind})`, store: new DynamoStore(table, clients.dynamo) });
  const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-backfill-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  subjects.push({ name: 'local folder', store: new LocalStore(dir) });
});

afterAll(() => {
  for (const cleanup of cleanups.reverse()) cleanup();
});

function planOf(cursorName: string, backfillId: string, extra: Partial<BackfillPlan> = {}): BackfillPlan {
  return {
    backfillId,
    cursorName,
    source: 'https://example.test/v3/index.json',
    prefix: '',
    start: '0001-01-01T00:00:00.0000000Z',
    bound: '2020-01-01T00:00:00.0000000Z',
    ranges: 3,
    leaves: 30,
    createdAt: new Date().toISOString(),
    status: BackfillStatus.running,
    leaseUntil: 1_000,
    ...extra,
  };
}

const summary = (runId: string, cursorName: string): RunSummary => ({
  runId,
  cursorName,
  cursorBefore: '0001-01-01T00:00:00.0000000Z',
  cursorAfter: '2020-01-01T00:00:00.0000000Z',
  commits: 1,
  leaves: 2,
  deletes: 0,
  quarantined: 0,
  bytes: 3,
  caughtUp: true,
  stoppedBy: 'caught-up',
  durationMs: 4,
  putRetries: 0,
});

const totals = (commits: number) => ({
  commits,
  leaves: commits * 2,
  deletes: 1,
  quarantined: 0,
  bytes: commits * 100,
});

describe.each(['DynamoDB', 'local folder'])('backfill store: %s', (kind) => {
  const subject = () => subjects.find((s) => s.name.startsWith(kind))!.store;

  it('creates a plan once, finds the newest plan past range items, renews leases forward only, finishes once', async () => {
    const store = subject();
    const cursor = uniqueName('cursor');
    expect(await store.newestPlan(cursor)).toBeUndefined();
    const older = newId(Date.now() - 60_000);
    const newer = newId();
    expect(await store.createPlan(planOf(cursor, older))).toBe(true);
    expect(await store.createPlan(planOf(cursor, older, { ranges: 9 }))).toBe(false);
    expect((await store.readPlan(cursor, older))?.ranges).toBe(3);
    await store.advanceRange(cursor, older, 12, undefined, {
      progress: '2019-01-01T00:00:00.0000000Z',
      progressCommitId: 'c',
      totals: totals(1),
      runId: 'r',
    });
    expect((await store.newestPlan(cursor))?.backfillId).toBe(older);
    expect(await store.createPlan(planOf(cursor, newer))).toBe(true);
    await store.advanceRange(cursor, newer, 2, undefined, {
      progress: '2019-01-01T00:00:00.0000000Z',
      progressCommitId: 'c',
      totals: totals(1),
      runId: 'r',
    });
    expect((await store.newestPlan(cursor))?.backfillId).toBe(newer);
    // Another cursor's plans are not this one's; the cursor item itself is not a plan.
    expect(await store.newestPlan(uniqueName('other'))).toBeUndefined();

    // Without a holder, a lease still live at `now` (1,000 > 500) moves, forward only.
    await store.renewLease(cursor, newer, 5_000, undefined, 500);
    await store.renewLease(cursor, newer, 2_000, undefined, 500);
    expect((await store.readPlan(cursor, newer))?.leaseUntil).toBe(5_000);
    const finished = await store.finishPlan(cursor, newer, '2026-01-01T00:00:00.000Z', summary(newer, cursor));
    expect(finished).toMatchObject({
      status: 'finished',
      finishedAt: '2026-01-01T00:00:00.000Z',
      summary: summary(newer, cursor),
    });
    const again = await store.finishPlan(cursor, newer, '2027-01-01T00:00:00.000Z', {
      ...summary(newer, cursor),
      commits: 99,
    });
    expect(again.finishedAt).toBe('2026-01-01T00:00:00.000Z');
    expect(again.summary?.commits).toBe(1);
    await store.renewLease(cursor, newer, 9_000, undefined, 500);
    expect((await store.readPlan(cursor, newer))?.leaseUntil).toBe(5_000);
  });

  it('renews a lease only for its holder, so a lease given back stays given back; the active claim names its holder', async () => {
    const store = subject();
    const cursor = uniqueName('cursor');
    const id = newId();
    const lease = async () => (await store.readPlan(cursor, id))!;
    expect(await store.createPlan(planOf(cursor, id, { leaseUntil: 1_000, leaseHolder: 'execution-a' }))).toBe(true);
    await store.renewLease(cursor, id, 2_000, 'execution-b', 500);
    expect((await lease()).leaseUntil).toBe(1_000);
    // Its holder renews it, even lapsed (at 1,500) when no one took it over.
    await store.renewLease(cursor, id, 2_000, 'execution-a', 1_500);
    expect(await lease()).toMatchObject({ leaseUntil: 2_000, leaseHolder: 'execution-a' });
    // Given back (Release, the CLI's stop): no holder, the lease ends at once (2,500).
    expect(await store.setLease(cursor, id, 2_500, undefined)).toBe(true);
    expect((await lease()).leaseHolder).toBeUndefined();
    // Neither its last holder's workers nor a caller without a holder (at 3,000: the lease is over) renew it.
    await store.renewLease(cursor, id, 9_000, 'execution-a', 3_000);
    await store.renewLease(cursor, id, 9_000, undefined, 3_000);
    expect((await lease()).leaseUntil).toBe(2_500);
    // Taken over by a new holder: the old holder's renewals no longer move it; the new one's do.
    expect(await store.setLease(cursor, id, 4_000, 2_500, 'execution-c')).toBe(true);
    await store.renewLease(cursor, id, 9_000, 'execution-a', 3_000);
    expect((await lease()).leaseUntil).toBe(4_000);
    await store.renewLease(cursor, id, 9_000, 'execution-c', 3_000);
    expect((await lease()).leaseUntil).toBe(9_000);

    // The active claim: who claimed it, read back; none when the claimer named no one.
    expect(await store.claimActive(cursor, id, undefined, 100, 'execution-a')).toBe(true);
    expect(await store.readActive(cursor)).toEqual({ backfillId: id, claimedAt: 100, holder: 'execution-a' });
    const next = newId();
    expect(await store.claimActive(cursor, next, id, 200)).toBe(true);
    expect(await store.readActive(cursor)).toEqual({ backfillId: next, claimedAt: 200 });
  });

  it("moves a range's progress only by compare-and-set, and a done range stays done with its totals", async () => {
    const store = subject();
    const cursor = uniqueName('cursor');
    const id = newId();
    expect(await store.readRange(cursor, id, 0)).toBeUndefined();
    const p1 = { progress: '2019-01-01T00:00:01.0000000Z', progressCommitId: 'c1', totals: totals(1), runId: 'r1' };
    const p2 = { progress: '2019-01-01T00:00:02.0000000Z', progressCommitId: 'c2', totals: totals(2), runId: 'r1' };
    expect(await store.advanceRange(cursor, id, 0, undefined, p1)).toEqual({ outcome: 'written' });
    // A duplicated worker that read nothing loses, and is told what is stored.
    const lost = await store.advanceRange(cursor, id, 0, undefined, p2);
    expect(lost).toMatchObject({
      outcome: 'conflict',
      current: { n: 0, done: false, progress: p1.progress, commits: 1 },
    });
    expect(await store.advanceRange(cursor, id, 0, p1.progress, p2)).toEqual({ outcome: 'written' });
    expect(await store.readRange(cursor, id, 0)).toMatchObject({
      n: 0,
      done: false,
      progress: p2.progress,
      progressCommitId: 'c2',
      ...totals(2),
    });

    const done = await store.markRangeDone(cursor, id, 0, {
      progress: p2.progress,
      progressCommitId: 'c2',
      totals: totals(2),
    });
    expect(done).toMatchObject({ n: 0, done: true, progress: p2.progress, ...totals(2) });
    // Done stays done: neither a second done nor a late progress write changes it.
    expect(await store.markRangeDone(cursor, id, 0, { totals: totals(7) })).toMatchObject({ done: true, ...totals(2) });
    const late = await store.advanceRange(cursor, id, 0, p2.progress, {
      ...p2,
      progress: '2019-01-01T00:00:03.0000000Z',
      totals: totals(3),
    });
    expect(late.outcome).toBe('conflict');
    expect(await store.readRange(cursor, id, 0)).toMatchObject({ done: true, progress: p2.progress, ...totals(2) });

    // Done never moves progress back: a worker that finishes behind a stored progress leaves it.
    const p3 = { progress: '2019-01-01T00:00:03.0000000Z', progressCommitId: 'c3', totals: totals(3), runId: 'r2' };
    expect(await store.advanceRange(cursor, id, 5, undefined, p3)).toEqual({ outcome: 'written' });
    expect(
      await store.markRangeDone(cursor, id, 5, { progress: p1.progress, progressCommitId: 'c1', totals: totals(3) }),
    ).toMatchObject({
      done: true,
      progress: p3.progress,
      progressCommitId: 'c3',
    });

    // A range with no commit is done without progress.
    expect(await store.markRangeDone(cursor, id, 11, { totals: totals(0) })).toMatchObject({
      n: 11,
      done: true,
      commits: 0,
    });
    expect((await store.readRange(cursor, id, 11))?.progress).toBeUndefined();
    expect((await store.listRanges(cursor, id)).map((r) => [r.n, r.done])).toEqual([
      [0, true],
      [5, true],
      [11, true],
    ]);
    expect(await store.listRanges(cursor, newId())).toEqual([]);
  });
});
