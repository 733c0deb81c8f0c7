import { DeleteObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SettingsError } from '../contract/settings.js';
import { withS3SetupErrors } from './aws-setup-error.js';
import { S3ListError } from './s3-list-error.js';
import type { S3PutClient } from './s3-put-client.js';
import { leanPutFor } from './s3-put-wiring.js';
import {
  sdkSendOptions,
  type ReadOptions,
  type SnapshotReader,
  type SnapshotStore,
  type TaggedBytes,
  type WriteOptions,
} from './types.js';

/**
 * Snapshots in an S3 bucket. Every write is a whole-object PUT of a buffer already in memory, so a
 * retried or repeated write gives the same object, and a reader never sees half a leaf.
 *
 * Leaves and manifests are PUT, and objects read, by the lean client of `client` (s3-put-client.ts: SigV4 with the
 * client's own credentials and region, retries as the SDK's, undici); deletes and listings go through the SDK.
 * A failed PUT throws `S3PutError` (`CS_ERR_S3_PUT`), naming the bucket, key, status, S3's code and the attempts;
 * one stopped by the caller's signal throws `S3PutAbortedError`. The conditional writes (`watermark.json`: one a
 * second at most) go through the SDK's GetObject and PutObject, which carry the ETag and `If-Match`.
 */
export class S3SnapshotStore implements SnapshotStore, SnapshotReader {
  /** `s3://{bucket}`: a named consumer's cursor is keyed by it (and the prefix). */
  readonly location: string;

  constructor(
    readonly bucket: string,
    private readonly client: S3Client = new S3Client({}),
    private readonly puts: S3PutClient = leanPutFor(client),
  ) {
    this.location = `s3://${bucket}`;
  }

  async putLeaf(
    key: string,
    body: Buffer,
    metadata: Readonly<Record<string, string>>,
    options?: WriteOptions,
  ): Promise<void> {
    await this.puts.put({ bucket: this.bucket, key, body, contentType: 'application/json', metadata }, options);
  }

  async putJson(key: string, value: unknown, options?: WriteOptions): Promise<void> {
    await this.puts.put(
      { bucket: this.bucket, key, body: Buffer.from(JSON.stringify(value)), contentType: 'application/json' },
      options,
    );
  }

  async getJson(key: string): Promise<unknown> {
    const bytes = await this.getBytes(key);
    return bytes === undefined ? undefined : JSON.parse(bytes.toString('utf8'));
  }

  /** A lean GET (s3-put-client.ts), as the PUTs: the consumer reads thousands of manifests a second this way. */
  getBytes(key: string): Promise<Buffer | undefined> {
    // No region, no credentials: a settings error that names what to set, as the SDK's own calls give.
    return withS3SetupErrors(this.puts.get(this.bucket, key));
  }

  /** A lean GET with its ETag (s3-put-client.ts `read`), as {@link getBytes}: the tag {@link putJsonIf} is conditioned on. */
  async getTagged(key: string, options?: ReadOptions): Promise<TaggedBytes | undefined> {
    const object = await withS3SetupErrors(this.puts.read(this.bucket, key, options));
    return object === undefined ? undefined : { bytes: object.bytes, tag: object.etag };
  }

  async putJsonIf(key: string, value: unknown, expected: string | undefined, options?: WriteOptions): Promise<boolean> {
    const condition = expected === undefined ? { IfNoneMatch: '*' } : { IfMatch: expected };
    const put = new PutObjectCommand({
      Bucket: this.bucket,
      Key: key,
      Body: Buffer.from(JSON.stringify(value)),
      ContentType: 'application/json',
      ...condition,
    });
    try {
      tellRetries(
        `s3://${this.bucket}/${key}`,
        (await this.client.send(put, sdkSendOptions(options))).$metadata,
        options,
      );
      return true;
    } catch (error) {
      const metadata = (error as { $metadata?: SdkAttempts }).$metadata;
      tellRetries(`s3://${this.bucket}/${key}`, metadata, options);
      // 412: the condition failed; 409 ConditionalRequestConflict: another conditional write of the key was under way.
      if (metadata?.httpStatusCode === 412 || metadata?.httpStatusCode === 409) return false;
      // An S3-compatible server without conditional writes: the unconditional write (read, compare, write) of before.
      if (metadata?.httpStatusCode === 501) {
        await this.putJson(key, value, options);
        return true;
      }
      throw error;
    }
  }

  async deleteKey(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  async *listKeys(prefix: string, startAfter?: string, options?: ReadOptions): AsyncIterable<string> {
    let token: string | undefined;
    let after = startAfter;
    do {
      const page = await this.client
        .send(
          new ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: prefix,
            ...(token ? { ContinuationToken: token } : startAfter ? { StartAfter: startAfter } : {}),
          }),
          sdkSendOptions(options),
        )
        .catch((error: unknown) => {
          // A settings error (no region, no credentials) says what to set; any other names the bucket and prefix.
          throw error instanceof SettingsError ? error : new S3ListError(this.bucket, prefix, after, { cause: error });
        });
      after = page.Contents?.at(-1)?.Key ?? after;
      for (const object of page.Contents ?? []) if (object.Key) yield object.Key;
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }
}

/** What the SDK says of a request's attempts. */
interface SdkAttempts {
  readonly httpStatusCode?: number;
  readonly attempts?: number;
  readonly totalRetryDelay?: number;
}

/** Tells `options.onRetry` of the retries the SDK made (after the fact: the SDK has no hook before each), so the run counts them. */
function tellRetries(url: string, metadata: SdkAttempts | undefined, options: WriteOptions | undefined): void {
  const retries = (metadata?.attempts ?? 1) - 1;
  for (let attempt = 1; attempt <= retries; attempt++) {
    options?.onRetry?.({
      url,
      attempt,
      delayMs: Math.round((metadata?.totalRetryDelay ?? 0) / retries),
      why: 'retried by the AWS SDK',
    });
  }
}
