import { CatalogSyncError, ErrorCode } from '../contract/errors.js';

/** The local state file could not be read, locked or written (the lock was lost to another process). */
export class LocalStateError extends CatalogSyncError {
  override readonly name = 'LocalStateError';
  override get code(): ErrorCode {
    return ErrorCode.localState;
  }
}
