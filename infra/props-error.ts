import { CatalogSyncError, ErrorCode } from '../lambda/contract/index.js';

/**
 * A prop of {@link CatalogSync} (or of a construct it is made of) that cannot be deployed; the message names the
 * construct and the prop. In a file of its own, so that a construct of infra/constructs/ can throw it without importing
 * the props it is part of.
 */
export class CatalogSyncPropsError extends CatalogSyncError {
  override readonly name = 'CatalogSyncPropsError';
  override get code(): ErrorCode {
    return ErrorCode.props;
  }
}
