import { CatalogSyncError, ErrorCode } from '../contract/errors.js';

/** The latest view cannot be kept: a stored `index.json` that is not one (named by key), or a write that kept losing. */
export class ViewError extends CatalogSyncError {
  override readonly name = 'ViewError';
  override get code(): ErrorCode {
    return ErrorCode.view;
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
