import { CatalogSyncError, ErrorCode } from '../../contract/errors.js';
import { redactUrl } from '../../contract/redact.js';

/** A range worker stopped on a failure (a document or fetch that failed, a store that failed): the range is not done. */
export class BackfillRangeError extends CatalogSyncError {
  override readonly name = 'BackfillRangeError';
  override get code(): ErrorCode {
    return ErrorCode.backfillRange;
  }
  constructor(
    readonly backfillId: string,
    readonly n: number,
    /** The URL that failed, when the failure names one. */
    url: string | undefined,
    cause: unknown,
  ) {
    const shown = url === undefined ? undefined : redactUrl(url);
    super(
      `backfill ${backfillId} range ${n} failed${shown === undefined ? '' : ` at ${shown}`}: ${(cause as Error)?.message ?? String(cause)}`,
      { cause },
    );
    this.url = shown;
  }
  /** The URL that failed (credentials and query values hidden), when the failure names one. */
  readonly url: string | undefined;
}

/** `finishBackfill` was asked to finish a plan with ranges not done: the cursor did not move. */
export class BackfillIncompleteError extends CatalogSyncError {
  override readonly name = 'BackfillIncompleteError';
  override get code(): ErrorCode {
    return ErrorCode.backfillIncomplete;
  }
  constructor(
    readonly backfillId: string,
    /** The ranges not done (the first 20), and how many there are in all. */
    readonly notDone: readonly number[],
    readonly notDoneCount: number,
  ) {
    super(
      `backfill ${backfillId}: ${notDoneCount} range(s) not done (${notDone.join(', ')}${notDoneCount > notDone.length ? ', …' : ''}); the cursor was not moved`,
    );
  }
}

/** A plan or its ranges file is missing or unreadable, or the backfill store is not given. */
export class BackfillPlanError extends CatalogSyncError {
  override readonly name = 'BackfillPlanError';
  override get code(): ErrorCode {
    return ErrorCode.backfillPlan;
  }
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}
