/**
 * The errors of catalog-sync: every error the project throws on purpose is a {@link CatalogSyncError} with a
 * stable {@link ErrorCode} a caller can switch on (as undici's `UND_ERR_*`), and the underlying error, when
 * there is one, as the standard `cause` (as Powertools' errors carry it, through `ErrorOptions`).
 *
 * The classes themselves live next to the code that throws them; their codes live here, in one list, so no
 * two classes share a code and a code never changes once published.
 */

/** Every code, by the error it names. Values are stable: add new ones, never rename. */
export const ErrorCode = {
  timestamp: 'CS_ERR_TIMESTAMP',
  base62: 'CS_ERR_BASE62',
  kuuid: 'CS_ERR_KUUID',
  commitKey: 'CS_ERR_COMMIT_KEY',
  keySegment: 'CS_ERR_KEY_SEGMENT',
  settings: 'CS_ERR_SETTINGS',
  invalidDocument: 'CS_ERR_INVALID_DOCUMENT',
  unsafeCatalogUrl: 'CS_ERR_UNSAFE_CATALOG_URL',
  fetch: 'CS_ERR_FETCH',
  forbiddenOrigin: 'CS_ERR_FORBIDDEN_ORIGIN',
  bodyTooLarge: 'CS_ERR_BODY_TOO_LARGE',
  /** A leaf body larger than the whole leaf memory budget (contract/leaf-memory.ts): an item error, quarantinable. */
  leafMemory: 'CS_ERR_LEAF_MEMORY',
  /** A body the leaf memory budget cannot hold now: dropped, fetched again once it fits (never leaves the engine). */
  bodyDeferred: 'CS_ERR_BODY_DEFERRED',
  fetchAborted: 'CS_ERR_FETCH_ABORTED',
  cursorItem: 'CS_ERR_CURSOR_ITEM',
  localState: 'CS_ERR_LOCAL_STATE',
  fileName: 'CS_ERR_FILE_NAME',
  fileNameMode: 'CS_ERR_FILE_NAME_MODE',
  timeBudget: 'CS_ERR_TIME_BUDGET',
  sync: 'CS_ERR_SYNC',
  usage: 'CS_ERR_USAGE',
  context: 'CS_ERR_CONTEXT',
  props: 'CS_ERR_PROPS',
  backfillRange: 'CS_ERR_BACKFILL_RANGE',
  backfillIncomplete: 'CS_ERR_BACKFILL_INCOMPLETE',
  backfillPlan: 'CS_ERR_BACKFILL_PLAN',
  backfillRunning: 'CS_ERR_BACKFILL_RUNNING',
  backfillMismatch: 'CS_ERR_BACKFILL_MISMATCH',
  s3Put: 'CS_ERR_S3_PUT',
  s3PutAborted: 'CS_ERR_S3_PUT_ABORTED',
  mirrorDocument: 'CS_ERR_MIRROR_DOCUMENT',
  consumer: 'CS_ERR_CONSUMER',
  consumerHandler: 'CS_ERR_CONSUMER_HANDLER',
  /** The latest view (`packages/{id}/index.json`): a stored index that is not one, or a write that kept losing its race. */
  view: 'CS_ERR_VIEW',
  idFilterChanged: 'CS_ERR_ID_FILTER_CHANGED',
  /** A stored leaf of the mirror that cannot be read (not stored, set aside, or not what the follower accepted): names its key and commit. */
  storedLeaf: 'CS_ERR_STORED_LEAF',
  /** A place to read (a folder, a bucket, a prefix) that holds no mirror: no watermark.json, no manifests, no leaves. */
  noMirror: 'CS_ERR_NO_MIRROR',
  /** An S3 listing (ListObjectsV2) that failed: names the bucket, the prefix and where it started. */
  s3List: 'CS_ERR_S3_LIST',
  /**
   * An S3-compatible server that stores a PUT whose `If-Match` / `If-None-Match` must fail: the latest view's
   * stale-writer guard would be off, so the view refuses to write there (names the probe key and what is missing).
   */
  conditionalPut: 'CS_ERR_CONDITIONAL_PUT',
  /** The private feed (`feed/`): a setting it cannot work with, a stored document that is not one, or a write that kept losing. */
  feed: 'CS_ERR_FEED',
  /** A package whose bytes are not what its catalog leaf says (`packageHash`, `packageSize`): quarantined, never stored. */
  feedPackage: 'CS_ERR_FEED_PACKAGE',
} as const;

/** One of {@link ErrorCode}'s values. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/**
 * The base of every catalog-sync error. `code` is a getter on each class's prototype, not an own property,
 * so an error's own fields (what logs and `toEqual` see) are those of its class alone.
 */
export abstract class CatalogSyncError extends Error {
  /** The stable code of this kind of error. */
  abstract get code(): ErrorCode;

  constructor(message?: string, options?: ErrorOptions) {
    super(message, options);
  }
}

/** True when `error` is a catalog-sync error with `code`. */
export function hasErrorCode(error: unknown, code: ErrorCode): error is CatalogSyncError {
  return error instanceof CatalogSyncError && error.code === code;
}

/** Whether `error` is a request the run's signal stopped (a catalog GET, an S3 request): a stop, not a failure. */
export function isRunStop(error: unknown): boolean {
  return hasErrorCode(error, ErrorCode.fetchAborted) || hasErrorCode(error, ErrorCode.s3PutAborted);
}

/**
 * Whether `error` or one of its causes is {@link isRunStop}: work that failed because the run was stopped (a consumer's
 * batch whose requests a Ctrl-C aborted), to be reported as a stop, not as a failure.
 */
export function stoppedByRun(error: unknown): boolean {
  // A few levels: a batch's error wraps the request's; a loop of causes must not hang.
  let at: unknown = error;
  for (let depth = 0; depth < 8 && at instanceof Error; depth++, at = at.cause) if (isRunStop(at)) return true;
  return false;
}
