/**
 * S3's checks of a header-signed request, as the fault front (s3-fault-front.ts) makes them: SigV4 rebuilt on
 * node:crypto from what arrived (an implementation independent of the SDK's signer, itself checked against aws4's
 * vectors in test/fixtures/sigv4/), the request time within S3's allowance, the payload's SHA-256 and CRC32.
 */
import { createHash, createHmac } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { crc32 } from 'node:zlib';

/** A request as the front received it. */
export interface SeenRequest {
  readonly method: string;
  /** The raw path and query, as sent. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** S3's allowance between a request's `x-amz-date` and its own clock. */
export const S3_MAX_SKEW_MS = 15 * 60_000;

/** Why S3 would refuse a request: status, Code, Message and the extra fields of its XML body. */
export interface S3Refusal {
  readonly status: number;
  readonly code: string;
  readonly message: string;
  readonly extra?: Record<string, string>;
}

/**
 * S3's checks of a header-signed request, as the front makes them: the access key known, `x-amz-date` within
 * 15 minutes of `serverNow`, the payload's SHA-256 and CRC32, and the SigV4 signature (rebuilt on node:crypto
 * from what arrived); undefined when it passes, or when the request is not header-signed.
 */
export function checkSignedRequest(
  seen: SeenRequest,
  secrets: Readonly<Record<string, string>>,
  serverNow: number,
): S3Refusal | undefined {
  const authorization = seen.headers.authorization;
  if (typeof authorization !== 'string' || !authorization.startsWith('AWS4-HMAC-SHA256 ')) return undefined;
  const parts = new Map(
    authorization
      .slice('AWS4-HMAC-SHA256 '.length)
      .split(/,\s*/)
      .map((part) => part.split('=', 2) as [string, string]),
  );
  const [accessKeyId, date, region, service] = (parts.get('Credential') ?? '').split('/');
  const secret = secrets[accessKeyId ?? ''];
  if (secret === undefined)
    return { status: 403, code: 'InvalidAccessKeyId', message: `no such access key ${accessKeyId}` };
  const amzDate = String(seen.headers['x-amz-date'] ?? '');
  const signedAt = parseAmzDate(amzDate);
  if (!(Math.abs(serverNow - signedAt) <= S3_MAX_SKEW_MS)) {
    return {
      status: 403,
      code: 'RequestTimeTooSkewed',
      message: 'The difference between the request time and the current time is too large.',
      extra: {
        RequestTime: amzDate,
        ServerTime: new Date(serverNow).toISOString(),
        MaxAllowedSkewMilliseconds: String(S3_MAX_SKEW_MS),
      },
    };
  }
  const payloadHash = String(seen.headers['x-amz-content-sha256'] ?? '');
  if (/^[0-9a-f]{64}$/.test(payloadHash) && payloadHash !== sha256Hex(seen.body)) {
    return {
      status: 400,
      code: 'XAmzContentSHA256Mismatch',
      message: "The provided 'x-amz-content-sha256' header does not match what was computed.",
    };
  }
  const checksum = seen.headers['x-amz-checksum-crc32'];
  if (typeof checksum === 'string' && checksum !== crc32Base64(seen.body)) {
    return {
      status: 400,
      code: 'BadDigest',
      message: 'The CRC32 you specified did not match the calculated checksum.',
    };
  }
  const signedHeaders = parts.get('SignedHeaders') ?? '';
  const [path = '/', query = ''] = seen.url.split('?', 2);
  const canonicalQuery = query
    .split('&')
    .filter((pair) => pair !== '')
    .map(
      (pair) =>
        pair.split('=', 2).map((part) => encodeRfc3986(decodeURIComponent(part.replace(/\+/g, '%20')))) as [
          string,
          string?,
        ],
    )
    .map(([name, value = '']) => `${name}=${value}`)
    .sort()
    .join('&');
  const canonicalHeaders = signedHeaders
    .split(';')
    .map(
      (name) =>
        `${name}:${String(seen.headers[name] ?? '')
          .trim()
          .replace(/\s+/g, ' ')}\n`,
    )
    .join('');
  const canonical = [seen.method, path, canonicalQuery, canonicalHeaders, signedHeaders, payloadHash].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = `AWS4-HMAC-SHA256\n${amzDate}\n${scope}\n${sha256Hex(canonical)}`;
  const key = ['aws4_request', service ?? '', region ?? '', date ?? ''].reduceRight<Buffer | string>(
    (k, part) => hmac(k, part),
    `AWS4${secret}`,
  );
  const expected = createHmac('sha256', key).update(stringToSign).digest('hex');
  if (expected !== parts.get('Signature')) {
    return {
      status: 403,
      code: 'SignatureDoesNotMatch',
      message:
        'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
    };
  }
  return undefined;
}

/** Epoch ms of an `x-amz-date` (`YYYYMMDDTHHMMSSZ`); NaN when it is not one. */
export function parseAmzDate(amzDate: string): number {
  return Date.parse(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
}

const sha256Hex = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string): Buffer => createHmac('sha256', key).update(data).digest();
const encodeRfc3986 = (text: string): string =>
  encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** The CRC32 of `body`, big-endian, base64: `x-amz-checksum-crc32` as S3 computes it. */
function crc32Base64(body: Buffer): string {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(crc32(body) >>> 0);
  return bytes.toString('base64');
}
