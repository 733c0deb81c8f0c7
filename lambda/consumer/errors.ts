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

/**
 * A leaf of the mirror that cannot be read: its body is not stored, it was set aside by quarantine, or its bytes are
 * not what the follower accepted when it stored them (see `parseStoredLeaf`). Names the mirror, the leaf's key and
 * the commit it belongs to.
 */
export class StoredLeafError extends CatalogSyncError {
  override readonly name = 'StoredLeafError';
  override get code(): ErrorCode {
    return ErrorCode.storedLeaf;
  }
  constructor(
    /** The bucket or folder (and prefix) of the mirror. */
    readonly where: string,
    /** The leaf's key: `{prefix}leaves/{commitKey}/{id}/{version}.json`. */
    readonly key: string,
    /** The key of the commit the leaf belongs to. */
    readonly commitKey: string,
    /** What is wrong. */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`${where} ${key} (commit ${commitKey}): ${reason}`, options);
  }
}

/**
 * A place given to read (a folder, a bucket, a prefix) that holds no mirror: no `watermark.json`, no manifest under
 * `commits/`, no leaf under `leaves/`. Most often a wrong folder, bucket or `--prefix`: the CLI exits 2, as for other
 * settings errors. Names the place, what is missing, and what was found near it when something was.
 */
export class NoMirrorError extends CatalogSyncError {
  override readonly name = 'NoMirrorError';
  override get code(): ErrorCode {
    return ErrorCode.noMirror;
  }
  constructor(
    /** The bucket or folder and the prefix. */
    readonly where: string,
    /** The prefix looked under. */
    readonly prefix: string,
    /** What was found near it (a mirror under another prefix, the folder's absence), or undefined. */
    readonly hint?: string,
    options?: { cause?: unknown },
  ) {
    super(
      `${where}: no mirror here: no ${prefix}watermark.json, no manifests under ${prefix}commits/, no leaves under ${prefix}leaves/${hint === undefined ? '' : ` (${hint})`}`,
      options,
    );
  }
}

/** A consumer that cannot run as asked: a bad name, start or option. */
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
    super(
      `consumer ${JSON.stringify(consumer)}: the handler failed on commit ${commitKey}: ${(options?.cause as Error)?.message ?? String(options?.cause)}`,
      options,
    );
  }
}
