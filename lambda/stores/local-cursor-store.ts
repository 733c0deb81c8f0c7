import { formatTimestamp, parseTimestamp } from '../contract/time.js';
import type { RenameGuard } from './atomic-file.js';
import { isPlainObject, type LocalFolder, readTextIfExists } from './local-folder.js';
import { LocalStateError } from './local-state-error.js';
import { isOwnWrite } from './own-write.js';
import { LocalLeases } from './local-leases.js';
import type {
  CompareAndSetResult,
  ConsumerStateStore,
  CursorState,
  CursorStore,
  CursorTarget,
  LeaseRecord,
  LegacyCursor,
  StoredConsumer,
} from './types.js';

interface StateFile {
  cursors: Record<
    string,
    { cursor: string; commitId?: string; runId?: string; updatedAt?: string; adoptedBy?: string }
  >;
}

/**
 * The cursors of a local folder, in one JSON file of its state folder (`state.json`). Reads take no lock;
 * a compare-and-set reads, compares and writes the whole file under the folder's lock, and the write is
 * renamed into place only while the lock is still this run's: two local runs at once, on one host or on
 * hosts sharing the folder, are as safe as two Lambdas on DynamoDB.
 */
export class LocalCursorStore implements CursorStore, ConsumerStateStore {
  private readonly leases: LocalLeases;

  constructor(private readonly folder: LocalFolder) {
    this.leases = new LocalLeases(folder);
  }

  async read(name: string): Promise<CursorState | undefined> {
    const state = await this.readState();
    return toCursorState(name, state.cursors[name], this.folder.statePath);
  }

  async compareAndSet(
    name: string,
    expected: CursorState | undefined,
    next: CursorTarget,
  ): Promise<CompareAndSetResult> {
    return this.folder.lock.hold(async (held) => {
      const state = await this.readState();
      const current = state.cursors[name];
      const matches = expected === undefined ? current === undefined : current?.cursor === expected.stored;
      if (!matches) {
        // A repeat of a write already stored (a caller retrying after an error past the rename): written.
        if (
          isOwnWrite(current === undefined ? undefined : { stored: current.cursor, runId: current.runId }, {
            stored: formatTimestamp(next.value),
            runId: next.runId,
          })
        )
          return { outcome: 'written' };
        return { outcome: 'conflict', current: toCursorState(name, current, this.folder.statePath) };
      }
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

  readLease(key: string): Promise<LeaseRecord | undefined> {
    return this.leases.read(key);
  }

  swapLease(key: string, expected: LeaseRecord | undefined, next: LeaseRecord): Promise<boolean> {
    return this.leases.swap(key, expected, next);
  }

  async listConsumers(keyPrefix: string): Promise<StoredConsumer[]> {
    const [{ cursors }, leases] = await Promise.all([this.readState(), this.leases.all()]);
    const keys = new Set([...Object.keys(cursors), ...leases.keys()].filter((key) => key.startsWith(keyPrefix)));
    return [...keys].sort().map((key) => {
      const cursor = toCursorState(key, cursors[key], this.folder.statePath);
      const lease = leases.get(key);
      return { key, ...(cursor === undefined ? {} : { cursor }), ...(lease === undefined ? {} : { lease }) };
    });
  }

  async readLegacy(name: string): Promise<LegacyCursor | undefined> {
    const item = (await this.readState()).cursors[name];
    const state = toCursorState(name, item, this.folder.statePath);
    return state === undefined
      ? undefined
      : { state, ...(typeof item?.adoptedBy === 'string' ? { adoptedBy: item.adoptedBy } : {}) };
  }

  async adoptLegacy(name: string, by: string): Promise<boolean> {
    return this.folder.lock.hold(async (held) => {
      const state = await this.readState();
      const item = state.cursors[name];
      if (item === undefined || (item.adoptedBy !== undefined && item.adoptedBy !== by)) return false;
      if (item.adoptedBy === by) return true;
      state.cursors[name] = { ...item, adoptedBy: by };
      await this.writeState(state, held.whileHeld);
      return true;
    });
  }

  private async readState(): Promise<StateFile> {
    const text = await readTextIfExists(this.folder.statePath);
    if (text === undefined) return { cursors: {} };
    try {
      const parsed = JSON.parse(text) as Partial<StateFile>;
      if (!isPlainObject(parsed)) throw new Error('not a JSON object');
      if (parsed.cursors !== undefined && !isPlainObject(parsed.cursors))
        throw new Error('"cursors" is not a JSON object');
      return { cursors: parsed.cursors ?? {} };
    } catch (cause) {
      throw new LocalStateError(`${this.folder.statePath}: not a valid state file: ${(cause as Error).message}`, {
        cause,
      });
    }
  }

  private async writeState(state: StateFile, guard: RenameGuard): Promise<void> {
    await this.folder.writer.write(this.folder.statePath, Buffer.from(JSON.stringify(state, null, 1)), guard);
  }
}

function toCursorState(
  name: string,
  item: StateFile['cursors'][string] | undefined,
  where: string,
): CursorState | undefined {
  if (!item) return undefined;
  if (typeof item.cursor !== 'string')
    throw new LocalStateError(`${where}: cursor ${JSON.stringify(name)} has no "cursor" string`);
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
