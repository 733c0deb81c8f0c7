import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { MAX_FILE_NAME_BYTES } from '../contract/identity.js';
import { formatTimestamp, parseTimestamp } from '../contract/time.js';
import type { RunSummary } from '../contract/run-summary.js';
import { resolveFileNameMode } from './file-name-mode.js';
import { fileNamesOf, unescapeName, type FileNameMode } from './local-paths.js';
import { AtomicFileWriter, type RenameGuard } from './atomic-file.js';
import { type HeldLock, LocalLock, type LocalLockOptions, type LockEvent } from './local-lock.js';
import { LocalStateError } from './local-state-error.js';
import { compareRunsNewestFirst } from './run-order.js';
import type { CompareAndSetResult, CursorState, CursorStore, CursorTarget, RunLogStore, RunQuery, SnapshotStore } from './types.js';

/** Where the embedded default keeps its cursors and run log, inside the data folder. */
export const STATE_DIR = '.catalog-sync';
const STATE_FILE = 'state.json';
/** Temporary files of atomic writes, inside the state folder. */
const TMP_DIR = 'tmp';
/** The run log of each cursor: one JSON line per run, appended, so a checkpoint never rewrites it. */
const RUNS_DIR = 'runs';
/** Runs kept in a local log at most, newest first, besides the TTL. */
const MAX_LOCAL_RUNS = 5_000;
/** A log past this size is compacted to the newest {@link MAX_LOCAL_RUNS} live runs. */
const COMPACT_RUN_LOG_BYTES = 4 * 1024 * 1024;

type StoredRun = RunSummary & { sk: string; expiresAt: number };

export type { LockEvent } from './local-lock.js';
export { LocalStateError } from './local-state-error.js';

interface StateFile {
  cursors: Record<string, { cursor: string; commitId?: string; runId?: string; updatedAt?: string }>;
}

/**
 * The embedded default: snapshots as files with the S3 key layout, the cursors in one JSON file, and
 * each cursor's run log in a JSON-lines file that runs append to (a checkpoint never rewrites the log). Every
 * write is atomic (a temporary file, then a rename) and durable before it resolves (fsynced, with its folder),
 * and cursor updates are compare-and-set under an exclusive lock file ({@link LocalLock}: owner token,
 * heartbeat), so two local runs at once, on one host or on hosts sharing the folder, are as safe as two Lambdas.
 * On a case-insensitive file system the file names escape upper-case letters ({@link FileNameMode}), chosen at
 * first use and recorded in the folder.
 */
export class LocalStore implements CursorStore, RunLogStore, SnapshotStore {
  /** Each key segment is a file or folder name. */
  readonly maxKeySegmentBytes = MAX_FILE_NAME_BYTES;
  private readonly stateDir: string;

  private readonly compactRunLogBytes: number;
  private readonly maxRuns: number;

  private readonly lock: LocalLock;
  private readonly writer: AtomicFileWriter;

  private readonly forceCaseInsensitive: boolean;

  /**
   * @param options - run-log compaction: past `compactRunLogBytes`, keep the newest `maxRuns` live runs;
   * `onLockEvent`, for tests only, is awaited at each {@link LockEvent}; `caseInsensitive`, for tests only,
   * takes the file system as case-insensitive whatever the probe finds;
   * `lock`, for tests only, gives the lock a clock and a heartbeat driven by hand; `durable: false` skips every
   * fsync (benchmark comparison only).
   */
  constructor(
    readonly root: string,
    options: {
      compactRunLogBytes?: number;
      maxRuns?: number;
      onLockEvent?: (event: LockEvent) => Promise<void> | void;
      caseInsensitive?: boolean;
      lock?: Omit<LocalLockOptions, 'onLockEvent'>;
      durable?: boolean;
    } = {},
  ) {
    this.stateDir = join(root, STATE_DIR);
    this.compactRunLogBytes = options.compactRunLogBytes ?? COMPACT_RUN_LOG_BYTES;
    this.maxRuns = options.maxRuns ?? MAX_LOCAL_RUNS;
    this.forceCaseInsensitive = options.caseInsensitive === true;
    this.lock = new LocalLock(this.stateDir, { ...options.lock, ...(options.onLockEvent ? { onLockEvent: options.onLockEvent } : {}) });
    this.writer = new AtomicFileWriter(root, join(this.stateDir, TMP_DIR), options.durable === undefined ? {} : { durable: options.durable });
  }

  // --- snapshots -------------------------------------------------------------------------------------

  async putLeaf(key: string, body: Buffer): Promise<void> {
    await this.writeAtomic(this.pathOf(key, await this.fileNameMode()), body);
  }

  async putJson(key: string, value: unknown): Promise<void> {
    await this.writeAtomic(this.pathOf(key, await this.fileNameMode()), Buffer.from(JSON.stringify(value)));
  }

  async getJson(key: string): Promise<unknown> {
    const mode = await this.fileNameModeToRead();
    if (mode === undefined) return undefined;
    const text = await readTextIfExists(this.pathOf(key, mode));
    return text === undefined ? undefined : JSON.parse(text);
  }

