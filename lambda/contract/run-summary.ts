import { CatalogSyncError, ErrorCode } from './errors.js';
import { redactUrl } from './redact.js';

/** Why a run stopped (docs/contract.md, "The run summary", says what each value means). */
export const StoppedBy = {
  /** The cursor reached the catalog head: nothing more to take (`caughtUp` true). */
  caughtUp: 'caught-up',
  maxCommits: 'max-commits',
  maxLeaves: 'max-leaves',
  /** The run's time budget ended (the Lambda's remaining time less its margin, `--time-budget`). */
  timeBudget: 'time-budget',
  /** A signal stopped it (SIGINT/SIGTERM in the CLI; never from the Lambda, which gets none). */
  interrupted: 'interrupted',
  /**
   * It took everything up to a bound the caller set below the catalog head (`run --until`, `--delay`,
   * `backfill --until`): `caughtUp` false, since the catalog has more.
   */
  until: 'until',
  dependency: 'dependency',
  lostRace: 'lost-race',
  /** A backfill of the cursor holds a live lease: the follower leaves the work to it. */
  backfill: 'backfill',
  error: 'error',
} as const;

/** One of {@link StoppedBy}'s values. */
export type StoppedBy = (typeof StoppedBy)[keyof typeof StoppedBy];

/** What a run did: returned by the Lambda, printed by the CLI, stored in the run log. */
export interface RunSummary {
  /** A kuuid id: the run log's sort key is `run#` + this. */
  readonly runId: string;
  readonly cursorName: string;
  /** Seven fractional digits, as stored. */
  readonly cursorBefore: string;
  readonly cursorAfter: string;
  /** Commits completed and checkpointed. */
  readonly commits: number;
  /** Leaves stored in completed commits (quarantined ones excluded). */
  readonly leaves: number;
  /** Of those, `PackageDelete` leaves. */
  readonly deletes: number;
  /** Leaves set aside under `quarantine/`. */
  readonly quarantined: number;
  /** Bytes of leaf bodies stored in completed commits. */
  readonly bytes: number;
  /** True when the cursor reached the catalog head (or the dependency bound); false for `until`. */
  readonly caughtUp: boolean;
  readonly stoppedBy: StoppedBy;
  readonly durationMs: number;
  /**
   * Retries of the run's S3 PUTs (leaves, manifests, quarantine records, the watermark): attempts after the
   * first, whatever their outcome. 0 for a local folder. Throttling (SlowDown) shows here first.
   */
  readonly putRetries: number;
  /**
   * Commits the run found behind the cursor that the mirror does not hold: appended to the catalog after the cursor
   * passed their time (the catalog's times went back). Never taken by the follower (`verify --repair` stores
   * them); each is logged. Absent when there was none, and in records written before the field existed.
   */
  readonly behindCursor?: number;
  /** Only on a failed run (`stoppedBy: "error"`): what the error was. */
  readonly error?: RunError;
}

/** The error that stopped a failed run, as its summary and the run log carry it. */
export interface RunError {
  /** The error's message (URLs in it already redacted by the errors that name them). */
  readonly message: string;
  /** The URL the error names (a fetch or a document), redacted; absent when it names none. */
  readonly url?: string;
  /** The stable {@link ErrorCode} of the error (`CS_ERR_SYNC` for an error that is not a catalog-sync one). */
  readonly code: string;
}

/** The {@link RunError} of `error`: its message, its URL when it names one (redacted), its catalog-sync code. */
export function runErrorOf(error: unknown): RunError {
  const message = error instanceof Error ? error.message : String(error);
  const url = (error as { url?: unknown } | null)?.url;
  const code = error instanceof CatalogSyncError ? error.code : ErrorCode.sync;
  return { message, ...(typeof url === 'string' && url !== '' ? { url: redactUrl(url) } : {}), code };
}
