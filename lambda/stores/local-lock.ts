import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { LocalStateError } from './local-state-error.js';

/** The lock file, in the state folder. */
export const LOCK_FILE = 'state.lock';
/**
 * Held, for milliseconds, by whoever removes or rewrites {@link LOCK_FILE} (a breaker, the holder's heartbeat,
 * release, and the holder's guarded writes): so a lock is never removed between a holder's check that it is
 * still its own and the write that check allows.
 */
export const BREAK_LOCK_FILE = 'state.lock.break';
/** How often a holder refreshes its lock's heartbeat. */
export const HEARTBEAT_MS = 1_000;
/**
 * A lock whose heartbeat is older than this is abandoned: its holder died on another host, or was paused (and
 * its writes will then fail). Much larger than {@link HEARTBEAT_MS}, so a busy holder is never judged dead,
 * and than the clock skew between hosts sharing a folder.
 */
export const STALE_LOCK_MS = 30_000;
/** An unreadable lock file (not written by this version) is judged by its age: a writer would have filled it by now. */
const UNREADABLE_LOCK_MS = 5_000;
/** How long a waiter waits for the lock before giving up. */
const LOCK_WAIT_MS = 60_000;

/**
 * What the lock does, for tests that interleave two stores deterministically:
 * - `acquired`: the lock is held, the update has not begun;
 * - `waiting`: the lock is held by a live holder (heartbeat fresh, process alive); this waiter waits;
 * - `stale`: a lock was judged abandoned, before it is broken;
 * - `kept`: a lock judged abandoned was found live, or replaced, when checked again, and kept;
 * - `committing`: the holder is about to check its lock is still its own and make a write;
 * - `heartbeat`: the holder refreshed its heartbeat;
 * - `lost`: the holder found its lock gone or taken (it was judged abandoned): its writes now fail.
 * @internal
 */
export type LockEvent = 'acquired' | 'waiting' | 'stale' | 'kept' | 'committing' | 'heartbeat' | 'lost';

/** The content of a lock file. */
export interface LockRecord {
  /** Random, per acquisition: the only proof a lock is still one's own (host and pid can repeat). */
  readonly token: string;
  readonly host: string;
  readonly pid: number;
  /** Clock of the holder, ms since the epoch. */
  readonly createdAt: number;
  readonly heartbeatAt: number;
}

/** Settings of a {@link LocalLock}; all but the event observer are for tests. */
export interface LocalLockOptions {
  /** Awaited at each {@link LockEvent} (tests). */
  readonly onLockEvent?: (event: LockEvent) => Promise<void> | void;
  /** The clock heartbeats are written and judged with, ms since the epoch (tests move it instead of sleeping). */
  readonly now?: () => number;
  /**
   * Starts the heartbeat of a held lock: calls `beat` periodically until the returned function is called.
   * Default: every {@link HEARTBEAT_MS}, on a timer that does not keep the process alive. Tests drive it by hand.
   */
  readonly scheduleHeartbeat?: (beat: () => Promise<void>) => () => void;
  /**
   * The lock file's name in the state folder (its break lock is this + `.break`); default {@link LOCK_FILE}, the
   * folder's one lock. A backfill range has a lock of its own, so range workers never wait for each other.
   */
  readonly fileName?: string;
}

/** A held lock, given to the action run under it. */
export interface HeldLock {
  /**
   * Runs `write` only if the lock is still this holder's, with the break lock held so that nobody can break it
   * meanwhile. Throws {@link LocalStateError} when the lock was broken (this holder was judged abandoned): a
   * stale copy is never written over the work of whoever took the lock next.
   */
  whileHeld(write: () => Promise<void>): Promise<void>;
}

type Verdict = 'live' | 'stale';

/** A lock file as found: who holds it, and whether it is abandoned; `identity` tells if it was replaced since. */
interface Judged {
  readonly identity: string;
  readonly verdict: Verdict;
  readonly record?: LockRecord;
}

const defaultSchedule = (beat: () => Promise<void>): (() => void) => {
  const timer = setInterval(() => void beat(), HEARTBEAT_MS);
  timer.unref();
  return () => clearInterval(timer);
};

/**
 * An exclusive lock on a folder, safe between processes on one host and between hosts (or containers) sharing
 * the folder. The lock file holds a {@link LockRecord}; it is created whole or not at all (written aside, then
 * hard-linked into place, which fails if it exists). A holder refreshes its heartbeat every second; a waiter
 * breaks the lock only if its holder is a dead process on this same host (at once), or if its heartbeat is
 * older than {@link STALE_LOCK_MS} (a dead or paused holder anywhere). A pid is never judged on another host's
 * word: there, the same number may be any process. Release, heartbeats and writes check the token under the
 * break lock, so a holder that lost its lock never removes, refreshes or writes over its successor's.
 */
