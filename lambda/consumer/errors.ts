import { CatalogSyncError, ErrorCode } from '../contract/errors.js';

/** A `watermark.json` or a commit manifest of the mirror that is not what the contract says: names the key and what is wrong. */
export class MirrorDocumentError extends CatalogSyncError {
  override readonly name = 'MirrorDocumentError';
  override get code(): ErrorCode {
    return ErrorCode.mirrorDocument;
  }
  constructor(
    /** Where the document was read: the bucket or folder, and the key. */
    readonly where: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`${where}: ${reason}`, options);
  }
}

/** A consumer that cannot run as asked: a bad name, start or option, or a leaf body that is not stored. */
export class ConsumerError extends CatalogSyncError {
  override readonly name = 'ConsumerError';
  override get code(): ErrorCode {
    return ErrorCode.consumer;
  }
}

/** An acknowledgement (the pipe form's reader) that names no commit delivered and not yet acknowledged. */
export class AcknowledgementError extends CatalogSyncError {
  override readonly name = 'AcknowledgementError';
  override get code(): ErrorCode {
    return ErrorCode.consumer;
  }
}

/**
 * A consumer's handler failed on a commit. The cursor stays at the last checkpoint before it (every commit the
 * handler finished before this one was checkpointed first), so the next run delivers this commit again.
 */
export class ConsumerHandlerError extends CatalogSyncError {
  override readonly name = 'ConsumerHandlerError';
  override get code(): ErrorCode {
    return ErrorCode.consumerHandler;
  }
  constructor(
    readonly consumer: string,
    /** The commit key of the commit the handler failed on: the idempotency key of that delivery. */
    readonly commitKey: string,
    options?: { cause?: unknown },
  ) {
    super(`consumer ${JSON.stringify(consumer)}: the handler failed on commit ${commitKey}: ${(options?.cause as Error)?.message ?? String(options?.cause)}`, options);
  }
}
