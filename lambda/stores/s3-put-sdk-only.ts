/**
 * The lean client's way round for the endpoints it does not sign (multi-region access points, S3 Express, a
 * `bucketEndpoint` client): the SDK's own PutObject and GetObject, which sign and retry themselves. A stop by the
 * caller's signal is named as the lean path names it ({@link S3PutAbortedError}).
 */
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import {
  aborted,
  isConditionRefusal,
  type PutCondition,
  type PutRequest,
  type TaggedObject,
} from './s3-put-attempt.js';

/** The SDK's GetObject: the object's bytes and ETag, or `undefined` for `NoSuchKey`. */
export async function getWithSdk(
  client: S3Client,
  bucket: string,
  key: string,
  signal: AbortSignal | undefined,
): Promise<TaggedObject | undefined> {
  try {
    const response = await client.send(
      new GetObjectCommand({ Bucket: bucket, Key: key }),
      signal ? { abortSignal: signal } : {},
    );
    return { bytes: Buffer.from(await response.Body!.transformToByteArray()), etag: response.ETag ?? '' };
  } catch (error) {
    if ((error as { name?: string }).name === 'NoSuchKey') return undefined;
    if (signal?.aborted) throw aborted({ bucket, key, method: 'GET' }, 'in flight', signal);
    throw error;
  }
}

/**
 * The SDK's PutObject, with the same content type, metadata and condition as the lean PUT sends. False when S3
 * refused the condition (412, or 409 ConditionalRequestConflict), as the lean path answers.
 */
export async function putWithSdk(
  client: S3Client,
  request: PutRequest,
  condition: PutCondition | undefined,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  try {
    await client.send(
      new PutObjectCommand({
        Bucket: request.bucket,
        Key: request.key,
        Body: request.body,
        ContentLength: request.body.length,
        ContentType: request.contentType,
        ...(request.metadata ? { Metadata: { ...request.metadata } } : {}),
        ...(condition === undefined
          ? {}
          : 'ifMatch' in condition
            ? { IfMatch: condition.ifMatch }
            : { IfNoneMatch: condition.ifNoneMatch }),
      }),
      signal ? { abortSignal: signal } : {},
    );
    return true;
  } catch (error) {
    if (signal?.aborted) throw aborted(request, 'in flight', signal);
    const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    if (condition !== undefined && status !== undefined && isConditionRefusal(status)) return false;
    throw error;
  }
}