export class LocalLock {
  private readonly lockPath: string;
  private readonly breakPath: string;
  /** Where lock records are written before they are linked or renamed into place. */
  private readonly asideDir: string;
  private readonly host = hostname();
  private readonly now: () => number;
  private readonly onLockEvent: LocalLockOptions['onLockEvent'];
  private readonly scheduleHeartbeat: NonNullable<LocalLockOptions['scheduleHeartbeat']>;

  /** @param stateDir - the folder the lock files live in (created if missing). */
  constructor(stateDir: string, options: LocalLockOptions = {}) {
    this.lockPath = join(stateDir, options.fileName ?? LOCK_FILE);
    this.breakPath = options.fileName === undefined ? join(stateDir, BREAK_LOCK_FILE) : `${this.lockPath}.break`;
    // The state folder's tmp/, shared with the atomic writer, which clears leftovers of killed processes.
    this.asideDir = join(stateDir, 'tmp');
    this.now = options.now ?? Date.now;
    this.onLockEvent = options.onLockEvent;
    this.scheduleHeartbeat = options.scheduleHeartbeat ?? defaultSchedule;
  }

  /** Runs `action` holding the lock; waits for it up to a minute, then throws {@link LocalStateError}. */
  async hold<T>(action: (held: HeldLock) => Promise<T>): Promise<T> {
    await mkdir(this.asideDir, { recursive: true });
    const waitingSince = this.now();
    let lastSeen: Judged | undefined;
    for (let attempt = 0; ; attempt++) {
      const record = this.newRecord();
      if (await this.create(this.lockPath, record)) return this.runHeld(record, action);
      lastSeen = (await this.breakIfAbandoned()) ?? lastSeen;
      if (this.now() - waitingSince > LOCK_WAIT_MS) {
        const holder = lastSeen?.record ? ` by ${describe(lastSeen.record)}` : '';
        throw new LocalStateError(
          `${this.lockPath}: still locked${holder} after ${LOCK_WAIT_MS / 1000} s (${attempt} attempts); ` +
            'remove it if no catalog-sync is running on any host sharing this folder',
        );
      }
      await pause();
    }
  }

  private async runHeld<T>(record: LockRecord, action: (held: HeldLock) => Promise<T>): Promise<T> {
    let current = record;
    let lost = false;
    const markLost = async (): Promise<void> => {
      if (lost) return;
      lost = true;
      await this.onLockEvent?.('lost');
    };
    const beat = async (): Promise<void> => {
      if (lost) return;
      try {
        // A busy break lock skips this beat: the next comes long before the lock could be judged stale.
        await this.withBreakLock(async () => {
          if ((await this.readRecord(this.lockPath))?.token !== record.token) return markLost();
          current = { ...current, heartbeatAt: this.now() };
          await this.replace(this.lockPath, current);
          await this.onLockEvent?.('heartbeat');
        });
      } catch {
        // A failed beat (a full disk, a folder gone) is retried by the next one; the writes check the token anyway.
      }
    };
    const held: HeldLock = {
      whileHeld: async (write) => {
        await this.onLockEvent?.('committing');
        await this.untilBreakLock(async () => {
          const found = await this.readRecord(this.lockPath);
          if (found?.token !== record.token) {
            await markLost();
            throw new LocalStateError(
              `${this.lockPath}: this run's lock (${describe(record)}) was ${found ? `taken by ${describe(found)}` : 'removed'} after its ` +
                `heartbeat went ${STALE_LOCK_MS / 1000} s without a beat (the process was paused or too slow); nothing was written`,
            );
          }
          await write();
        });
      },
    };
    const stopHeartbeat = this.scheduleHeartbeat(beat);
    try {
      await this.onLockEvent?.('acquired');
      return await action(held);
    } finally {
      stopHeartbeat();
      await this.release(record).catch(() => undefined);
    }
  }

  /** Removes the lock if it is still `record`'s; a successor's lock is left alone. */
  private async release(record: LockRecord): Promise<void> {
    await this.untilBreakLock(async () => {
      if ((await this.readRecord(this.lockPath))?.token === record.token) await rm(this.lockPath, { force: true });
    });
  }

  /**
   * Removes the lock if its holder can no longer release it. Two waiters may judge the same abandoned lock at
   * once; if both removed it, the second could remove the lock the first had just taken. So it is removed only
   * under the break lock, after checking again that it is the same lock and still abandoned.
   * @returns the lock as judged, for the waiter's error message; undefined if it was gone.
   */
  private async breakIfAbandoned(): Promise<Judged | undefined> {
    const judged = await this.judge(this.lockPath);
    if (judged === undefined) return undefined;
    if (judged.verdict === 'live') {
      await this.onLockEvent?.('waiting');
      return judged;
    }
    await this.onLockEvent?.('stale');
    await this.withBreakLock(async () => {
      const again = await this.judge(this.lockPath);
      if (again?.verdict === 'stale' && again.identity === judged.identity) await rm(this.lockPath, { force: true });
      else await this.onLockEvent?.('kept');
    });
    return judged;
  }

