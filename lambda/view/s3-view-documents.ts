import type { S3Client } from '@aws-sdk/client-s3';
import { withS3SetupErrors } from '../stores/aws-setup-error.js';
import type { S3PutClient } from '../stores/s3-put-client.js';
import { leanPutFor } from '../stores/s3-put-wiring.js';
import type { StoredDocument, ViewDocuments } from './view-documents.js';

/**
 * The view in S3, guarded by S3's conditional writes: a PUT carries `If-Match` with the ETag read (or
 * `If-None-Match: *` for a new index), so a writer whose read is out of date gets 412 (or 409
 * ConditionalRequestConflict) and writes nothing. Through the S3 client's lean client (stores/s3-put-client.ts):
 * the private feed reads and writes three of these documents a package (the view's index, the package state and its
 * conditional PUT), and the SDK's GetObject and PutObject cost the feed's process more CPU than the rest of its work.
 * The lean client signs with the SDK's signer, retries with the SDK's strategy and leaves to the SDK's own commands the
 * endpoints it does not sign; no region or no credentials is the settings error the SDK's calls give.
 */
export class S3ViewDocuments implements ViewDocuments {
  readonly where: string;
  private readonly lean: S3PutClient;

  constructor(
    readonly bucket: string,
    client: S3Client,
  ) {
    this.where = `s3://${bucket}`;
    this.lean = leanPutFor(client);
  }

  async read(key: string): Promise<StoredDocument | undefined> {
    const object = await withS3SetupErrors(this.lean.read(this.bucket, key));
    return object === undefined ? undefined : { bytes: object.bytes, tag: object.etag };
  }

  writeIf(key: string, bytes: Buffer, expected: string | undefined): Promise<boolean> {
    return withS3SetupErrors(
      this.lean.putIf(
        { bucket: this.bucket, key, body: bytes, contentType: 'application/json' },
        expected === undefined ? { ifNoneMatch: '*' } : { ifMatch: expected },
      ),
    );
  }
}
