import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, NoSuchKey, S3Client } from '@aws-sdk/client-s3';
import type { S3PutClient } from './s3-put-client.js';
import { leanPutFor } from './s3-put-wiring.js';
import type { SnapshotStore } from './types.js';

/**
 * Snapshots in an S3 bucket. Every write is a whole-object PUT of a buffer already in memory, so a
 * retried or repeated write gives the same object, and a reader never sees half a leaf.
 *
 * Leaves and manifests are PUT by the lean client of `client` (s3-put-client.ts: SigV4 with the client's own
 * credentials and region, retries as the SDK's, undici); reads, deletes and listings go through the SDK.
 * A failed PUT throws `S3PutError` (`CS_ERR_S3_PUT`), naming the bucket, key, status, S3's code and the attempts.
 */
export class S3SnapshotStore implements SnapshotStore {
  constructor(
    readonly bucket: string,
    private readonly client: S3Client = new S3Client({}),
    private readonly puts: S3PutClient = leanPutFor(client),
  ) {}

  async putLeaf(key: string, body: Buffer, metadata: Readonly<Record<string, string>>): Promise<void> {
    await this.puts.put({ bucket: this.bucket, key, body, contentType: 'application/json', metadata });
  }

  async putJson(key: string, value: unknown): Promise<void> {
    await this.puts.put({ bucket: this.bucket, key, body: Buffer.from(JSON.stringify(value)), contentType: 'application/json' });
  }

  async getJson(key: string): Promise<unknown> {
    try {
      const response = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return JSON.parse(await response.Body!.transformToString('utf8'));
    } catch (error) {
      if (error instanceof NoSuchKey || (error as { name?: string }).name === 'NoSuchKey') return undefined;
      throw error;
    }
  }

  async getBytes(key: string): Promise<Buffer | undefined> {
    try {
      const response = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return Buffer.from(await response.Body!.transformToByteArray());
    } catch (error) {
      if (error instanceof NoSuchKey || (error as { name?: string }).name === 'NoSuchKey') return undefined;
      throw error;
    }
  }

  async deleteKey(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  async *listKeys(prefix: string, startAfter?: string): AsyncIterable<string> {
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: prefix,
          ...(token ? { ContinuationToken: token } : startAfter ? { StartAfter: startAfter } : {}),
        }),
      );
      for (const object of page.Contents ?? []) if (object.Key) yield object.Key;
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }
}