  /**
   * Runs `action` holding the break lock, if it is free; false if another process holds it. A break lock left
   * by a process killed while holding it (it is held for milliseconds) is removed on the way.
   */
  private async withBreakLock(action: () => Promise<void>): Promise<boolean> {
    const record = this.newRecord();
    if (!(await this.create(this.breakPath, record))) {
      const breaker = await this.judge(this.breakPath);
      // Checked again just before removing it, so that it is the same abandoned break lock and not a new one.
      if (breaker?.verdict === 'stale' && (await this.judge(this.breakPath))?.identity === breaker.identity) {
        await rm(this.breakPath, { force: true });
      }
      return false;
    }
    try {
      await action();
    } finally {
      // Ours, unless we were paused past STALE_LOCK_MS holding it; then it was broken and is someone else's.
      if ((await this.readRecord(this.breakPath))?.token === record.token) await rm(this.breakPath, { force: true });
    }
    return true;
  }

  /** {@link withBreakLock}, retried until the break lock is free (up to a minute). */
  private async untilBreakLock(action: () => Promise<void>): Promise<void> {
    const since = this.now();
    while (!(await this.withBreakLock(action))) {
      if (this.now() - since > LOCK_WAIT_MS) {
        throw new LocalStateError(
          `${this.breakPath}: still held after ${LOCK_WAIT_MS / 1000} s; remove it if no catalog-sync is running`,
        );
      }
      await pause();
    }
  }

  private newRecord(): LockRecord {
    const at = this.now();
    return {
      token: randomBytes(16).toString('hex'),
      host: this.host,
      pid: process.pid,
      createdAt: at,
      heartbeatAt: at,
    };
  }

  /** Creates `path` holding `record`, whole; false if it exists. */
  private async create(path: string, record: LockRecord): Promise<boolean> {
    const aside = join(this.asideDir, `lock-${record.token}`);
    await writeFile(aside, JSON.stringify(record));
    try {
      await link(aside, path);
      return true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') return false;
      if (code === 'EPERM' || code === 'ENOTSUP' || code === 'ENOSYS') return createInPlace(path, record); // no hard links here
      throw error;
    } finally {
      await rm(aside, { force: true });
    }
  }

  /** Rewrites `path` with `record` atomically (readers see the old or the new record, never half of one). */
  private async replace(path: string, record: LockRecord): Promise<void> {
    const aside = join(this.asideDir, `lock-${record.token}`);
    await writeFile(aside, JSON.stringify(record));
    try {
      await rename(aside, path);
    } catch (error) {
      await rm(aside, { force: true });
      throw error;
    }
  }

  private async readRecord(path: string): Promise<LockRecord | undefined> {
    const text = await readFile(path, 'utf8').catch(() => undefined);
    return text === undefined ? undefined : parseRecord(text);
  }

  /** Whether the lock at `path` is abandoned; undefined if it is gone. */
  private async judge(path: string): Promise<Judged | undefined> {
    let info;
    let text;
    try {
      info = await stat(path);
      text = await readFile(path, 'utf8');
    } catch {
      return undefined; // gone already, or being replaced: the next attempt tells
    }
    const now = this.now();
    const record = parseRecord(text);
    if (record) {
      const deadHere = record.host === this.host && !isAlive(record.pid);
      return {
        identity: record.token,
        record,
        verdict: deadHere || now - record.heartbeatAt >= STALE_LOCK_MS ? 'stale' : 'live',
      };
    }
    // Not this version's record: a lock of an older version (only its pid) or a file cut short.
    const identity = `inode ${info.ino}`;
    const age = now - info.mtimeMs;
    const pid = Number(text);
    if (Number.isInteger(pid) && pid > 0)
      return { identity, verdict: !isAlive(pid) || age >= STALE_LOCK_MS ? 'stale' : 'live' };
    return { identity, verdict: age >= UNREADABLE_LOCK_MS ? 'stale' : 'live' };
  }
}

/** Where hard links are not supported: `open(…, 'wx')`, then the record (a reader may see it empty for a moment). */
async function createInPlace(path: string, record: LockRecord): Promise<boolean> {
  let handle;
  try {
    handle = await open(path, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    await handle.writeFile(JSON.stringify(record));
  } finally {
    await handle.close();
  }
  return true;
}

function parseRecord(text: string): LockRecord | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockRecord> | null;
    if (
      typeof value === 'object' &&
      value !== null &&
      typeof value.token === 'string' &&
      typeof value.host === 'string' &&
      typeof value.pid === 'number' &&
      typeof value.createdAt === 'number' &&
      typeof value.heartbeatAt === 'number'
    ) {
      return value as LockRecord;
    }
  } catch {
    // not JSON: judged by the caller
  }
  return undefined;
}

function describe(record: LockRecord): string {
  return `pid ${record.pid} on ${record.host} since ${new Date(record.createdAt).toISOString()}`;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Between attempts: 2-10 ms, random so that waiters spread out. */
function pause(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 2 + Math.random() * 8));
}
