/**
 * Where the lean S3 PUT (s3-put-client.ts) sends an object: the URL of `PUT /{bucket}/{key}` for the endpoint the
 * S3 client itself would use. Addressing follows the SDK's rules for plain S3 buckets:
 * - the endpoint is the client's explicit `endpoint`, else the SDK's configured one (`AWS_ENDPOINT_URL_S3`, then
 *   `AWS_ENDPOINT_URL`, as the SDK resolves them), else `https://s3.{region}.amazonaws.com`;
 * - virtual-hosted (`{bucket}.{host}`) unless the client forces path style (`S3_FORCE_PATH_STYLE=true` in
 *   aws-clients.ts), the bucket name is not DNS-compatible, it has dots over https (the certificate would not
 *   match), or a custom endpoint's host is an IP address.
 * FIPS, dual-stack and transfer-acceleration endpoints, S3 Express directory buckets, access-point ARNs and
 * `bucketEndpoint` are not built here: {@link leanPutUnsupported} names them, and those PUTs go to the SDK.
 */

/** A resolved PUT target for one bucket: the origin to connect to, the Host to sign, and the path before the key. */
export interface PutTarget {
  /** `scheme://host[:port]` to connect to. */
  readonly origin: string;
  /** The `host` header as signed (host[:port]). */
  readonly host: string;
  /** Encoded path up to and including the `/` before the key: `/` (virtual-hosted) or `/{base}/{bucket}/`. */
  readonly prefix: string;
}

/** What decides a target: the endpoint (undefined for AWS's own), the region, path style. */
export interface EndpointChoice {
  readonly endpoint: URL | undefined;
  readonly region: string;
  readonly forcePathStyle: boolean;
}

/**
 * S3's URI encoding of a key: each `/`-separated segment percent-encoded as UTF-8 with every character but
 * `A-Za-z0-9-._~` escaped (so spaces are `%20`, `+` is `%2B`, and `!'()*`, which encodeURIComponent leaves,
 * are escaped too), the slashes kept. S3 signs the path encoded once, exactly so.
 */
export function encodeKey(key: string): string {
  return key
    .split('/')
    .map((segment) => encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`))
    .join('/');
}

/** Whether `bucket` may be a DNS label sequence (3–63 of `a-z0-9.-`, starting and ending alphanumeric, no `..`, not an IP). */
export function isDnsCompatibleBucket(bucket: string): boolean {
  return (
    /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket) &&
    !bucket.includes('..') &&
    !bucket.includes('.-') &&
    !bucket.includes('-.') &&
    !/^\d+\.\d+\.\d+\.\d+$/.test(bucket)
  );
}

/** AWS's own S3 endpoint for `region` (`amazonaws.com.cn` in the China regions). */
export function awsS3Endpoint(region: string): URL {
  return new URL(`https://s3.${region}.amazonaws.${region.startsWith('cn-') ? 'com.cn' : 'com'}`);
}

/** The PUT target for `bucket` (see the module's rules). */
export function putTarget(bucket: string, choice: EndpointChoice): PutTarget {
  const endpoint = choice.endpoint ?? awsS3Endpoint(choice.region);
  const https = endpoint.protocol === 'https:';
  const ipHost = /^\d+\.\d+\.\d+\.\d+$/.test(endpoint.hostname) || endpoint.hostname.startsWith('[');
  const base = endpoint.pathname.replace(/\/+$/, '');
  const virtual =
    !choice.forcePathStyle && isDnsCompatibleBucket(bucket) && !(https && bucket.includes('.')) && !(choice.endpoint && ipHost);
  if (virtual) {
    const host = `${bucket}.${endpoint.host}`;
    return { origin: `${endpoint.protocol}//${host}`, host, prefix: `${base}/` };
  }
  return { origin: endpoint.origin, host: endpoint.host, prefix: `${base}/${encodeKey(bucket)}/` };
}

/** The S3 client's settings the lean PUT cannot honour, by name; empty when it can. */
export function leanPutUnsupported(bucket: string, flags: { fips: boolean; dualstack: boolean; accelerate: boolean; bucketEndpoint: boolean }): string[] {
  const reasons: string[] = [];
  if (flags.fips) reasons.push('FIPS endpoint (AWS_USE_FIPS_ENDPOINT)');
  if (flags.dualstack) reasons.push('dual-stack endpoint (AWS_USE_DUALSTACK_ENDPOINT)');
  if (flags.accelerate) reasons.push('transfer acceleration');
  if (flags.bucketEndpoint) reasons.push('bucketEndpoint');
  if (bucket.endsWith('--x-s3')) reasons.push('S3 Express directory bucket');
  if (bucket.startsWith('arn:')) reasons.push('access point ARN');
  return reasons;
}
