import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { formatTimestamp, parseTimestamp } from '../catalog/timestamp.js';
import type { RunSummary } from '../sync/run-summary.js';
import type { CompareAndSetResult, CursorState, CursorStore, CursorTarget, RunLogStore, RunQuery, SnapshotStore } from './types.js';

/** Where the embedded default keeps its cursors and run log, inside the data folder. */
export const STATE_DIR = '.catalog-sync';
const STATE_FILE = 'state.json';
const LOCK_FILE = 'state.lock';
/** A lock older than this is left over by a killed process: state updates take milliseconds. */
const STALE_LOCK_MS = 30_000;
/** Runs kept in the local log at most, newest first, besides the TTL. */
const MAX_LOCAL_RUNS = 5_000;

interface StateFile {
  cursors: Record<string, { cursor: string; commitId?: string; runId?: string; updatedAt?: string }>;
  runs: Record<string, Array<RunSummary & { sk: string; expiresAt: number }>>;
}

/** The local state file could not be read or locked. */
export class LocalStateError extends Error {
  override readonly name = 'LocalStateError';
}

/**
 * The embedded default: snapshots as files with exactly the S3 key layout, and the cursors and run log in one
 * JSON file. Every write is atomic (a temporary file, then a rename), and cursor updates are
 * compare-and-set under an exclusive lock file, so two local runs at once are as safe as two Lambdas.
 */
export class LocalStore implements CursorStore, RunLogStore, SnapshotStore {
  private readonly stateDir: string;

  constructor(readonly root: string) {
    this.stateDir = join(root, STATE_DIR);
  }

  // --- snapshots -------------------------------------------------------------------------------------

  async putLeaf(key: string, body: Buffer): Promise<void> {
    await this.writeAtomic(this.pathOf(key), body);
  }

  async putJson(key: string, value: unknown): Promise<void> {
    await this.writeAtomic(this.pathOf(key), Buffer.from(JSON.stringify(value)));
  }

  async getJson(key: string): Promise<unknown> {
    try {
      return JSON.parse(await readFile(this.pathOf(key), 'utf8'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
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

  private async writeAtomic(path: string, body: Buffer): Promise<void> {
    await mkdir(dirname(path), { recursive: true });
    const temporary = `${path}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`;
    try {
      await writeFile(temporary, body);
      await rename(temporary, path);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
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
    await this.withLock(async () => {
      const state = await this.readState();
      const now = Math.floor(Date.now() / 1000);
      const runs = (state.runs[summary.cursorName] ?? []).filter((run) => run.expiresAt > now);
      runs.push({ ...summary, sk: `run#${summary.runId}`, expiresAt });
      runs.sort((a, b) => (a.sk < b.sk ? 1 : a.sk > b.sk ? -1 : 0));
      state.runs[summary.cursorName] = runs.slice(0, MAX_LOCAL_RUNS);
      await this.writeState(state);
    });
  }

  async listRuns(cursorName: string, query: RunQuery): Promise<RunSummary[]> {
    const state = await this.readState();
    const now = Math.floor(Date.now() / 1000);
    const from = `run#${query.fromId ?? ''}`;
    const to = `run#${query.toId === undefined ? '~' : `${query.toId}~`}`;
    return (state.runs[cursorName] ?? [])
      .filter((run) => run.expiresAt > now && run.sk >= from && run.sk <= to)
      .sort((a, b) => (a.sk < b.sk ? 1 : a.sk > b.sk ? -1 : 0))
      .slice(0, query.limit)
      .map(({ sk: _sk, expiresAt: _expiresAt, ...summary }) => summary as RunSummary);
  }

  // --- the state file --------------------------------------------------------------------------------

  private statePath(): string {
    return join(this.stateDir, STATE_FILE);
  }

  private async readState(): Promise<StateFile> {
    let text: string;
    try {
      text = await readFile(this.statePath(), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { cursors: {}, runs: {} };
      throw error;
    }
    try {
      const parsed = JSON.parse(text) as Partial<StateFile>;
      if (!isPlainObject(parsed)) throw new Error('not a JSON object');
      if (parsed.cursors !== undefined && !isPlainObject(parsed.cursors)) throw new Error('"cursors" is not a JSON object');
      if (parsed.runs !== undefined && (!isPlainObject(parsed.runs) || !Object.values(parsed.runs).every(Array.isArray))) {
        throw new Error('"runs" is not a JSON object of arrays');
      }
      return { cursors: parsed.cursors ?? {}, runs: parsed.runs ?? {} };
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
    for (let attempt = 0; ; attempt++) {
      try {
        const handle = await open(lockPath, 'wx');
        try {
          await handle.writeFile(String(process.pid));
          await handle.close();
          return await action();
        } finally {
          await rm(lockPath, { force: true });
        }
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        await this.breakStaleLock(lockPath);
        if (attempt > 2_000) throw new LocalStateError(`${lockPath}: still locked after ${attempt} attempts; remove it if no catalog-sync is running`);
        await new Promise((resolve) => setTimeout(resolve, 2 + Math.random() * 8));
      }
    }
  }

  private async breakStaleLock(lockPath: string): Promise<void> {
    try {
      const info = await stat(lockPath);
      if (Date.now() - info.mtimeMs < STALE_LOCK_MS) return;
      const pid = Number(await readFile(lockPath, 'utf8'));
      if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) return;
      await rm(lockPath, { force: true });
    } catch {
      // Gone already, or being replaced: the next attempt tells.
    }
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
