/**
 * The cursor and run-log stores, each against the real thing: DynamoDB Local (the shared emulator), dynalite
 * (started here: it ignores ReturnValuesOnConditionCheckFailure, so a conflict re-reads), and the embedded
 * local folder.
 */
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatTimestamp, parseTimestamp } from '../../lambda/contract/time.js';
import { createKuuid, prefix } from '../../lambda/ids/kuuid.js';
import { DynamoStore } from '../../lambda/stores/dynamo-store.js';
import { LocalStore } from '../../lambda/stores/index.js';
import type { CursorStore, RunLogStore } from '../../lambda/stores/types.js';
import type { RunSummary } from '../../lambda/contract/run-summary.js';
import { clientsFor, createCursorTable, startDynamo } from '../../testkit/emulators.js';
import { testServices, uniqueName } from '../../testkit/env.js';

type Store = CursorStore & RunLogStore;
interface Subject {
  name: string;
  store: Store;
  /** The raw run item, where the store is DynamoDB. */
  rawRun?: (cursorName: string, runId: string) => Promise<Record<string, unknown> | undefined>;
}

const subjects: Subject[] = [];
const cleanups: (() => Promise<void> | void)[] = [];

async function dynamoSubject(name: string, endpoint: string): Promise<Subject> {
  const table = uniqueName('stores');
  await createCursorTable(endpoint, table);
  const clients = clientsFor({ dynamoEndpoint: endpoint, s3Endpoint: testServices().s3Endpoint });
  cleanups.push(() => clients.destroy());
  return {
    name,
    store: new DynamoStore(table, clients.dynamo),
    rawRun: async (cursorName, runId) =>
      (await clients.documents.send(new GetCommand({ TableName: table, Key: { pk: cursorName, sk: `run#${runId}` } })))
        .Item,
  };
}

