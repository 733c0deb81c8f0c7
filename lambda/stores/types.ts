import type { Ticks } from '../contract/time.js';
import type { RunSummary } from '../contract/run-summary.js';
import type { BackfillPlan, BackfillTotals, RangeState } from '../contract/backfill.js';

/** A stored cursor, as read. */
export interface CursorState {
  /** The commit timestamp, exact. */
  readonly value: Ticks;
  /** The attribute exactly as stored: the conditional write compares against it. */
  readonly stored: string;
  readonly commitId?: string;
  readonly runId?: string;
  readonly updatedAt?: string;
}

/** The value a run wants to store. */
export interface CursorTarget {
  readonly value: Ticks;
  readonly commitId: string;
  readonly runId: string;
  /**
   * What the commits up to `value` hold, counted from the start of the range: a backfill range's progress
   * carries it (see {@link BackfillStore.advanceRange}); cursor stores ignore it.
   */
  readonly totals?: BackfillTotals;
}

/** The outcome of a conditional cursor write. */
export type CompareAndSetResult =
  | { readonly outcome: 'written' }
  /** Another run changed the cursor since it was read: `current` is what is stored now. */
  | { readonly outcome: 'conflict'; readonly current: CursorState | undefined };

/** Where cursors live: one item per cursor name. */
/** What a read listens to: the run's stop (DynamoDB: the SDK's `abortSignal`, the request in flight ends). */
export interface ReadOptions {
  readonly signal?: AbortSignal;
}

/** The AWS SDK's `send` options for `options`: its abort signal, when there is one. */
export function sdkSendOptions(options: ReadOptions | undefined): { abortSignal?: AbortSignal } {
  return options?.signal === undefined ? {} : { abortSignal: options.signal };
}

export interface CursorStore {
  /** The cursor named `name`, or `undefined` when none is stored. */
  read(name: string, options?: ReadOptions): Promise<CursorState | undefined>;
  /**
   * Writes `next` only if the stored cursor is still `expected` (`undefined`: no cursor stored yet).
   * Callers never pass a `next` at or before `expected`. `options.signal` ends a DynamoDB write in flight (the
   * run's closing deadline); a folder's write ignores it (its lock waits at most a minute).
   */
  compareAndSet(
    name: string,
    expected: CursorState | undefined,
    next: CursorTarget,
    options?: ReadOptions,
  ): Promise<CompareAndSetResult>;
}

/** A named consumer's lease, as stored (contract.md, "One active instance"): who holds it, until when. */
export interface LeaseRecord {
  readonly holder: string;
  /** Epoch ms. */
  readonly until: number;
}

/** A cursor stored before consumers were keyed by their mirror (`pk` = the name alone), and who adopted it since. */
export interface LegacyCursor {
  readonly state: CursorState;
  /** The key of the consumer cursor that took it over, once one did. */
  readonly adoptedBy?: string;
}

/** A consumer of a mirror as stored: its key, and its cursor and lease where it has them. */
export interface StoredConsumer {
  readonly key: string;
  readonly cursor?: CursorState;
  readonly lease?: LeaseRecord;
}

/**
 * What a cursor store keeps for named consumers besides their cursors (which are cursors like any other, under a
 * key of their mirror and name): a lease per consumer, the listing of a mirror's consumers, and the adoption of a
 * cursor stored before consumers were keyed by mirror. DynamoStore and the local folder's stores implement it.
 */
export interface ConsumerStateStore {
  /** The lease stored under a consumer's key, or undefined. */
  readLease(key: string, options?: ReadOptions): Promise<LeaseRecord | undefined>;
  /** Stores `next` only if the stored lease is still `expected` (undefined: none stored); false when it is not. */
  swapLease(key: string, expected: LeaseRecord | undefined, next: LeaseRecord): Promise<boolean>;
  /** Every consumer whose key starts with `keyPrefix` (DynamoDB: one Scan of the table; a folder: its files). */
  listConsumers(keyPrefix: string): Promise<StoredConsumer[]>;
  /** The cursor stored under `name` alone (before consumers were keyed by mirror), or undefined. */
  readLegacy(name: string): Promise<LegacyCursor | undefined>;
  /**
   * Marks the cursor stored under `name` alone as adopted by the consumer key `by`, unless another key adopted it
   * first: true when it is `by`'s (now or already), false when another's or when there is none.
   */
  adoptLegacy(name: string, by: string): Promise<boolean>;
}

/** Bounds of a run-log query, as run-log sort-key bounds. */
export interface RunQuery {
  /** Inclusive lower bound of the kuuid id: a `prefix()` of a date. */
  readonly fromId?: string;
  /** Exclusive-ish upper bound of the kuuid id: every id beginning with a smaller or equal prefix. */
  readonly toId?: string;
  readonly limit: number;
}

