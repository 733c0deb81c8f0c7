import type { StagedFile } from './atomic-file.js';
import type { RunSummary } from '../contract/run-summary.js';
import type { BackfillPlan, BackfillTotals, RangeState } from '../contract/backfill.js';
import { LocalBackfillStore } from './local-backfill-store.js';
import { LocalCursorStore } from './local-cursor-store.js';
import { LocalFolder, type LocalFolderOptions } from './local-folder.js';
import { LocalRunLog, type LocalRunLogOptions } from './local-run-log.js';
import { LocalSnapshotStore, type LocalSnapshotStoreOptions } from './local-snapshot-store.js';
import type {
  ActivePlanClaim,
  BackfillStore,
  CompareAndSetResult,
  ConsumerStateStore,
  CursorState,
  CursorStore,
  CursorTarget,
  LeaseRecord,
  LegacyCursor,
  RangeProgress,
  RangeWriteResult,
  RunLogStore,
  RunQuery,
  SnapshotReader,
  SnapshotStore,
  StoredConsumer,
  TaggedBytes,
} from './types.js';

/** Every setting of a folder's stores: the folder's own, run-log compaction and file names (all for tests). */
export type LocalStoreOptions = LocalFolderOptions & LocalRunLogOptions & LocalSnapshotStoreOptions;

/** The stores of one local folder. */
export interface LocalStores {
  readonly cursors: LocalCursorStore;
  readonly runLog: LocalRunLog;
  readonly snapshots: LocalSnapshotStore;
  readonly backfills: LocalBackfillStore;
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
    backfills: new LocalBackfillStore(folder),
  };
}

/**
 * The stores of one local folder as one object, for callers that use a folder as all of them at once
 * (tests, the benchmark and the chaos suite). Each method is the one of {@link LocalCursorStore},
 * {@link LocalRunLog}, {@link LocalSnapshotStore} or {@link LocalBackfillStore}.
 */
export class LocalStore
  implements CursorStore, RunLogStore, SnapshotStore, SnapshotReader, BackfillStore, ConsumerStateStore
{
  readonly maxKeySegmentBytes: number;
  readonly location = '.';
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

  readLease(key: string): Promise<LeaseRecord | undefined> {
    return this.stores.cursors.readLease(key);
  }

  swapLease(key: string, expected: LeaseRecord | undefined, next: LeaseRecord): Promise<boolean> {
    return this.stores.cursors.swapLease(key, expected, next);
  }

  listConsumers(keyPrefix: string): Promise<StoredConsumer[]> {
    return this.stores.cursors.listConsumers(keyPrefix);
  }

  readLegacy(name: string): Promise<LegacyCursor | undefined> {
    return this.stores.cursors.readLegacy(name);
  }

  adoptLegacy(name: string, by: string): Promise<boolean> {
    return this.stores.cursors.adoptLegacy(name, by);
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

  putStream(key: string, source: AsyncIterable<Uint8Array>): Promise<void> {
    return this.stores.snapshots.putStream(key, source);
  }

  stage(key: string, body: Buffer): Promise<StagedFile> {
    return this.stores.snapshots.stage(key, body);
  }

  putJson(key: string, value: unknown): Promise<void> {
    return this.stores.snapshots.putJson(key, value);
  }

  getJson(key: string): Promise<unknown> {
    return this.stores.snapshots.getJson(key);
  }

  getBytes(key: string): Promise<Buffer | undefined> {
    return this.stores.snapshots.getBytes(key);
  }

  storedKeys(keys: readonly string[]): Promise<ReadonlySet<string>> {
    return this.stores.snapshots.storedKeys(keys);
  }

  getTagged(key: string): Promise<TaggedBytes | undefined> {
    return this.stores.snapshots.getTagged(key);
  }

  putJsonIf(key: string, value: unknown, expected: string | undefined): Promise<boolean> {
    return this.stores.snapshots.putJsonIf(key, value, expected);
  }

  deleteKey(key: string): Promise<void> {
    return this.stores.snapshots.deleteKey(key);
  }

  listKeys(prefix: string, startAfter?: string): AsyncIterable<string> {
    return this.stores.snapshots.listKeys(prefix, startAfter);
  }

  createPlan(plan: BackfillPlan): Promise<boolean> {
    return this.stores.backfills.createPlan(plan);
  }

  readPlan(cursorName: string, backfillId: string): Promise<BackfillPlan | undefined> {
    return this.stores.backfills.readPlan(cursorName, backfillId);
  }

  newestPlan(cursorName: string): Promise<BackfillPlan | undefined> {
    return this.stores.backfills.newestPlan(cursorName);
  }

  renewLease(cursorName: string, backfillId: string, leaseUntil: number, holder?: string, now?: number): Promise<void> {
    return this.stores.backfills.renewLease(cursorName, backfillId, leaseUntil, holder, now);
  }

  finishPlan(cursorName: string, backfillId: string, finishedAt: string, summary: RunSummary): Promise<BackfillPlan> {
    return this.stores.backfills.finishPlan(cursorName, backfillId, finishedAt, summary);
  }

  readRange(cursorName: string, backfillId: string, n: number): Promise<RangeState | undefined> {
    return this.stores.backfills.readRange(cursorName, backfillId, n);
  }

  advanceRange(
    cursorName: string,
    backfillId: string,
    n: number,
    expected: string | undefined,
    next: RangeProgress,
  ): Promise<RangeWriteResult> {
    return this.stores.backfills.advanceRange(cursorName, backfillId, n, expected, next);
  }

  markRangeDone(
    cursorName: string,
    backfillId: string,
    n: number,
    final: { progress?: string; progressCommitId?: string; totals: BackfillTotals },
  ): Promise<RangeState> {
    return this.stores.backfills.markRangeDone(cursorName, backfillId, n, final);
  }

  listRanges(cursorName: string, backfillId: string): Promise<RangeState[]> {
    return this.stores.backfills.listRanges(cursorName, backfillId);
  }

  claimActive(
    cursorName: string,
    backfillId: string,
    replacing: string | undefined,
    claimedAt: number,
    holder?: string,
  ): Promise<boolean> {
    return this.stores.backfills.claimActive(cursorName, backfillId, replacing, claimedAt, holder);
  }

  readActive(cursorName: string): Promise<ActivePlanClaim | undefined> {
    return this.stores.backfills.readActive(cursorName);
  }

  releaseActive(cursorName: string, backfillId: string): Promise<void> {
    return this.stores.backfills.releaseActive(cursorName, backfillId);
  }

  setLease(
    cursorName: string,
    backfillId: string,
    leaseUntil: number,
    expected: number | undefined,
    holder?: string,
  ): Promise<boolean> {
    return this.stores.backfills.setLease(cursorName, backfillId, leaseUntil, expected, holder);
  }

  abandonPlan(cursorName: string, backfillId: string, abandonedAt: string): Promise<boolean> {
    return this.stores.backfills.abandonPlan(cursorName, backfillId, abandonedAt);
  }
}
