import { CatalogSyncError, ErrorCode } from '../contract/errors.js';

/**
 * An S3 listing (ListObjectsV2) that failed after the SDK's retries: names the bucket, the prefix and the key it
 * listed after, and what S3 answered (its error code and status, or the transport error); `cause` is the SDK's error.
 */
export class S3ListError extends CatalogSyncError {
  override readonly name = 'S3ListError';
  override get code(): ErrorCode {
    return ErrorCode.s3List;
  }
  constructor(
    readonly bucket: string,
    readonly prefix: string,
    readonly startAfter: string | undefined,
    options: { cause: unknown },
  ) {
    const cause = options.cause as (Error & { $metadata?: { httpStatusCode?: number }; Code?: string }) | undefined;
    const status = cause?.$metadata?.httpStatusCode;
    const what = `${cause?.name ?? 'Error'}${status === undefined ? '' : ` (HTTP ${status})`}: ${cause?.message ?? String(options.cause)}`;
    super(
      `S3 listing of s3://${bucket}/${prefix}${startAfter === undefined ? '' : ` after ${startAfter}`} failed: ${what}`,
      options,
    );
  }
}
