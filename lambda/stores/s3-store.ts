import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, NoSuchKey, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { SnapshotStore } from './types.js';

/**
 * Snapshots in an S3 bucket. Every write is a whole-object PUT of a buffer already in memory, so a
 * retried or repeated write gives the same object, and a reader never sees half a leaf.
 */
export class S3SnapshotStore implements SnapshotStore {
  constructor(
    readonly bucket: string,
    private readonly client: S3Client = new S3Client({}),
  ) {}

  async putLeaf(key: string, body: Buffer, metadata: Readonly<Record<string, string>>): Promise<void> {
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: body,
        ContentLength: body.length,
        ContentType: 'application/json',
        Metadata: { ...metadata },
      }),
    );
  }

  async putJson(key: string, value: unknown): Promise<void> {
    const body = Buffer.from(JSON.stringify(value));
    await this.client.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentLength: body.length, ContentType: 'application/json' }),
    );
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
