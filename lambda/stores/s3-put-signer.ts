import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, ChecksumConstructor, HashConstructor } from '@smithy/types';
import type { PutTarget } from './s3-put-endpoint.js';

/** The S3 client's resolved providers the signer uses (`client.config`'s, so the same chain, cache and refresh). */
export interface SigningProviders {
  /** Asked on every signature: the SDK's provider caches and refreshes expiring credentials itself. */
  readonly credentials: () => Promise<AwsCredentialIdentity>;
  readonly region: () => Promise<string>;
  /** The hash the S3 client signs with. */
  readonly sha256: HashConstructor | ChecksumConstructor;
}

/**
 * SigV4 for the lean PUT with the SDK's own `SignatureV4`, configured as the S3 client configures it for S3:
 * the region and service the endpoint resolution names (`s3` in the client's region for a plain bucket), the path signed as sent (already encoded once by `encodeKey`, as S3 wants, never twice), the
 * payload signed by its real SHA-256 in `x-amz-content-sha256` (computed once by the caller and kept across
 * retries; S3 recomputes it and refuses a body that differs).
 */
export class S3PutSigner {
  private readonly signer: SignatureV4;

  constructor(providers: SigningProviders) {
    this.signer = new SignatureV4({
      credentials: providers.credentials,
      region: providers.region,
      service: 's3',
      sha256: providers.sha256,
      uriEscapePath: false,
      applyChecksum: false,
    });
  }

  /**
   * The headers to send for `PUT path` on `target` (Authorization, `x-amz-date` and, with temporary
   * credentials, `x-amz-security-token` added), signed as of `signingDate`.
   */
  async signPut(
    target: PutTarget,
    path: string,
    headers: Record<string, string>,
    signingDate: Date,
  ): Promise<Record<string, string>> {
    return this.sign('PUT', target, path, headers, signingDate);
  }

  /** As {@link signPut}, for `GET path` (headers carry the empty body's SHA-256). */
  async signGet(
    target: PutTarget,
    path: string,
    headers: Record<string, string>,
    signingDate: Date,
  ): Promise<Record<string, string>> {
    return this.sign('GET', target, path, headers, signingDate);
  }

  private async sign(
    method: 'PUT' | 'GET',
    target: PutTarget,
    path: string,
    headers: Record<string, string>,
    signingDate: Date,
  ): Promise<Record<string, string>> {
    // Only the method, path, query and headers enter the signature; the host is the `host` header.
    const signed = await this.signer.sign(
      {
        method,
        protocol: target.origin.slice(0, target.origin.indexOf('//')),
        hostname: target.host,
        path,
        query: {},
        headers: { ...headers, host: target.host },
      },
      { signingDate, signingRegion: target.signingRegion, signingService: target.signingName },
    );
    return signed.headers;
  }
}
