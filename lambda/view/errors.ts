import { CatalogSyncError, ErrorCode } from '../contract/errors.js';

/** The latest view cannot be kept: a stored `index.json` that is not one (named by key), or a write that kept losing. */
export class ViewError extends CatalogSyncError {
  override readonly name = 'ViewError';
  override get code(): ErrorCode {
    return ErrorCode.view;
  }
}
