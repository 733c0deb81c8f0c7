import type { RunSummary } from '../contract/run-summary.js';
import { LocalCursorStore } from './local-cursor-store.js';
import { LocalFolder, type LocalFolderOptions } from './local-folder.js';
import { LocalRunLog, type LocalRunLogOptions } from './local-run-log.js';
import { LocalSnapshotStore, type LocalSnapshotStoreOptions } from './local-snapshot-store.js';
import type { CompareAndSetResult, CursorState, CursorStore, CursorTarget, RunLogStore, RunQuery, SnapshotStore } from './types.js';

/** Every setting of a folder's stores: the folder's own, run-log compaction and file names (all for tests). */
export type LocalStoreOptions = LocalFolderOptions & LocalRunLogOptions & LocalSnapshotStoreOptions;

/** The three stores of one local folder. */
export interface LocalStores {
  readonly cursors: LocalCursorStore;
  readonly runLog: LocalRunLog;
  readonly snapshots: LocalSnapshotStore;
}

/**
 * The embedded default, the local folder's three stores, built over one {@link LocalFolder}: one lock for
 * every state update, one atomic writer for every file.
 */
export function openLocalStores(root: string, options: LocalStoreOptions = {}): LocalStores {
  const folder = new LocalFolder(root, options);
  return {
    cursors: new LocalCursorStore(folder),
    runLog: new LocalRunLog(folder, options),
    snapshots: new LocalSnapshotStore(folder, options),
  };
}

/**
 * The three stores of one local folder as one object, for callers that use a folder as all three at once
 * (tests, the benchmark and the chaos suite). Each method is the one of {@link LocalCursorStore},
 * {@link LocalRunLog} or {@link LocalSnapshotStore}.
 */
export class LocalStore implements CursorStore, RunLogStore, SnapshotStore {
  readonly maxKeySegmentBytes: number;
  private readonly stores: LocalStores;

  constructor(
    readonly root: string,
    options: LocalStoreOptions = {},
  ) {
    this.stores = openLocalStores(root, options);
    this.maxKeySegmentBytes = this.stores.snapshots.maxKeySegmentBytes;
  }

  read(name: string): Promise<CursorState | undefined> {
    return this.stores.cursors.read(name);
  }

  compareAndSet(name: string, expected: CursorState | undefined, next: CursorTarget): Promise<CompareAndSetResult> {
    return this.stores.cursors.compareAndSet(name, expected, next);
  }

  appendRun(summary: RunSummary, expiresAt: number): Promise<void> {
    return this.stores.runLog.appendRun(summary, expiresAt);
  }

  listRuns(cursorName: string, query: RunQuery): Promise<RunSummary[]> {
    return this.stores.runLog.listRuns(cursorName, query);
  }

  putLeaf(key: string, body: Buffer): Promise<void> {
    return this.stores.snapshots.putLeaf(key, body);
  }

  putJson(key: string, value: unknown): Promise<void> {
    return this.stores.snapshots.putJson(key, value);
  }

  getJson(key: string): Promise<unknown> {
    return this.stores.snapshots.getJson(key);
  }

  deleteKey(key: string): Promise<void> {
    return this.stores.snapshots.deleteKey(key);
  }

  listKeys(prefix: string, startAfter?: string): AsyncIterable<string> {
    return this.stores.snapshots.listKeys(prefix, startAfter);
  }
}