/** The log of runs: one record per run, newest first on query. */
export interface RunLogStore {
  /** Stores a run's record; `options.signal` ends a DynamoDB write in flight (the run's closing deadline). */
  appendRun(summary: RunSummary, expiresAt: number, options?: ReadOptions): Promise<void>;
  listRuns(cursorName: string, query: RunQuery): Promise<RunSummary[]>;
}

/** Where snapshots, manifests and quarantine records go: an S3 bucket or a folder with the same keys. */
export interface SnapshotStore {
  /** Stores a leaf's exact bytes with its metadata. */
  putLeaf(key: string, body: Buffer, metadata: Readonly<Record<string, string>>, options?: WriteOptions): Promise<void>;
  /** Stores a JSON document (manifest, quarantine record). */
  putJson(key: string, value: unknown, options?: WriteOptions): Promise<void>;
  /** Reads a JSON document, or `undefined` when there is none. */
  getJson(key: string): Promise<unknown>;
  /** A stored object's bytes with its tag, or `undefined` when there is none: what {@link putJsonIf} compares with. */
  getTagged(key: string, options?: ReadOptions): Promise<TaggedBytes | undefined>;
  /**
   * Writes a JSON document only if the stored object is still the one tagged `expected` (`undefined`: only if there
   * is none): S3's `If-Match` / `If-None-Match: *`, a folder's state lock. False, and nothing written, when another
   * writer got there first. `watermark.json` is written this way, so it only moves forward.
   */
  putJsonIf(key: string, value: unknown, expected: string | undefined, options?: WriteOptions): Promise<boolean>;
  /** Deletes a key (quarantine records that were retried successfully); absent keys are fine. */
  deleteKey(key: string): Promise<void>;
  /** Keys under `prefix`, in byte order, after `startAfter`; `options.signal` ends a listing request in flight (S3). */
  listKeys(prefix: string, startAfter?: string, options?: ReadOptions): AsyncIterable<string>;
  /**
   * Which of `keys` are stored, where asking each is cheaper than listing (a folder: one `stat` a key, where a listing
   * reads a whole folder). Absent (S3): the caller lists the keys' span.
   */
  storedKeys?(keys: readonly string[], options?: ReadOptions): Promise<ReadonlySet<string>>;
  /** A stored object's exact bytes, or `undefined` when there is none (`verify --deep` compares leaves with it). */
  getBytes?(key: string): Promise<Buffer | undefined>;
  /**
   * Most bytes one `/`-separated key segment may have, when the store has such a limit (a folder: a file
   * name's 255). A leaf whose segment is longer is an item error, set aside by quarantine like a bad leaf.
   */
  readonly maxKeySegmentBytes?: number;
}

/** A stored object's bytes and its tag (S3: its ETag; a folder: the SHA-256 of its bytes). */
export interface TaggedBytes {
  readonly bytes: Buffer;
  readonly tag: string;
}

/** A retry of a snapshot write (an S3 PUT) as it is sent: which object, the attempt that failed, why, the wait before it. */
export interface PutRetryEvent {
  /** `s3://{bucket}/{key}`. */
  readonly url: string;
  /** The attempt that failed (1 for the first). */
  readonly attempt: number;
  readonly delayMs: number;
  /** S3's error code, `HTTP {status}` without one, the clock-skew correction, or the transport error's code. */
  readonly why: string;
  readonly status?: number;
}

/** What one snapshot write listens to: the run's stop, and its retries. */
export interface WriteOptions {
  /** Ends the write in flight and any wait before its retry (S3: with `S3PutAbortedError`). */
  readonly signal?: AbortSignal;
  /** Told of each retry as it is sent, with the wait before it. */
  readonly onRetry?: (event: PutRetryEvent) => void;
  /**
   * Told of each error answer of the store (its HTTP status) as it arrives, before any wait for a retry: the write is
   * not slow but refused or throttled (the engine does not hedge it, hedge.ts).
   */
  readonly onAnswer?: (status: number) => void;
}

/**
 * Reading the mirror back, as a consumer does: keys in byte order and objects' exact bytes. Both snapshot stores
 * (S3 and the local folder) implement it; a consumer needs nothing else of the mirror.
 */
export interface SnapshotReader {
  /**
   * Where the store is, as a named consumer's key names it: `s3://{bucket}` for a bucket, `.` for a local folder
   * (whose consumers' cursors live in the folder itself). Absent: `.`.
   */
  readonly location?: string;
  /** Keys under `prefix`, in byte order, after `startAfter`. */
  listKeys(prefix: string, startAfter?: string): AsyncIterable<string>;
  /** An object's bytes exactly as stored, or `undefined` when there is none. */
  getBytes(key: string): Promise<Buffer | undefined>;
}

/** The progress a range worker wants to store: its newest completed commit and what the range holds up to it. */
export interface RangeProgress {
  /** 7 fractional digits. */
  readonly progress: string;
  readonly progressCommitId: string;
  readonly totals: BackfillTotals;
  readonly runId: string;
}

