/** Where the view's documents live, read and written with a compare-and-swap: the stale-writer guard. */

/** A stored document and its tag (S3: the ETag; a folder: a digest of the bytes). */
export interface StoredDocument {
  readonly bytes: Buffer;
  readonly tag: string;
}

/** The view's documents in S3 or a folder. */
export interface ViewDocuments {
  /** e.g. `s3://bucket` or the folder: named in errors. */
  readonly where: string;
  read(key: string): Promise<StoredDocument | undefined>;
  /**
   * Writes `bytes` only if the stored document is still the one tagged `expected` (`undefined`: only if there is
   * none). False, and nothing written, when another writer got there first.
   */
  writeIf(key: string, bytes: Buffer, expected: string | undefined): Promise<boolean>;
  /**
   * {@link writeIf} of many documents in one go, each with its own condition (a folder takes its lock once for
   * them all); where absent, each is written on its own. Results in the order of `writes`.
   */
  writeMany?(writes: readonly ConditionalWrite[]): Promise<boolean[]>;
}

/** One write of {@link ViewDocuments.writeMany}. */
export interface ConditionalWrite {
  readonly key: string;
  readonly bytes: Buffer;
  /** The tag of the stored document the bytes were built on; `undefined`: only if there is none. */
  readonly expected: string | undefined;
}
