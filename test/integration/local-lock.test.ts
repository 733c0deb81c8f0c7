/**
 * The local folder's lock (issue 10, item 2), step by step: two LocalStores on one folder, their lock events
 * awaited by the test, a clock moved by hand instead of waiting 30 s, and heartbeats driven by hand.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseTimestamp, type Ticks } from '../../lambda/contract/time.js';
import { LocalStateError, LocalStore, STATE_DIR, type LockEvent } from '../../lambda/stores/index.js';
import type { CompareAndSetResult } from '../../lambda/stores/types.js';

const Y2019 = parseTimestamp('2019-01-01T00:00:00.0000000Z');
const Y2020 = parseTimestamp('2020-01-01T00:00:00.0000000Z');
const Y2022 = parseTimestamp('2022-01-01T00:00:00.0000000Z');
const STALE_MS = 30_000;

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A folder whose cursor `c` is at 2019. */
async function folderAt2019(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-lock-'));
  dirs.push(dir);
  await new LocalStore(dir).compareAndSet('c', undefined, { value: Y2019, commitId: '2019', runId: 'r0' });
  return dir;
}

const lockPath = (dir: string): string => join(dir, STATE_DIR, 'state.lock');

function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** A clock the test moves. */
function manualClock(): { now: () => number; advance: (ms: number) => void } {
  let at = Date.now();
  return { now: () => at, advance: (ms) => (at += ms) };
}

/** A heartbeat that beats only when the test says so. */
function manualHeartbeat(): {
  scheduleHeartbeat: (beat: () => Promise<void>) => () => void;
  beat: () => Promise<void>;
} {
  let current: (() => Promise<void>) | undefined;
  return {
    scheduleHeartbeat: (beat) => {
      current = beat;
      return () => (current = undefined);
    },
    beat: async () => current?.(),
  };
}

/** Also sets the lock file's mtime back: the age an older version judged by. */
function ageLockFile(dir: string, ms: number): void {
  const past = new Date(Date.now() - ms);
  utimesSync(lockPath(dir), past, past);
}

/** The pid of a process that has exited, as a SIGKILLed run leaves it. */
function deadPid(): number {
  return Number(
    spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout,
  );
}

function writeLockRecord(dir: string, record: { host: string; pid: number; heartbeatAt: number }): void {
  mkdirSync(join(dir, STATE_DIR), { recursive: true });
  writeFileSync(lockPath(dir), JSON.stringify({ token: 'someone-else', createdAt: record.heartbeatAt, ...record }));
}

/** The newest value any of these writes stored, as acknowledged to its caller. */
function newestAcknowledged(writes: [CompareAndSetResult, Ticks][]): Ticks {
  return writes
    .filter(([result]) => result.outcome === 'written')
    .reduce((max, [, value]) => (value > max ? value : max), Y2019);
}

