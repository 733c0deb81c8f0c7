/**
 * Reading one stored object back and saying what is wrong with it, if anything: missing, an error, short,
 * or different bytes. Shared by the invariant checker's samples and chaos/repro-stock-s3rver.ts.
 */
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';

/** What a read found: undefined when the object is whole and exact. */
export type ReadFault = string | undefined;

/** Compares what was read with what was expected. */
export function describeMismatch(got: Buffer, expected: Buffer): ReadFault {
  if (got.equals(expected)) return undefined;
  if (got.length < expected.length) return `short: ${got.length} of ${expected.length} bytes`;
  if (got.length > expected.length) return `long: ${got.length} bytes, ${expected.length} expected`;
  return `different bytes (${got.length} bytes, the expected length)`;
}

/** Reads `key` from `bucket`; `expected` undefined only checks that it can be read whole (its Content-Length). */
export async function readS3Object(s3: S3Client, bucket: string, key: string, expected?: Buffer): Promise<ReadFault> {
  let body: Buffer;
  let declared: number | undefined;
  try {
    const response = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    declared = response.ContentLength;
    body = Buffer.from(await response.Body!.transformToByteArray());
  } catch (error) {
    const e = error as { name?: string; $metadata?: { httpStatusCode?: number }; message?: string };
    if (e.name === 'NoSuchKey') return 'missing (NoSuchKey)';
    return `unreadable: ${e.name ?? 'Error'} ${e.$metadata?.httpStatusCode ?? ''} ${e.message ?? ''}`.trim();
  }
  if (expected) return describeMismatch(body, expected);
  if (declared !== undefined && declared !== body.length)
    return `short: ${body.length} of a Content-Length of ${declared}`;
  return undefined;
}
