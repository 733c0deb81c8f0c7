/**
 * A minimal AWS Signature Version 4 signer for S3 PUT, for the bench's "lean PUT" ceiling: what a PUT costs
 * when it is signed like the SDK signs it (payload SHA-256 included) but sent with plain undici, without the
 * SDK's middleware stack. Header-based auth, path-style URL. Not used by the engine.
 */
import { createHash, createHmac } from 'node:crypto';

export interface Credentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

const sha256Hex = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string): Buffer => createHmac('sha256', key).update(data).digest();

/** S3's URI encoding of one path segment: everything but unreserved characters, UTF-8, upper-case hex. */
export function encodeSegment(segment: string): string {
  return encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export class S3Signer {
  private signingKey: { date: string; key: Buffer } | undefined;

  constructor(
    private readonly credentials: Credentials,
    private readonly region: string,
  ) {}

  /**
   * Headers (Authorization included) for `PUT path` with `headers` (lower-case names) and `body`.
   * `path` is already encoded (`/bucket/key`).
   */
  signPut(
    host: string,
    path: string,
    headers: Record<string, string>,
    body: Buffer,
    now = new Date(),
  ): Record<string, string> {
    const amzDate = now
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d{3}/, '');
    const date = amzDate.slice(0, 8);
    const all: Record<string, string> = {
      ...headers,
      host,
      'x-amz-date': amzDate,
      'x-amz-content-sha256': sha256Hex(body),
      ...(this.credentials.sessionToken ? { 'x-amz-security-token': this.credentials.sessionToken } : {}),
    };
    const names = Object.keys(all).sort();
    const canonicalHeaders = names.map((name) => `${name}:${all[name]!.trim().replace(/\s+/g, ' ')}\n`).join('');
    const signedHeaders = names.join(';');
    const canonicalRequest = `PUT\n${path}\n\n${canonicalHeaders}\n${signedHeaders}\n${all['x-amz-content-sha256']}`;
    const scope = `${date}/${this.region}/s3/aws4_request`;
    const stringToSign = `AWS4-HMAC-SHA256\n${amzDate}\n${scope}\n${sha256Hex(canonicalRequest)}`;
    if (this.signingKey?.date !== date) {
      const kDate = hmac(`AWS4${this.credentials.secretAccessKey}`, date);
      this.signingKey = { date, key: hmac(hmac(hmac(kDate, this.region), 's3'), 'aws4_request') };
    }
    const signature = createHmac('sha256', this.signingKey.key).update(stringToSign).digest('hex');
    const { host: _host, ...rest } = all;
    return {
      ...rest,
      authorization: `AWS4-HMAC-SHA256 Credential=${this.credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
    };
  }
}
