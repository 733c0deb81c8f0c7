/**
 * Whether an S3-compatible server honours conditional PUTs (`If-None-Match: *`, `If-Match: <etag>`; S3 has since
 * 2024). A compare-and-swap built on them is silently off on a server that ignores the headers and stores the PUT
 * anyway (stock s3rver, some S3-compatible servers): the probe finds that out with writes whose precondition must
 * fail, on a key of the caller's own. It only reports; each caller decides (the latest view refuses such a server).
 */
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';

/** What the server did with the probe's PUTs. */
export type ConditionalPutVerdict =
  | { readonly honoured: true }
  | {
      readonly honoured: false;
      /** The condition the server did not honour, e.g. `If-None-Match: *`. */
      readonly condition: string;
      /** What became of the PUT, e.g. `was stored over the existing object`. */
      readonly answer: string;
    };

/** The probe object's bytes: it says what it is to anyone who finds it. */
const PROBE_BODY = Buffer.from(
  'catalog-sync writes here to check that this server refuses a PUT whose If-None-Match or If-Match fails (docs/contract.md).\n',
);

/** An ETag no object has: `If-Match` with it must fail. */
const NO_SUCH_ETAG = '"catalog-sync-no-such-etag"';

/** The status of a conditional PUT: 200 stored, or 412/409 (refused), 404 (If-Match on no object), 501 (not implemented). */
async function conditionalPut(
  client: S3Client,
  bucket: string,
  key: string,
  condition: { readonly IfNoneMatch: string } | { readonly IfMatch: string },
): Promise<number> {
  try {
    await client.send(
      new PutObjectCommand({ Bucket: bucket, Key: key, Body: PROBE_BODY, ContentType: 'text/plain', ...condition }),
    );
    return 200;
  } catch (error) {
    const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    if (status === 412 || status === 409 || status === 404 || status === 501) return status;
    throw error;
  }
}

/**
 * Three PUTs of `key` in `bucket`: `If-None-Match: *` (it may create the key, or find it there), the same again (must
 * be refused: the key exists now) and `If-Match` with an ETag no object has (must be refused). 412, or 409
 * `ConditionalRequestConflict`, counts as refused; a 2xx, or 501 `NotImplemented`, as not honoured. Other failures
 * (network, credentials) are thrown as the SDK gives them: the server's support is then unknown.
 */
export async function probeConditionalPut(
  client: S3Client,
  bucket: string,
  key: string,
): Promise<ConditionalPutVerdict> {
  const notImplemented = (condition: string): ConditionalPutVerdict => ({
    honoured: false,
    condition,
    answer: 'was answered 501 NotImplemented',
  });
  if ((await conditionalPut(client, bucket, key, { IfNoneMatch: '*' })) === 501)
    return notImplemented('If-None-Match: *');
  const again = await conditionalPut(client, bucket, key, { IfNoneMatch: '*' });
  if (again === 501) return notImplemented('If-None-Match: *');
  if (again === 200)
    return { honoured: false, condition: 'If-None-Match: *', answer: 'was stored over the existing object' };
  const other = await conditionalPut(client, bucket, key, { IfMatch: NO_SUCH_ETAG });
  if (other === 501) return notImplemented(`If-Match: ${NO_SUCH_ETAG}`);
  if (other === 200)
    return {
      honoured: false,
      condition: `If-Match: ${NO_SUCH_ETAG}`,
      answer: "was stored although the object's ETag is another",
    };
  return { honoured: true };
}
