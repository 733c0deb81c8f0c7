import type { Ticks } from '../contract/time.js';
import type { RunSummary } from '../contract/run-summary.js';

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
}

/** The outcome of a conditional cursor write. */
export type CompareAndSetResult =
  | { readonly outcome: 'written' }
  /** Another run changed the cursor since it was read: `current` is what is stored now. */
  | { readonly outcome: 'conflict'; readonly current: CursorState | undefined };

/** Where cursors live: one item per cursor name. */
export interface CursorStore {
  /** The cursor named `name`, or `undefined` when none is stored. */
  read(name: string): Promise<CursorState | undefined>;
  /**
   * Writes `next` only if the stored cursor is still `expected` (`undefined`: no cursor stored yet).
   * Callers never pass a `next` at or before `expected`.
   */
  compareAndSet(name: string, expected: CursorState | undefined, next: CursorTarget): Promise<CompareAndSetResult>;
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
  appendRun(summary: RunSummary, expiresAt: number): Promise<void>;
  listRuns(cursorName: string, query: RunQuery): Promise<RunSummary[]>;
}

/** Where snapshots, manifests and quarantine records go: an S3 bucket or a folder with the same keys. */
export interface SnapshotStore {
  /** Stores a leaf's exact bytes with its metadata. */
  putLeaf(key: string, body: Buffer, metadata: Readonly<Record<string, string>>): Promise<void>;
  /** Stores a JSON document (manifest, quarantine record). */
  putJson(key: string, value: unknown): Promise<void>;
  /** Reads a JSON document, or `undefined` when there is none. */
  getJson(key: string): Promise<unknown>;
  /** Deletes a key (quarantine records that were retried successfully); absent keys are fine. */
  deleteKey(key: string): Promise<void>;
  /** Keys under `prefix`, in byte order, after `startAfter`. */
  listKeys(prefix: string, startAfter?: string): AsyncIterable<string>;
  /**
   * Most bytes one `/`-separated key segment may have, when the store has such a limit (a folder: a file
   * name's 255). A leaf whose segment is longer is an item error, set aside by quarantine like a bad leaf.
   */
  readonly maxKeySegmentBytes?: number;
}
