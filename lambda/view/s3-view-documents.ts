import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { StoredDocument, ViewDocuments } from './view-documents.js';

/**
 * The view in S3, guarded by S3's conditional writes: a PUT carries `If-Match` with the ETag read (or
 * `If-None-Match: *` for a new index), so a writer whose read is out of date gets 412 and writes nothing. Few
 * objects (one per package touched by a commit), so the SDK's own GetObject and PutObject, not the lean client.
 */
export class S3ViewDocuments implements ViewDocuments {
  readonly where: string;
  constructor(
    readonly bucket: string,
    private readonly client: S3Client,
  ) {
    this.where = `s3://${bucket}`;
  }

  async read(key: string): Promise<StoredDocument | undefined> {
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      const bytes = Buffer.from(await object.Body!.transformToByteArray());
      return { bytes, tag: object.ETag ?? '' };
    } catch (error) {
      if ((error as { name?: string }).name === 'NoSuchKey') return undefined;
      throw error;
    }
  }

  async writeIf(key: string, bytes: Buffer, expected: string | undefined): Promise<boolean> {
    const condition = expected === undefined ? { IfNoneMatch: '*' } : { IfMatch: expected };
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: bytes,
          ContentType: 'application/json',
          ...condition,
        }),
      );
      return true;
    } catch (error) {
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      // 412: the condition failed; 409 ConditionalRequestConflict: another conditional write of the key was under way.
      if (status === 412 || status === 409) return false;
      throw error;
    }
  }
}
