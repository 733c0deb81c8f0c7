import { CatalogSyncError, ErrorCode } from '../contract/errors.js';
import { redactUrl } from '../contract/redact.js';

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

/**
 * Another planner's plan of the cursor is being planned or run (its lease is live): this planner made no plan and
 * runs nothing. Says which plan, who holds it (when known) and until when.
 */
export class BackfillRunningError extends CatalogSyncError {
  override readonly name = 'BackfillRunningError';
  override get code(): ErrorCode {
    return ErrorCode.backfillRunning;
  }
  constructor(
    readonly backfillId: string,
    readonly cursorName: string,
    /** Epoch ms until which the plan is held, when it exists yet. */
    readonly leaseUntil: number | undefined,
    readonly holder: string | undefined,
    /** True while the other planner has claimed the cursor but not yet written its plan. */
    readonly planning = leaseUntil === undefined,
  ) {
    super(
      `backfill ${backfillId} of cursor ${cursorName} is ${planning ? 'being planned' : 'running'}` +
        `${holder === undefined ? '' : ` (held by ${holder})`}` +
        `${leaseUntil === undefined ? '' : `; its ${planning ? 'claim' : 'lease'} lasts until ${new Date(leaseUntil).toISOString()} unless ${planning ? 'its plan is written' : 'renewed'}`}: ` +
        'no second plan was made. Wait for it (a rerun after it stops resumes it), or abandon it (`catalog-sync backfill --abandon`, or the input {"abandon": true} on AWS).',
    );
  }
}

/** A rerun asked for another `until` or `rangeLeaves` than the unfinished plan it would resume. */
export class BackfillMismatchError extends CatalogSyncError {
  override readonly name = 'BackfillMismatchError';
  override get code(): ErrorCode {
    return ErrorCode.backfillMismatch;
  }
  constructor(
    readonly backfillId: string,
    /** What differs: `until` or `rangeLeaves`, with the plan's value and the asked one. */
    readonly differences: readonly { readonly name: string; readonly plan: string; readonly asked: string }[],
  ) {
    super(
      `backfill ${backfillId} is unfinished with ${differences.map((d) => `${d.name} ${d.plan}`).join(' and ')}, but ` +
        `${differences.map((d) => `${d.name} ${d.asked}`).join(' and ')} was asked: nothing was changed. Run again without them to resume it, ` +
        'or abandon it first (`catalog-sync backfill --abandon`, or the input {"abandon": true} on AWS) to plan anew.',
    );
  }
}