describe('the local lock', () => {
  it('a live holder that heartbeats keeps its lock however long it holds it: the cursor never goes backward', {
    timeout: 15_000,
  }, async () => {
    const dir = await folderAt2019();
    const expected = await new LocalStore(dir).read('c');
    const clock = manualClock();
    const heartA = manualHeartbeat();
    const aRead = signal();
    const goA = signal();
    const bWaits = signal();
    const storeA = new LocalStore(dir, {
      lock: { now: clock.now, scheduleHeartbeat: heartA.scheduleHeartbeat },
      onLockEvent: async (event) => {
        if (event !== 'committing') return;
        aRead.resolve();
        await goA.promise;
      },
    });
    const eventsB: LockEvent[] = [];
    const storeB = new LocalStore(dir, {
      lock: { now: clock.now },
      onLockEvent: (event) => {
        eventsB.push(event);
        if (event === 'waiting') bWaits.resolve();
      },
    });

    // A holds the lock and has read the state (cursor 2019); it is about to write 2020.
    const a = storeA.compareAndSet('c', expected, { value: Y2020, commitId: '2020', runId: 'rA' });
    await aRead.promise;
    // A is slow: its lock turns 40 s old, but A heartbeats every 10 s of it.
    for (let i = 0; i < 4; i++) {
      clock.advance(10_000);
      await heartA.beat();
    }
    ageLockFile(dir, 40_000);
    // B tries, from the same cursor, to write 2022.
    const b = storeB.compareAndSet('c', expected, { value: Y2022, commitId: '2022', runId: 'rB' });
    await Promise.race([bWaits.promise, b]);
    goA.resolve();
    const [resultA, resultB] = await Promise.all([a, b]);

    const stored = (await new LocalStore(dir).read('c'))?.value;
    expect(stored).toBe(
      newestAcknowledged([
        [resultA, Y2020],
        [resultB, Y2022],
      ]),
    );
    expect(eventsB).not.toContain('stale');
    expect(resultA).toEqual({ outcome: 'written' });
    expect(resultB).toMatchObject({ outcome: 'conflict', current: { value: Y2020 } });
    expect(existsSync(lockPath(dir))).toBe(false);
  });

  it('a holder paused past the window (no heartbeat) loses its lock: its write fails, writes nothing, and leaves the new lock alone', {
    timeout: 15_000,
  }, async () => {
    const dir = await folderAt2019();
    const expected = await new LocalStore(dir).read('c');
    const clock = manualClock();
    const aRead = signal();
    const goA = signal();
    const bHolds = signal();
    const goB = signal();
    const eventsA: LockEvent[] = [];
    const storeA = new LocalStore(dir, {
      lock: { now: clock.now, scheduleHeartbeat: manualHeartbeat().scheduleHeartbeat },
      onLockEvent: async (event) => {
        eventsA.push(event);
        if (event !== 'committing') return;
        aRead.resolve();
        await goA.promise;
      },
    });
    const storeB = new LocalStore(dir, {
      lock: { now: clock.now, scheduleHeartbeat: manualHeartbeat().scheduleHeartbeat },
      onLockEvent: async (event) => {
        if (event !== 'acquired') return;
        bHolds.resolve();
        await goB.promise;
      },
    });

    const a = storeA.compareAndSet('c', expected, { value: Y2020, commitId: '2020', runId: 'rA' });
    await aRead.promise;
    // A is paused (SIGSTOP, a VM suspended) for 31 s: no heartbeat. B breaks the lock and takes it.
    clock.advance(STALE_MS + 1_000);
    ageLockFile(dir, STALE_MS + 1_000);
    const b = storeB.compareAndSet('c', expected, { value: Y2022, commitId: '2022', runId: 'rB' });
    await bHolds.promise;
    const bLock = readFileSync(lockPath(dir), 'utf8');
    goA.resolve();
    const failure = await a.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(LocalStateError);
    expect((failure as Error).message).toMatch(
      /state\.lock: this run's lock .* was taken by pid \d+ on .*; nothing was written/,
    );
    expect(eventsA).toContain('lost');
    // A's release left B's lock in place.
    expect(readFileSync(lockPath(dir), 'utf8')).toBe(bLock);
    goB.resolve();
    expect(await b).toEqual({ outcome: 'written' });
    expect((await new LocalStore(dir).read('c'))?.value).toBe(Y2022);
  });

  it("release does not delete someone else's lock", { timeout: 15_000 }, async () => {
    const dir = await folderAt2019();
    const holding = signal();
    const goA = signal();
    const storeA = new LocalStore(dir, {
      lock: { scheduleHeartbeat: manualHeartbeat().scheduleHeartbeat },
      onLockEvent: async (event) => {
        if (event !== 'acquired') return;
        holding.resolve();
        await goA.promise;
      },
    });
    // A finds a conflict (it writes nothing) and releases; meanwhile its lock was broken and taken by another.
    const a = storeA.compareAndSet('c', undefined, { value: Y2020, commitId: '2020', runId: 'rA' });
    await holding.promise;
    writeLockRecord(dir, { host: 'another-host', pid: 1234, heartbeatAt: Date.now() });
    const successor = readFileSync(lockPath(dir), 'utf8');
    goA.resolve();
    expect(await a).toMatchObject({ outcome: 'conflict' });
    expect(readFileSync(lockPath(dir), 'utf8')).toBe(successor);
  });

  it('a dead holder on this host is broken at once, however fresh its heartbeat', { timeout: 15_000 }, async () => {
    const dir = await folderAt2019();
    const expected = await new LocalStore(dir).read('c');
    writeLockRecord(dir, { host: hostname(), pid: deadPid(), heartbeatAt: Date.now() });
    const events: LockEvent[] = [];
    const store = new LocalStore(dir, { onLockEvent: (event) => void events.push(event) });
    expect(await store.compareAndSet('c', expected, { value: Y2020, commitId: '2020', runId: 'r' })).toEqual({
      outcome: 'written',
    });
    expect(events).toEqual(['stale', 'acquired', 'committing']);
  });

  it("another host's lock is not broken for its pid (a number that means nothing here), only once its heartbeat is stale", {
    timeout: 15_000,
  }, async () => {
    const dir = await folderAt2019();
    const expected = await new LocalStore(dir).read('c');
    const clock = manualClock();
    const pid = deadPid();
    writeLockRecord(dir, { host: 'another-host', pid, heartbeatAt: clock.now() });
    const events: LockEvent[] = [];
    const store = new LocalStore(dir, {
      lock: { now: clock.now },
      onLockEvent: (event) => {
        events.push(event);
        // The other host's holder stops heartbeating (it died): its lock ages past the window.
        if (event === 'waiting' && !events.includes('stale')) clock.advance(STALE_MS);
      },
    });
    expect(await store.compareAndSet('c', expected, { value: Y2020, commitId: '2020', runId: 'r' })).toEqual({
      outcome: 'written',
    });
    expect(events).toEqual(['waiting', 'stale', 'acquired', 'committing']);
  });
});