  async deleteKey(key: string): Promise<void> {
    const mode = await this.fileNameModeToRead();
    if (mode !== undefined) await rm(this.pathOf(key, mode), { force: true });
  }

  /** Every key, as the S3 key (never the escaped file name), whatever the file names are. */
  async *listKeys(prefix: string, startAfter?: string): AsyncIterable<string> {
    const mode = await this.fileNameModeToRead();
    if (mode === undefined) return;
    const keys: string[] = [];
    await this.walk(this.root, '', mode, keys);
    keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (const key of keys) {
      if (key.startsWith(prefix) && (startAfter === undefined || key > startAfter)) yield key;
    }
  }

  private async walk(dir: string, relative: string, mode: FileNameMode, keys: string[]): Promise<void> {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const entry of entries) {
      if (relative === '' && entry.name === STATE_DIR) continue;
      // Temporary files live in the state folder, so every other file is a key: even an id like `x.tmp-y`.
      const segment = mode === 'exact' ? entry.name : unescapeName(entry.name);
      // An escaped folder holds only names catalog-sync escaped; others (`.DS_Store`) were never keys.
      if (segment === undefined) continue;
      const key = relative === '' ? segment : `${relative}/${segment}`;
      if (entry.isDirectory()) await this.walk(join(dir, entry.name), key, mode, keys);
      else keys.push(key);
    }
  }

  /** The file of a key. Keys are made of encoded segments, so none climbs out of the root. */
  private pathOf(key: string, mode: FileNameMode): string {
    const segments = key.split('/');
    if (segments.some((segment) => segment === '' || segment === '.' || segment === '..' || segment.includes(sep) || segment.includes('\0'))) {
      throw new LocalStateError(`key ${JSON.stringify(key)} cannot be stored as a file: it has an empty, "." or ".." segment`);
    }
    try {
      return join(this.root, ...fileNamesOf(key, mode));
    } catch (cause) {
      throw new LocalStateError(`${this.root}: ${(cause as Error).message}`, { cause });
    }
  }

  private fileNames: Promise<FileNameMode> | undefined;

  /** How this folder names its files: probed and recorded on first use, then kept (`file-name-mode.ts`). */
  private fileNameMode(): Promise<FileNameMode> {
    this.fileNames ??= resolveFileNameMode({
      root: this.root,
      stateDir: this.stateDir,
      stateDirName: STATE_DIR,
      stateFile: this.statePath(),
      forceCaseInsensitive: this.forceCaseInsensitive,
      writeAtomic: (path, body) => this.writeAtomic(path, body),
    }).catch((error: unknown) => {
      // Found again next time: a passing failure (EMFILE) must not break a long --follow for good.
      this.fileNames = undefined;
      throw error;
    });
    return this.fileNames;
  }

  /** As {@link fileNameMode}, but `undefined` (nothing to read) for a folder that does not exist, which it does not create. */
  private async fileNameModeToRead(): Promise<FileNameMode | undefined> {
    if (this.fileNames === undefined && !(await stat(this.root).then(() => true, () => false))) return undefined;
    return this.fileNameMode();
  }

  /**
   * Writes a whole file or nothing, and durably before it resolves (see {@link AtomicFileWriter}): so everything
   * a cursor covers is on disk before the cursor is written. Under the lock, `guard` makes the rename only while
   * the lock is still ours.
   */
  private async writeAtomic(path: string, body: Buffer, guard?: RenameGuard): Promise<void> {
    await this.writer.write(path, body, guard);
  }

  // --- cursors ---------------------------------------------------------------------------------------

  async read(name: string): Promise<CursorState | undefined> {
    const state = await this.readState();
    return toCursorState(name, state.cursors[name], this.statePath());
  }

  async compareAndSet(name: string, expected: CursorState | undefined, next: CursorTarget): Promise<CompareAndSetResult> {
    return this.withLock(async (held) => {
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
      await this.writeState(state, held.whileHeld);
      return { outcome: 'written' };
    });
  }

  // --- run log ---------------------------------------------------------------------------------------

  async appendRun(summary: RunSummary, expiresAt: number): Promise<void> {
    const path = this.runLogPath(summary.cursorName);
    const line = `${JSON.stringify({ ...summary, sk: `run#${summary.runId}`, expiresAt })}\n`;
    await this.withLock(async (held) => {
      await held.whileHeld(() => this.writer.append(path, line));
      if ((await stat(path)).size > this.compactRunLogBytes) {
        const now = Math.floor(Date.now() / 1000);
        const kept = (await this.readRuns(path)).filter((run) => run.expiresAt > now).sort(compareRunsNewestFirst).slice(0, this.maxRuns);
        await this.writeAtomic(path, Buffer.from(kept.reverse().map((run) => `${JSON.stringify(run)}\n`).join('')), held.whileHeld);
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

  private async writeState(state: StateFile, guard: RenameGuard): Promise<void> {
    await this.writeAtomic(this.statePath(), Buffer.from(JSON.stringify(state, null, 1)), guard);
  }

  /** Runs `action` holding the folder's lock (see {@link LocalLock}): one state update at a time, across processes and hosts. */
  private withLock<T>(action: (held: HeldLock) => Promise<T>): Promise<T> {
    return this.lock.hold(action);
  }
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
