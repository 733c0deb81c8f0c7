import { Readable } from 'node:stream';
import { DeleteObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { withS3SetupErrors } from '../stores/aws-setup-error.js';
import { S3SnapshotStore } from '../stores/s3-store.js';
import { leanPutFor } from '../stores/s3-put-wiring.js';
import { S3ViewDocuments } from '../view/s3-view-documents.js';
import type { StoredDocument } from '../view/view-documents.js';
import { CONTENT_TYPES, type FeedObjectKind, type FeedStorage } from './feed-storage.js';

/** Parts of a package's multipart upload: S3's least (5 MiB), so a part in memory is as small as S3 allows. */
export const DEFAULT_PART_BYTES = 5 * 1024 * 1024;
/** Parts of one package uploaded at once: a package holds at most (this + 1) parts in memory while it streams. */
export const DEFAULT_PARTS_AT_ONCE = 4;

/** How packages are uploaded. */
export interface S3FeedStorageOptions {
  /** Bytes of a part (default {@link DEFAULT_PART_BYTES}; S3 takes 5 MiB at least). */
  readonly partBytes?: number;
  /** Parts uploaded at once per package (default {@link DEFAULT_PARTS_AT_ONCE}). */
  readonly partsAtOnce?: number;
}

/**
 * The feed in the mirror's S3 bucket. Documents are single PUTs through the S3 client's lean client
 * (stores/s3-put-client.ts: the SDK's signer and retry strategy without its per-request CPU), compare-and-swap ones
 * with `If-Match` / `If-None-Match: *` as the latest view's (view/s3-view-documents.ts); packages go through `@aws-sdk/lib-storage`'s `Upload`: a body smaller
 * than a part is one PUT, a larger one a multipart upload whose parts are sent as they fill, and which is aborted (no
 * object, no parts left behind) when the body fails, so a package that is not the leaf's is never visible.
 */
export class S3FeedStorage implements FeedStorage {
  readonly where: string;
  private readonly documents: S3ViewDocuments;
  private readonly objects: S3SnapshotStore;

  constructor(
    readonly bucket: string,
    private readonly client: S3Client,
    private readonly options: S3FeedStorageOptions = {},
  ) {
    this.where = `s3://${bucket}`;
    this.documents = new S3ViewDocuments(bucket, client);
    this.objects = new S3SnapshotStore(bucket, client);
  }

  read(key: string): Promise<StoredDocument | undefined> {
    return this.documents.read(key);
  }

  writeIf(key: string, bytes: Buffer, expected: string | undefined): Promise<boolean> {
    return this.documents.writeIf(key, bytes, expected);
  }

  put(key: string, bytes: Buffer, kind: FeedObjectKind): Promise<void> {
    return withS3SetupErrors(
      leanPutFor(this.client).put({ bucket: this.bucket, key, body: bytes, contentType: CONTENT_TYPES[kind] }),
    );
  }

  async putStream(key: string, body: AsyncIterable<Uint8Array>): Promise<void> {
    // The body's own failure is the one to throw: lib-storage throws its abort's failure instead, when that fails too.
    let failure: { error: unknown } | undefined;
    const watched = (async function* (): AsyncGenerator<Uint8Array> {
      try {
        yield* body;
      } catch (error) {
        failure = { error };
        throw error;
      }
    })();
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: this.bucket,
        Key: key,
        Body: Readable.from(watched, { objectMode: false, highWaterMark: 64 * 1024 }),
        ContentType: CONTENT_TYPES.nupkg,
      },
      partSize: this.options.partBytes ?? DEFAULT_PART_BYTES,
      queueSize: this.options.partsAtOnce ?? DEFAULT_PARTS_AT_ONCE,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (error) {
      throw failure === undefined ? error : failure.error;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  list(prefix: string): AsyncIterable<string> {
    return this.objects.listKeys(prefix);
  }
}
