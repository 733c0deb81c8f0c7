import { randomBytes } from 'node:crypto';
import { appendFile, mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { MAX_FILE_NAME_BYTES } from '../catalog/identity.js';
import { formatTimestamp, parseTimestamp } from '../catalog/timestamp.js';
import type { RunSummary } from '../sync/run-summary.js';
import { compareRunsNewestFirst } from './run-order.js';
import type { CompareAndSetResult, CursorState, CursorStore, CursorTarget, RunLogStore, RunQuery, SnapshotStore } from './types.js';

/** Where the embedded default keeps its cursors and run log, inside the data folder. */
export const STATE_DIR = '.catalog-sync';
const STATE_FILE = 'state.json';
const LOCK_FILE = 'state.lock';
/** Held, for microseconds, by whoever removes a stale {@link LOCK_FILE}: one breaker at a time. */
const BREAK_LOCK_FILE = 'state.lock.break';
/** A lock older than this is left over by a killed process: state updates take milliseconds. */
const STALE_LOCK_MS = 30_000;
/** A lock file still without a process id after this was left by a process killed while creating it. */
const UNNAMED_LOCK_MS = 5_000;
/** How long a run waits for the lock before giving up. */
const LOCK_WAIT_MS = 60_000;
/** Temporary files of atomic writes, inside the state folder. */
const TMP_DIR = 'tmp';
/** A temporary file older than this was left by a killed process: no write takes an hour. */
const STALE_TMP_MS = 60 * 60 * 1000;
/** The run log of each cursor: one JSON line per run, appended, so a checkpoint never rewrites it. */
const RUNS_DIR = 'runs';
/** Runs kept in a local log at most, newest first, besides the TTL. */
const MAX_LOCAL_RUNS = 5_000;
/** A log past this size is compacted to the newest {@link MAX_LOCAL_RUNS} live runs. */
const COMPACT_RUN_LOG_BYTES = 4 * 1024 * 1024;

type StoredRun = RunSummary & { sk: string; expiresAt: number };

/**
 * What the lock does, for tests that interleave two stores deterministically: `acquired` (the lock is
 * held, the update has not begun), `stale` (a lock was judged left by a dead process, before it is
 * broken), `kept` (a lock judged stale was found live, or replaced, when checked again, and kept).
 * @internal
 */
export type LockEvent = 'acquired' | 'stale' | 'kept';

interface StateFile {
  cursors: Record<string, { cursor: string; commitId?: string; runId?: string; updatedAt?: string }>;
}

/** The local state file could not be read or locked. */
export class LocalStateError extends Error {
  override readonly name = 'LocalStateError';
}

/**
 * The embedded default: snapshots as files with exactly the S3 key layout, the cursors in one JSON file, and
 * each cursor's run log in a JSON-lines file that runs append to (a checkpoint never rewrites the log). Every
 * write is atomic (a temporary file, then a rename), and cursor updates are compare-and-set under an exclusive
 * lock file, so two local runs at once are as safe as two Lambdas.
 */
export class LocalStore implements CursorStore, RunLogStore, SnapshotStore {
  /** Each key segment is a file or folder name. */
  readonly maxKeySegmentBytes = MAX_FILE_NAME_BYTES;
  private readonly stateDir: string;

  private readonly compactRunLogBytes: number;
  private readonly maxRuns: number;

  private readonly onLockEvent: ((event: LockEvent) => Promise<void> | void) | undefined;

  /**
   * @param options - run-log compaction: past `compactRunLogBytes`, keep the newest `maxRuns` live runs;
   * `onLockEvent`, for tests only, is awaited at each {@link LockEvent}.
   */
  constructor(
    readonly root: string,
    options: { compactRunLogBytes?: number; maxRuns?: number; onLockEvent?: (event: LockEvent) => Promise<void> | void } = {},
  ) {
    this.stateDir = join(root, STATE_DIR);
    this.compactRunLogBytes = options.compactRunLogBytes ?? COMPACT_RUN_LOG_BYTES;
    this.maxRuns = options.maxRuns ?? MAX_LOCAL_RUNS;
    this.onLockEvent = options.onLockEvent;
  }

  // --- snapshots -------------------------------------------------------------------------------------

  async putLeaf(key: string, body: Buffer): Promise<void> {
    await this.writeAtomic(this.pathOf(key), body);
  }

  async putJson(key: string, value: unknown): Promise<void> {
    await this.writeAtomic(this.pathOf(key), Buffer.from(JSON.stringify(value)));
  }

  async getJson(key: string): Promise<unknown> {
    const text = await readTextIfExists(this.pathOf(key));
    return text === undefined ? undefined : JSON.parse(text);
  }

  async deleteKey(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async *listKeys(prefix: string, startAfter?: string): AsyncIterable<string> {
    const keys: string[] = [];
    await this.walk(this.root, '', keys);
    keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (const key of keys) {
      if (key.startsWith(prefix) && (startAfter === undefined || key > startAfter)) yield key;
    }
  }

  private async walk(dir: string, relative: string, keys: string[]): Promise<void> {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const entry of entries) {
      if (relative === '' && entry.name === STATE_DIR) continue;
      if (entry.name.includes('.tmp-')) continue;
      const key = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) await this.walk(join(dir, entry.name), key, keys);
      else keys.push(key);
    }
  }

  /** The file of a key. Keys are made of encoded segments, so none climbs out of the root. */
  pathOf(key: string): string {
    const segments = key.split('/');
    if (segments.some((segment) => segment === '' || segment === '.' || segment === '..' || segment.includes(sep) || segment.includes('\0'))) {
      throw new LocalStateError(`key ${JSON.stringify(key)} cannot be stored as a file: it has an empty, "." or ".." segment`);
    }
    return join(this.root, ...segments);
  }

  /**
   * Writes a whole file or nothing: the bytes go to a temporary file in the state folder's `tmp/` (same file
   * system, so the rename is atomic), then it is renamed into place. A process killed mid-write leaves its
   * temporary file there, never beside the snapshots where a consumer would see it; such leftovers are
   * removed once they are old.
   */
  private async writeAtomic(path: string, body: Buffer): Promise<void> {
    await this.ensureTmpDir();
    await mkdir(dirname(path), { recursive: true });
    const temporary = join(this.stateDir, TMP_DIR, `${process.pid}-${randomBytes(6).toString('hex')}`);
    try {
      await writeFile(temporary, body);
      await rename(temporary, path);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }

  private tmpReady: Promise<void> | undefined;

  /** Creates `tmp/` once, and clears what killed processes left there long ago. */
  private ensureTmpDir(): Promise<void> {
    this.tmpReady ??= (async () => {
      const dir = join(this.stateDir, TMP_DIR);
      await mkdir(dir, { recursive: true });
      for (const name of await readdir(dir)) {
        const file = join(dir, name);
        const info = await stat(file).catch(() => undefined);
        if (info && Date.now() - info.mtimeMs > STALE_TMP_MS) await rm(file, { force: true });
      }
    })();
    return this.tmpReady;
  }

  // --- cursors ---------------------------------------------------------------------------------------

  async read(name: string): Promise<CursorState | undefined> {
    const state = await this.readState();
    return toCursorState(name, state.cursors[name], this.statePath());
  }

  async compareAndSet(name: string, expected: CursorState | undefined, next: CursorTarget): Promise<CompareAndSetResult> {
    return this.withLock(async () => {
      const state = await this.readState();
      const current = state.cursors[name];
      const matches = expected === undefined ? current === undefined : current?.cursor === expected.stored;
      if (!matches) return { outcome: 'conflict', current: toCursorState(name, current, this.statePath()) };
      state.cursors[name] = {
        cursor: formatTimestamp(next.value),
        commitId: next.commitId,
        runId: next.runId,
        updatedAt: new Date().toISOString(),
      };
      await this.writeState(state);
      return { outcome: 'written' };
    });
  }

  // --- run log ---------------------------------------------------------------------------------------

  async appendRun(summary: RunSummary, expiresAt: number): Promise<void> {
    const path = this.runLogPath(summary.cursorName);
    const line = `${JSON.stringify({ ...summary, sk: `run#${summary.runId}`, expiresAt })}\n`;
    await this.withLock(async () => {
      await mkdir(dirname(path), { recursive: true });
      await appendFile(path, line);
      if ((await stat(path)).size > this.compactRunLogBytes) {
        const now = Math.floor(Date.now() / 1000);
        const kept = (await this.readRuns(path)).filter((run) => run.expiresAt > now).sort(compareRunsNewestFirst).slice(0, this.maxRuns);
        await this.writeAtomic(path, Buffer.from(kept.reverse().map((run) => `${JSON.stringify(run)}\n`).join('')));
      }
    });
  }

  async listRuns(cursorName: string, query: RunQuery): Promise<RunSummary[]> {
    const now = Math.floor(Date.now() / 1000);
    const from = `run#${query.fromId ?? ''}`;
    const to = `run#${query.toId === undefined ? '~' : `${query.toId}~`}`;
    const runs = (await this.readRuns(this.runLogPath(cursorName))).filter((run) => run.expiresAt > now && run.sk >= from && run.sk <= to);
    return runs
      .sort(compareRunsNewestFirst)
      .slice(0, query.limit)
      .map(({ sk: _sk, expiresAt: _expiresAt, ...summary }) => summary as RunSummary);
  }

  private runLogPath(cursorName: string): string {
    // Cursor names are plain (A-Z a-z 0-9 . _ -, no leading dot): safe as file names.
    return join(this.stateDir, RUNS_DIR, `${cursorName}.jsonl`);
  }

  /** The runs of one log. A last line cut short by a crash mid-append is skipped; any other bad line is an error. */
  private async readRuns(path: string): Promise<StoredRun[]> {
    const text = await readTextIfExists(path);
    if (text === undefined) return [];
    const lines = text.split('\n');
    const runs: StoredRun[] = [];
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      if (line === '') continue;
      let run: StoredRun;
      try {
        run = JSON.parse(line) as StoredRun;
        if (!isPlainObject(run) || typeof run.sk !== 'string' || typeof run.expiresAt !== 'number') throw new Error('not a run record');
      } catch (cause) {
        if (i === lines.length - 1) continue;
        throw new LocalStateError(`${path}: line ${i + 1} is not a run record: ${(cause as Error).message}`, { cause });
      }
      runs.push(run);
    }
    return runs;
  }

  // --- the state file --------------------------------------------------------------------------------

  private statePath(): string {
    return join(this.stateDir, STATE_FILE);
  }

  private async readState(): Promise<StateFile> {
    const text = await readTextIfExists(this.statePath());
    if (text === undefined) return { cursors: {} };
    try {
      const parsed = JSON.parse(text) as Partial<StateFile>;
      if (!isPlainObject(parsed)) throw new Error('not a JSON object');
      if (parsed.cursors !== undefined && !isPlainObject(parsed.cursors)) throw new Error('"cursors" is not a JSON object');
      return { cursors: parsed.cursors ?? {} };
    } catch (cause) {
      throw new LocalStateError(`${this.statePath()}: not a valid state file: ${(cause as Error).message}`, { cause });
    }
  }

  private async writeState(state: StateFile): Promise<void> {
    await this.writeAtomic(this.statePath(), Buffer.from(JSON.stringify(state, null, 1)));
  }

  /** Runs `action` holding an exclusive lock file: `open(…, 'wx')` fails while another process holds it. */
  private async withLock<T>(action: () => Promise<T>): Promise<T> {
    await mkdir(this.stateDir, { recursive: true });
    const lockPath = join(this.stateDir, LOCK_FILE);
    const waitingSince = Date.now();
    for (let attempt = 0; ; attempt++) {
      if (await createLockFile(lockPath)) {
        try {
          await this.onLockEvent?.('acquired');
          return await action();
        } finally {
          await rm(lockPath, { force: true });
        }
      }
      await this.breakStaleLock(lockPath);
      if (Date.now() - waitingSince > LOCK_WAIT_MS) {
        throw new LocalStateError(`${lockPath}: still locked after ${LOCK_WAIT_MS / 1000} s (${attempt} attempts); remove it if no catalog-sync is running`);
      }
      await new Promise((resolve) => setTimeout(resolve, 2 + Math.random() * 8));
    }
  }

  /**
   * Removes a lock its holder can no longer release: the process named in it is gone (killed), or it names no
   * process and is older than a few seconds (its writer died between creating and filling it), or it is older
   * than {@link STALE_LOCK_MS} whatever it says (another host's process, on a shared folder). State updates
   * take milliseconds.
   *
   * Two waiters may judge the same dead lock at once; if both removed it, the second could remove the lock
   * the first had just taken, and two updates would overlap. So the lock is removed only under a second lock,
   * {@link BREAK_LOCK_FILE}, after checking again that it is the same file and still stale.
   */
  private async breakStaleLock(lockPath: string): Promise<void> {
    const judged = await judgeLock(lockPath);
    if (!judged?.stale) return;
    await this.onLockEvent?.('stale');
    const breakPath = join(this.stateDir, BREAK_LOCK_FILE);
    if (!(await createLockFile(breakPath))) {
      // Another waiter is breaking it. Its break lock is held for microseconds, unless it was killed doing so.
      const breaker = await judgeLock(breakPath);
      if (breaker?.stale) await rm(breakPath, { force: true });
      return;
    }
    try {
      const again = await judgeLock(lockPath);
      if (again?.stale && again.ino === judged.ino) await rm(lockPath, { force: true });
      else await this.onLockEvent?.('kept');
    } finally {
      await rm(breakPath, { force: true });
    }
  }
}

