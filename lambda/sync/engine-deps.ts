/**
 * What the engine talks to and tells: its dependencies, its logger and its progress reports. Its own module so
 * that the engine (`engine.ts`) and the leaf pipeline (`leaf-pipeline.ts`) both import it without importing each
 * other.
 */
import type { CatalogClient } from '../catalog/catalog-client.js';
import type { Ticks } from '../contract/time.js';
import type { LeafMemory } from './leaf-memory.js';
import type { BackfillStore, CursorStore, PutRetryEvent, RunLogStore, SnapshotStore } from '../stores/types.js';

/** Structured logging, as Powertools Logger offers it. */
export interface EngineLogger {
  info(message: string, extra?: Record<string, unknown>): void;
  warn(message: string, extra?: Record<string, unknown>): void;
  error(message: string, extra?: Record<string, unknown>): void;
  /** Detail for `--verbose` and the Lambda's debug log (each S3 PUT retry); optional, as a caller may log less. */
  debug?(message: string, extra?: Record<string, unknown>): void;
}

/** Progress after each completed commit, for progress bars and metrics. */
export interface Progress {
  readonly commits: number;
  readonly leaves: number;
  readonly bytes: number;
  readonly cursor: Ticks;
  /** The newest commit this run may reach. */
  readonly upper: Ticks;
}

/** What the engine talks to. */
export interface EngineDeps {
  readonly catalog: CatalogClient;
  readonly cursors: CursorStore;
  readonly snapshots: SnapshotStore;
  readonly runLog?: RunLogStore;
  /**
   * Backfill plans and range states. When given, a follower run first checks for a backfill of its cursor holding
   * a live lease, and leaves the work to it (`stoppedBy: 'backfill'`). The backfill functions require it.
   */
  readonly backfills?: BackfillStore;
  readonly logger?: EngineLogger;
  /**
   * Epoch ms at which the run stops: it takes no new leaf, aborts the requests in flight (their commits stay
   * incomplete), checkpoints the last complete commit and returns `time-budget`.
   */
  readonly deadline?: number;
  /**
   * Epoch ms by which every write after the run stops taking work has ended (the last checkpoints and
   * `watermark.json` a second before it, the run-log record at it), each aborted then. The Lambda passes its own end
   * less a second; absent, the deadline plus `CLOSING_MS` (run-budget.ts, 5 s). A stop by `signal` brings it to
   * at most `CLOSING_MS` after the stop.
   */
  readonly closeBy?: number;
  /**
   * The newest commit time the run may take (`run --until`, `--delay`): a bound like a dependency cursor's, but
   * reaching it below the catalog head is `until` with `caughtUp` false (at or past the head, `caught-up`).
   */
  readonly ceiling?: Ticks;
  /** Aborting stops the run like the deadline does (Ctrl-C in the CLI), and it says `interrupted`. */
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: Progress) => void;
  /** Days a run-log record is kept (TTL). */
  readonly runLogDays?: number;
  /** The run id to use (a kuuid id); a new one when absent. */
  readonly runId?: string;
  /**
   * Least ms between two `watermark.json` writes during a run (`WATERMARK_INTERVAL_MS` of watermark.ts, 1 s, when absent; the
   * closing one is always written). For tests, which set 0 to see one after every checkpoint.
   */
  readonly watermarkIntervalMs?: number;
  /**
   * A check the run must pass before it takes anything (the Lambda's id filter, read from S3), made while the run's
   * opening reads are in flight rather than before them. Its failure is the run's, thrown as it is (no summary),
   * before any write, as if the check had been made before the run.
   */
  readonly admission?: Promise<unknown>;
  /** Told the catalog head once the index is read: for the lag metric. */
  readonly onIndex?: (head: Ticks) => void;
  /** Told of each snapshot write's retry (the engine counts them in the run summary's `putRetries`). */
  readonly onPutRetry?: (event: PutRetryEvent) => void;
  /**
   * The process's budget for leaf bodies in flight (leaf-memory.ts), shared by its runs; the faces make it from
   * contract/leaf-memory.ts's rule. Absent: one of `DEFAULT_LEAF_MEMORY_BYTES` for the run.
   */
  readonly leafMemory?: LeafMemory;
  /** Told each stored leaf's timing (`performance.now()` ms: fetch start, fetched, PUT done); for the benchmark. */
  readonly onLeaf?: (startMs: number, fetchedMs: number, storedMs: number) => void;
}

/** What the backfill functions talk to: the engine's dependencies with the backfill store. */
export type BackfillDeps = EngineDeps & { readonly backfills: BackfillStore };