/** What a range's done mark stores: its totals, and its final progress when it has one. */
export interface RangeFinal {
  readonly progress?: string;
  readonly progressCommitId?: string;
  readonly totals: BackfillTotals;
}

/** The outcome of a conditional range write: `current` is the range's state as stored when the condition failed. */
export type RangeWriteResult =
  | { readonly outcome: 'written' }
  | { readonly outcome: 'conflict'; readonly current: RangeState | undefined };

/**
 * Where backfill plans and range states live: in the cursor table (`pk` = cursor name, `sk` = `backfill#<id>` and
 * `backfill#<id>#range#<n>`), or in the local folder's state folder. Every write that matters is conditional.
 */
export interface BackfillStore {
  /** Stores a new plan; false (and nothing written) when a plan with its id already exists. */
  createPlan(plan: BackfillPlan): Promise<boolean>;
  /** A plan, or undefined. */
  readPlan(cursorName: string, backfillId: string): Promise<BackfillPlan | undefined>;
  /** The newest plan of a cursor (kuuid ids sort by time), or undefined when it has none. */
  newestPlan(cursorName: string, options?: ReadOptions): Promise<BackfillPlan | undefined>;
  /**
   * Moves a running plan's lease forward to `leaseUntil` (epoch ms); never back, never on a finished plan, and only
   * while `holder` still holds it: a lease given back (its holder removed) or taken over by another planner is not
   * renewed, so it stays given back. Without `holder` (a caller that does not know it), only a lease still live at
   * `now` is renewed, whoever holds it, so a lease given back (or lapsed) is not renewed either. Does nothing when the
   * condition fails.
   */
  renewLease(cursorName: string, backfillId: string, leaseUntil: number, holder?: string, now?: number): Promise<void>;
  /**
   * Marks a running plan finished with the summary its finish logged; returns the plan as stored afterwards (when
   * it was finished already, unchanged: the first finish's summary stands).
   */
  finishPlan(cursorName: string, backfillId: string, finishedAt: string, summary: RunSummary): Promise<BackfillPlan>;
  /** A range's state, or undefined when no worker stored anything for it yet. */
  readRange(cursorName: string, backfillId: string, n: number): Promise<RangeState | undefined>;
  /**
   * Writes a range's progress only if its stored progress is still `expected` (undefined: none stored), like the
   * cursor's compare-and-set: callers only ever pass a progress after `expected`, so it only moves forward.
   */
  advanceRange(
    cursorName: string,
    backfillId: string,
    n: number,
    expected: string | undefined,
    next: RangeProgress,
  ): Promise<RangeWriteResult>;
  /**
   * Marks a range done with its totals (and its final progress, when it has one); once done it stays done and
   * its totals are never changed again. Returns the state as stored afterwards.
   */
  markRangeDone(cursorName: string, backfillId: string, n: number, final: RangeFinal): Promise<RangeState>;
  /** Every range of a plan with a stored state, by `n`. */
  listRanges(cursorName: string, backfillId: string): Promise<RangeState[]>;
  /**
   * Claims the cursor's "active plan" for `backfillId`: only if no plan is claimed (`replacing` undefined), or the
   * claim is still `replacing` (a stale claim). False (nothing written) when another planner holds it.
   */
  claimActive(
    cursorName: string,
    backfillId: string,
    replacing: string | undefined,
    claimedAt: number,
    holder?: string,
  ): Promise<boolean>;
  /** The cursor's active-plan claim, or undefined. */
  readActive(cursorName: string): Promise<ActivePlanClaim | undefined>;
  /** Clears the active-plan claim if it is still `backfillId`'s (a finished or abandoned plan); else does nothing. */
  releaseActive(cursorName: string, backfillId: string): Promise<void>;
  /**
   * Sets a running plan's lease to `leaseUntil` (back as well as forward) and its holder, only if its lease is still
   * `expected` (undefined: whatever it is): a planner taking up a plan whose lease lapsed, or giving a lease back.
   * False when the plan is not running or its lease changed.
   */
  setLease(
    cursorName: string,
    backfillId: string,
    leaseUntil: number,
    expected: number | undefined,
    holder?: string,
  ): Promise<boolean>;
  /** Marks a running plan abandoned (never run or finished again); false when it is not running. */
  abandonPlan(cursorName: string, backfillId: string, abandonedAt: string): Promise<boolean>;
}

/** The cursor's active-plan item: which plan is being planned or run. */
export interface ActivePlanClaim {
  readonly backfillId: string;
  /** Epoch ms of the claim. */
  readonly claimedAt: number;
  /** Who claimed it, when the planner named itself (the CLI's `<pid>@<host>`, the execution's ARN on AWS). */
  readonly holder?: string;
}