/** Creates the lock file `path` holding this process's id; false if it exists (someone else holds it). */
async function createLockFile(path: string): Promise<boolean> {
  let handle;
  try {
    handle = await open(path, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    await handle.writeFile(String(process.pid));
  } finally {
    await handle.close();
  }
  return true;
}

/** Reads a whole text file; undefined if it does not exist. */
async function readTextIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** A lock file as found: its inode, and whether its holder can no longer release it; undefined if it is gone. */
async function judgeLock(path: string): Promise<{ ino: number; stale: boolean } | undefined> {
  try {
    const info = await stat(path);
    const age = Date.now() - info.mtimeMs;
    const pid = Number(await readFile(path, 'utf8'));
    const named = Number.isInteger(pid) && pid > 0;
    return { ino: info.ino, stale: named ? !isAlive(pid) || age >= STALE_LOCK_MS : age >= UNNAMED_LOCK_MS };
  } catch {
    return undefined; // gone already, or being replaced: the next attempt tells
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function toCursorState(name: string, item: StateFile['cursors'][string] | undefined, where: string): CursorState | undefined {
  if (!item) return undefined;
  if (typeof item.cursor !== 'string') throw new LocalStateError(`${where}: cursor ${JSON.stringify(name)} has no "cursor" string`);
  let value;
  try {
    value = parseTimestamp(item.cursor);
  } catch (cause) {
    throw new LocalStateError(`${where}: cursor ${JSON.stringify(name)}: ${(cause as Error).message}`, { cause });
  }
  return {
    value,
    stored: item.cursor,
    ...(item.commitId === undefined ? {} : { commitId: item.commitId }),
    ...(item.runId === undefined ? {} : { runId: item.runId }),
    ...(item.updatedAt === undefined ? {} : { updatedAt: item.updatedAt }),
  };
}
