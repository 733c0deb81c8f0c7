/** Where a feed lives (the mirror's bucket or folder) and what the feed does with it. */
import type { StoredDocument } from '../view/view-documents.js';

export type { StoredDocument } from '../view/view-documents.js';

/** What kind of object a write stores (its `Content-Type` in S3). */
export type FeedObjectKind = 'json' | 'nupkg';

/** The `Content-Type` of each kind. NuGet checks none (FINDINGS: S3's `binary/octet-stream` restores too). */
export const CONTENT_TYPES: Readonly<Record<FeedObjectKind, string>> = {
  json: 'application/json',
  nupkg: 'application/octet-stream',
};

/** A feed's objects in S3 or a folder. */
export interface FeedStorage {
  /** e.g. `s3://bucket` or the folder: named in errors. */
  readonly where: string;
  /** An object's bytes and tag, or `undefined` when there is none. */
  read(key: string): Promise<StoredDocument | undefined>;
  /**
   * Writes `bytes` only if the stored object is still the one tagged `expected` (`undefined`: only if there is none):
   * S3's `If-Match` / `If-None-Match: *`, a folder's feed lock. False, and nothing written, when another writer got
   * there first.
   */
  writeIf(key: string, bytes: Buffer, expected: string | undefined): Promise<boolean>;
  /** Writes a whole document (atomically: a reader sees the old bytes or the new, never a part). */
  put(key: string, bytes: Buffer, kind: FeedObjectKind): Promise<void>;
  /**
   * Stores a body that arrives in pieces, holding only a bounded part of it in memory: a multipart upload to S3, a
   * temporary file renamed into place in a folder. When `body` throws (a download cut short, bytes that are not the
   * leaf's), nothing is stored and the error is thrown as it is.
   */
  putStream(key: string, body: AsyncIterable<Uint8Array>): Promise<void>;
  /** Deletes a key; an absent key is fine. */
  delete(key: string): Promise<void>;
  /** Keys under `prefix`, in byte order. */
  list(prefix: string): AsyncIterable<string>;
}
