import { CatalogSyncError, ErrorCode } from '../contract/errors.js';

/**
 * The private feed cannot be kept: a setting it cannot work with (a base URL, a source without a flat container), a
 * stored document that is not one (named by key), a source that refuses the feed's requests, or a write that kept
 * losing its compare-and-swap. Each message names the key, URL or setting.
 */
export class FeedError extends CatalogSyncError {
  override readonly name: string = 'FeedError';
  override get code(): ErrorCode {
    return ErrorCode.feed;
  }
  /** The setting at fault, when one is: the feed's base URL, or the source it downloads from. */
  readonly setting: 'baseUrl' | 'source' | undefined;

  constructor(message: string, options?: ErrorOptions & { readonly setting?: 'baseUrl' | 'source' }) {
    super(message, options);
    this.setting = options?.setting;
  }
}

/** What a package's bytes were, or were meant to be. */
export interface PackageDigest {
  /** SHA-512 of the bytes, base64 (the catalog's `packageHash`). */
  readonly hash: string;
  /** Bytes (the catalog's `packageSize`). */
  readonly size: number;
}

/**
 * A package whose bytes are not what its catalog leaf says: the feed quarantines it (records it under
 * `feed-state/quarantine/`) and never stores it. `actual` is what was read: its size and hash when the whole body
 * was read, its size so far (and no hash) when it was stopped for being too large.
 */
export class PackageMismatchError extends FeedError {
  override readonly name = 'PackageMismatchError';
  override get code(): ErrorCode {
    return ErrorCode.feedPackage;
  }
  constructor(
    readonly url: string,
    readonly expected: PackageDigest,
    readonly actual: { readonly size: number; readonly hash?: string },
  ) {
    super(
      actual.hash === undefined
        ? `${url}: more than the leaf's packageSize of ${expected.size} bytes (stopped at ${actual.size})`
        : `${url}: ${actual.size} bytes with SHA-512 ${actual.hash}, where the leaf says ${expected.size} bytes with ${expected.hash}`,
    );
  }
}
