/**
 * Where the lean S3 PUT (s3-put-client.ts) sends an object, and how it signs for it: taken from the S3 client's
 * own endpoint resolution for `PutObject` (`getEndpointFromInstructions`, the function the SDK's endpoint
 * middleware calls, with the client's `endpointProvider`, its rule set), once per bucket. So every partition
 * (`aws`, `aws-cn`, `aws-us-gov`, `aws-iso*`, `aws-eusc`, ...), FIPS, dual-stack, transfer acceleration,
 * access-point ARNs, path-style, a client `endpoint`, `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL` and the
 * signing region an ARN or a global endpoint asks for are the SDK's, not rules copied here. What the lean PUT
 * cannot sign (SigV4A for multi-region access points, S3 Express sessions) goes to the SDK's PutObject.
 */
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getEndpointFromInstructions } from '@smithy/core/endpoints';
import type { EndpointV2 } from '@smithy/types';

/** A resolved PUT target for one bucket: where to connect, the Host to sign, the path before the key, the signing scope. */
export interface PutTarget {
  /** `scheme://host[:port]` to connect to. */
  readonly origin: string;
  /** The `host` header as signed (host[:port]). */
  readonly host: string;
  /** Encoded path up to and including the `/` before the key: `/` (virtual-hosted) or `/{base}/{bucket}/`. */
  readonly prefix: string;
  /** The region and service the signature is scoped to (an access point's region, `s3-outposts`, ...). */
  readonly signingRegion: string;
  readonly signingName: string;
  /** Headers the endpoint asks every request to carry (a custom endpoint's). */
  readonly headers: Readonly<Record<string, string>>;
}

/** A bucket the lean PUT leaves to the SDK, and why. */
export interface SdkOnly {
  readonly sdkOnly: string;
}

/**
 * S3's URI encoding of a key: each `/`-separated segment percent-encoded as UTF-8 with every character but
 * `A-Za-z0-9-._~` escaped (so spaces are `%20`, `+` is `%2B`, and `!'()*`, which encodeURIComponent leaves,
 * are escaped too), the slashes kept. S3 signs the path encoded once, exactly so.
 */
export function encodeKey(key: string): string {
  return key
    .split('/')
    .map((segment) =>
      encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`),
    )
    .join('/');
}

/** The endpoint the S3 client would send `PutObject` to for `bucket` (its own resolver; no request is made). */
export async function resolvePutEndpoint(client: S3Client, bucket: string): Promise<EndpointV2> {
  // The key does not enter S3's endpoint rules; PutObject's instructions name it, so one is given.
  return getEndpointFromInstructions({ Bucket: bucket, Key: 'k' }, PutObjectCommand, client.config);
}

/** The PUT target of a resolved endpoint, or why the lean PUT leaves it to the SDK. */
export function putTargetOf(endpoint: EndpointV2, clientRegion: string): PutTarget | SdkOnly {
  const scheme = (
    endpoint.properties?.authSchemes as { name?: string; signingName?: string; signingRegion?: string }[] | undefined
  )?.[0];
  if (scheme !== undefined && scheme.name !== 'sigv4') return { sdkOnly: `auth scheme ${scheme.name ?? '(unnamed)'}` };
  const url = endpoint.url;
  const headers: Record<string, string> = {};
  for (const [name, values] of Object.entries(endpoint.headers ?? {})) headers[name.toLowerCase()] = values.join(',');
  return {
    origin: url.origin,
    host: url.host,
    prefix: url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/`,
    signingRegion: scheme?.signingRegion ?? clientRegion,
    signingName: scheme?.signingName ?? 's3',
    headers,
  };
}