beforeAll(async () => {
  const services = testServices();
  const shared = await dynamoSubject('DynamoDB', services.dynamoEndpoint);
  subjects.push(shared);
  if (services.dynamoKind === 'dynalite') {
    // Java is missing here: the shared emulator is dynalite already.
    subjects.push({ ...shared, name: 'dynalite' });
  } else {
    const saved = process.env.CATALOG_SYNC_TEST_DYNAMO;
    process.env.CATALOG_SYNC_TEST_DYNAMO = 'dynalite';
    try {
      const dynalite = await startDynamo();
      cleanups.push(() => dynalite.stop());
      subjects.push(await dynamoSubject('dynalite', dynalite.endpoint));
    } finally {
      if (saved === undefined) delete process.env.CATALOG_SYNC_TEST_DYNAMO;
      else process.env.CATALOG_SYNC_TEST_DYNAMO = saved;
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-local-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  subjects.push({ name: 'local folder', store: new LocalStore(dir) });
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const A = parseTimestamp('2017-10-31T23:28:02.788239Z');
const B = parseTimestamp('2017-10-31T23:28:02.7882391Z');
const C = parseTimestamp('2017-10-31T23:30:32.4197849Z');

function summaryOf(runId: string, cursorName: string): RunSummary {
  return {
    runId,
    cursorName,
    cursorBefore: formatTimestamp(A),
    cursorAfter: formatTimestamp(C),
    commits: 2,
    leaves: 5,
    deletes: 1,
    quarantined: 0,
    bytes: 1234,
    caughtUp: true,
    stoppedBy: 'caught-up',
    durationMs: 42,
    putRetries: 0,
  };
}

describe.each(['DynamoDB', 'dynalite', 'local folder'])('%s', (kind) => {
  const subject = (): Subject => {
    const found = subjects.find((s) => s.name === kind);
    if (!found) throw new Error(`no ${kind} subject`);
    return found;
  };

  it('compare-and-set: writes from the expected value only, and hands back what is stored on conflict', async () => {
    const { store } = subject();
    const name = uniqueName('cursor');
    expect(await store.read(name)).toBeUndefined();
    expect(await store.compareAndSet(name, undefined, { value: A, commitId: 'a', runId: 'r1' })).toEqual({
      outcome: 'written',
    });
    const first = await store.read(name);
    expect(first).toMatchObject({ value: A, stored: '2017-10-31T23:28:02.7882390Z', commitId: 'a', runId: 'r1' });

    const lost = await store.compareAndSet(name, undefined, { value: C, commitId: 'c', runId: 'r2' });
    expect(lost).toMatchObject({ outcome: 'conflict', current: { value: A, commitId: 'a' } });

    // Two commits 100 ns apart inside one millisecond stay distinct.
    expect(await store.compareAndSet(name, first, { value: B, commitId: 'b', runId: 'r1' })).toEqual({
      outcome: 'written',
    });
    const stale = await store.compareAndSet(name, first, { value: C, commitId: 'c', runId: 'r2' });
    expect(stale).toMatchObject({ outcome: 'conflict', current: { value: B, stored: '2017-10-31T23:28:02.7882391Z' } });
    expect((await store.read(name))?.value).toBe(B);
  });

  it('the run log: newest first, bounded by kuuid prefixes across seconds, limited, with a TTL', async () => {
    const { store, rawRun } = subject();
    const cursorName = uniqueName('runs');
    // Each in its own second: kuuid ids order by second, and randomly within one (see sortable-ids.md).
    const times = [
      '2026-11-01T00:00:00.900Z',
      '2026-11-01T00:00:01.000Z',
      '2026-11-01T00:00:02.999Z',
      '2026-11-01T00:00:03.000Z',
      '2026-11-01T00:01:00.000Z',
    ];
    const ids: string[] = [];
    for (const time of times) {
      const runId = createKuuid({ now: () => Date.parse(time) }).id();
      ids.push(runId);
      await store.appendRun(summaryOf(runId, cursorName), Math.floor(Date.now() / 1000) + 30 * 86_400);
    }
    const newestFirst = [...ids].reverse();
    expect((await store.listRuns(cursorName, { limit: 100 })).map((run) => run.runId)).toEqual(newestFirst);
    expect((await store.listRuns(cursorName, { limit: 2 })).map((run) => run.runId)).toEqual(newestFirst.slice(0, 2));
    // From the second 00:00:01 to the second 00:00:02, both inclusive, whatever the milliseconds.
    const bounded = await store.listRuns(cursorName, {
      limit: 100,
      fromId: prefix('2026-11-01T00:00:01.500Z'),
      toId: prefix('2026-11-01T00:00:02.001Z'),
    });
    expect(bounded.map((run) => run.runId)).toEqual([ids[2], ids[1]]);
    const since = await store.listRuns(cursorName, { limit: 100, fromId: prefix('2026-11-01T00:00:03Z') });
    expect(since.map((run) => run.runId)).toEqual([ids[4], ids[3]]);
    const until = await store.listRuns(cursorName, { limit: 100, toId: prefix('2026-11-01T00:00:00.000Z') });
    expect(until.map((run) => run.runId)).toEqual([ids[0]]);
    expect(await store.listRuns(cursorName, { limit: 100, fromId: prefix('2026-11-01T00:02:00Z') })).toEqual([]);
    expect(bounded[0]).toEqual(summaryOf(ids[2]!, cursorName));
    // Two runs in one second are both listed.
    const twin = createKuuid({ now: () => Date.parse('2026-11-01T00:00:00.100Z') }).id();
    await store.appendRun(summaryOf(twin, cursorName), Math.floor(Date.now() / 1000) + 60);
    const second = await store.listRuns(cursorName, {
      limit: 100,
      fromId: prefix('2026-11-01T00:00:00Z'),
      toId: prefix('2026-11-01T00:00:00Z'),
    });
    expect(second.map((run) => run.runId).sort()).toEqual([ids[0], twin].sort());
    if (rawRun) {
      const item = await rawRun(cursorName, ids[0]!);
      expect(item?.expiresAt).toBeGreaterThan(Date.now() / 1000 + 29 * 86_400);
      expect(item?.sk).toBe(`run#${ids[0]}`);
    }
  });

  it('the run log: runs of one second list in the order they moved the cursor, whatever their random ids, across the limit', async () => {
    const { store } = subject();
    const cursorName = uniqueName('second');
    const expiresAt = Math.floor(Date.now() / 1000) + 3600;
    // 15 runs in one second, one after the other (each starts where the last stopped), with random
    // parts counting DOWN: as bytes their ids sort oldest first. More than `runs` reads past a limit.
    const cursorAt = (i: number): string => formatTimestamp(C + BigInt(i) * 10_000n);
    const sameSecond = Array.from({ length: 15 }, (_, i) => {
      const runId = createKuuid({
        now: () => Date.parse('2026-11-02T00:00:05.000Z') + i,
        randomBytes: () => Buffer.from([0, 0, 0, 99 - i]),
      }).id();
      return { ...summaryOf(runId, cursorName), cursorBefore: cursorAt(i), cursorAfter: cursorAt(i + 1) };
    });
    const earlier = {
      ...summaryOf(createKuuid({ now: () => Date.parse('2026-11-02T00:00:04.999Z') }).id(), cursorName),
      cursorAfter: cursorAt(0),
    };
    const later = {
      ...summaryOf(createKuuid({ now: () => Date.parse('2026-11-02T00:00:06.000Z') }).id(), cursorName),
      cursorBefore: cursorAt(15),
      cursorAfter: cursorAt(15),
    };
    for (const run of [sameSecond[7]!, later, ...sameSecond.slice(0, 7).reverse(), earlier, ...sameSecond.slice(8)])
      await store.appendRun(run, expiresAt);
    const newestFirst = [later, ...[...sameSecond].reverse(), earlier].map((run) => run.runId);
    expect([...sameSecond.map((run) => run.runId)].sort()).toEqual(sameSecond.map((run) => run.runId).reverse()); // ids alone would misorder them
    expect((await store.listRuns(cursorName, { limit: 100 })).map((run) => run.runId)).toEqual(newestFirst);
    for (const limit of [1, 2, 4, 11, 16, 17]) {
      expect(
        (await store.listRuns(cursorName, { limit })).map((run) => run.runId),
        `limit ${limit}`,
      ).toEqual(newestFirst.slice(0, limit));
    }
    const second = await store.listRuns(cursorName, {
      limit: 3,
      fromId: prefix('2026-11-02T00:00:05Z'),
      toId: prefix('2026-11-02T00:00:05Z'),
    });
    expect(second.map((run) => run.runId)).toEqual(newestFirst.slice(1, 4));
  });
});

describe('the local run log', () => {
  it('is compacted past its size bound to the newest live runs, and a cut-short last line is skipped', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-runlog-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const store = new LocalStore(dir, { compactRunLogBytes: 3_000, maxRuns: 4 });
    const now = Math.floor(Date.now() / 1000);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const runId = createKuuid({ now: () => Date.parse('2026-11-01T00:00:00Z') + i * 1000 }).id();
      ids.push(runId);
      // Every third run has already expired.
      await store.appendRun(summaryOf(runId, 'compact'), i % 3 === 0 ? now - 1 : now + 3600);
    }
    const live = ids.filter((_, i) => i % 3 !== 0).reverse();
    const listed = (await store.listRuns('compact', { limit: 100 })).map((run) => run.runId);
    expect(listed).toEqual(live.slice(0, listed.length));
    expect(listed.length).toBeGreaterThanOrEqual(4);
    expect(listed.length).toBeLessThan(live.length);
    const path = join(dir, '.catalog-sync', 'runs', 'compact.jsonl');
    expect(statSync(path).size).toBeLessThan(3_000 + 600);
    appendFileSync(path, '{"runId":"cut sh');
    expect((await store.listRuns('compact', { limit: 100 })).map((run) => run.runId)).toEqual(listed);
  });

  it('atomic writes stage in .catalog-sync/tmp/, never beside the keys, and old leftovers of killed runs go', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-tmp-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const tmp = join(dir, '.catalog-sync', 'tmp');
    mkdirSync(tmp, { recursive: true });
    writeFileSync(join(tmp, '999-old'), 'half a manifest');
    utimesSync(join(tmp, '999-old'), new Date(Date.now() - 2 * 3600_000), new Date(Date.now() - 2 * 3600_000));
    writeFileSync(join(tmp, '998-recent'), 'a write in flight elsewhere');
    const store = new LocalStore(dir);
    await store.putJson('commits/001e9fzMHc3F.json', { ok: true });
    expect(readdirSync(tmp)).toEqual(['998-recent']);
    expect(readdirSync(join(dir, 'commits'))).toEqual(['001e9fzMHc3F.json']);
  });

  it('a lock left by a killed process is broken at once, not after a timeout', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-lock-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    // The pid of a process that has exited: as a SIGKILLed run leaves it.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    mkdirSync(join(dir, '.catalog-sync'), { recursive: true });
    writeFileSync(join(dir, '.catalog-sync', 'state.lock'), dead.stdout);
    // And killed while breaking such a lock, too.
    writeFileSync(join(dir, '.catalog-sync', 'state.lock.break'), dead.stdout);
    const store = new LocalStore(dir);
    expect(await store.compareAndSet('c', undefined, { value: A, commitId: 'a', runId: 'r' })).toEqual({
      outcome: 'written',
    });
    expect(readdirSync(join(dir, '.catalog-sync')).filter((name) => name.startsWith('state.lock'))).toEqual([]);
  });

  it('two waiters that judge the same dead lock at once: the later one does not break the lock the first took', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-lock-race-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    await new LocalStore(dir).compareAndSet('c', undefined, { value: A, commitId: 'a', runId: 'r0' });
    const expected = await new LocalStore(dir).read('c');
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(join(dir, '.catalog-sync', 'state.lock'), dead.stdout);

    // Interleaving: A judges the dead lock stale and pauses; B judges it too, breaks it, takes the lock and
    // pauses holding it; then A goes on. A must not take the lock while B holds it.
    const signal = () => {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      return { promise, resolve };
    };
    const aJudged = signal();
    const goA = signal();
    const bHolds = signal();
    const goB = signal();
    let bHolding = false;
    let overlapped = false;
    const events: string[] = [];
    const storeA = new LocalStore(dir, {
      onLockEvent: async (event) => {
        events.push(`A ${event}`);
        if (event === 'stale' && !events.includes('B acquired')) {
          aJudged.resolve();
          await goA.promise;
        }
        if (event === 'acquired' && bHolding) overlapped = true;
        if (event === 'kept' || event === 'acquired') goB.resolve();
      },
    });
    const storeB = new LocalStore(dir, {
      onLockEvent: async (event) => {
        events.push(`B ${event}`);
        if (event !== 'acquired') return;
        bHolding = true;
        bHolds.resolve();
        await goB.promise;
        bHolding = false;
      },
    });
    const a = storeA.compareAndSet('c', expected, { value: C, commitId: 'c', runId: 'rA' });
    await aJudged.promise;
    const b = storeB.compareAndSet('c', expected, { value: B, commitId: 'b', runId: 'rB' });
    await bHolds.promise;
    goA.resolve();
    const [resultA, resultB] = await Promise.all([a, b]);
    expect(overlapped).toBe(false);
    expect(events.slice(0, 4)).toEqual(['A stale', 'B stale', 'B acquired', 'A kept']);
    expect(resultB).toEqual({ outcome: 'written' });
    expect(resultA).toMatchObject({ outcome: 'conflict', current: { value: B } });
    expect((await new LocalStore(dir).read('c'))?.value).toBe(B);
    expect(readdirSync(join(dir, '.catalog-sync')).filter((name) => name.startsWith('state.lock'))).toEqual([]);
  });
});
