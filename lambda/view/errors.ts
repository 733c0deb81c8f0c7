import { CatalogSyncError, ErrorCode } from '../contract/errors.js';

/** The latest view cannot be kept: a stored `index.json` that is not one (named by key), or a write that kept losing. */
export class ViewError extends CatalogSyncError {
  override readonly name: string = 'ViewError';
  override get code(): ErrorCode {
    return ErrorCode.view;
  }
}

/** A view rebuild's plan is missing, abandoned, not a rebuild's, or its items or records are not stored. */
export class ViewRebuildPlanError extends ViewError {
  override readonly name: string = 'ViewRebuildPlanError';
}

/** A rebuild asked with other settings than the mirror's unfinished one: nothing was changed. */
export class ViewRebuildMismatchError extends ViewError {
  override readonly name: string = 'ViewRebuildMismatchError';
  constructor(
    readonly rebuildId: string,
    readonly differences: readonly { readonly name: string; readonly plan: string; readonly asked: string }[],
  ) {
    super(
      `view rebuild ${rebuildId} is unfinished with ${differences.map((d) => `${d.name} ${d.plan}`).join(' and ')}, but ` +
        `${differences.map((d) => `${d.name} ${d.asked}`).join(' and ')} was asked: nothing was changed. Run again without them to resume it, ` +
        'or abandon it first (`catalog-sync view --rebuild --abandon`, or the input {"abandon": true} on AWS).',
    );
  }
}

/** Another rebuild of the mirror's view is being planned or run (its lease is live): this one did nothing. */
export class ViewRebuildRunningError extends ViewError {
  override readonly name: string = 'ViewRebuildRunningError';
  constructor(
    readonly rebuildId: string,
    readonly holder: string | undefined,
    /** Epoch ms until which it is held, when known. */
    readonly leaseUntil: number | undefined,
  ) {
    super(
      `view rebuild ${rebuildId} is running${holder === undefined ? '' : ` (held by ${holder})`}` +
        `${leaseUntil === undefined ? '' : `; its lease lasts until ${new Date(leaseUntil).toISOString()} unless renewed`}: ` +
        'no second rebuild was started. Wait for it (a rerun after it stops resumes it), or abandon it (`catalog-sync view --rebuild --abandon`).',
    );
  }
}

/** `finishRebuild` was asked to finish a plan with items not done: the cursor did not move. */
export class ViewRebuildIncompleteError extends ViewError {
  override readonly name: string = 'ViewRebuildIncompleteError';
  constructor(
    readonly rebuildId: string,
    /** The items not done (the first 20), and how many there are in all. */
    readonly notDone: readonly number[],
    readonly notDoneCount: number,
  ) {
    super(
      `view rebuild ${rebuildId}: ${notDoneCount} item(s) not done (${notDone.join(', ')}${notDoneCount > notDone.length ? ', …' : ''}); the cursor was not moved`,
    );
  }
}

/**
 * The view's S3 server stores a PUT whose `If-Match` / `If-None-Match` must fail, which would silently turn off the
 * stale-writer guard: the view refuses to write there. Names the probe's key, the condition ignored and what the
 * server did instead.
 */
export class ConditionalPutError extends CatalogSyncError {
  override readonly name = 'ConditionalPutError';
  override get code(): ErrorCode {
    return ErrorCode.conditionalPut;
  }
  constructor(
    readonly url: string,
    readonly condition: string,
    readonly answer: string,
    options?: ErrorOptions,
  ) {
    super(
      `${url}: a PUT sent with ${condition} ${answer}: the server does not honour conditional writes (S3 has since 2024; see docs/contract.md, "What an S3-compatible server must guarantee", point 8), which the latest view's stale-writer guard needs; nothing of the view was written`,
      options,
    );
  }
}
