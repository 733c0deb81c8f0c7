/**
 * Where the lean S3 PUT sends an object (lambda/stores/s3-put-endpoint.ts): virtual-hosted or path-style as the
 * SDK would address a plain bucket, and the settings it leaves to the SDK's PutObject (FIPS, dual-stack,
 * accelerate), shown by the SDK's own refusal of them with a custom endpoint (no request leaves the machine).
 */
import { S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { S3PutClient } from '../../lambda/stores/s3-put-client.js';
import { encodeKey, isDnsCompatibleBucket, leanPutUnsupported, putTarget } from '../../lambda/stores/s3-put-endpoint.js';
import { S3PutError } from '../../lambda/stores/s3-put-error.js';

const NO_FLAGS = { fips: false, dualstack: false, accelerate: false, bucketEndpoint: false };

describe('the lean PUT\'s target', () => {
  it('is virtual-hosted on AWS by default', () => {
    expect(putTarget('my-bucket', { endpoint: undefined, region: 'eu-west-1', forcePathStyle: false })).toEqual({
      origin: 'https://my-bucket.s3.eu-west-1.amazonaws.com',
      host: 'my-bucket.s3.eu-west-1.amazonaws.com',
      prefix: '/',
    });
    expect(putTarget('b-1', { endpoint: undefined, region: 'cn-north-1', forcePathStyle: false }).origin).toBe('https://b-1.s3.cn-north-1.amazonaws.com.cn');
  });

  it('is path-style when forced, for a bucket with dots over https, and for a name that is not DNS-compatible', () => {
    const path = { origin: 'https://s3.us-east-1.amazonaws.com', host: 's3.us-east-1.amazonaws.com' };
    expect(putTarget('my-bucket', { endpoint: undefined, region: 'us-east-1', forcePathStyle: true })).toEqual({ ...path, prefix: '/my-bucket/' });
    expect(putTarget('my.dotted.bucket', { endpoint: undefined, region: 'us-east-1', forcePathStyle: false })).toEqual({ ...path, prefix: '/my.dotted.bucket/' });
    expect(putTarget('My_Bucket', { endpoint: undefined, region: 'us-east-1', forcePathStyle: false })).toEqual({ ...path, prefix: '/My_Bucket/' });
  });

  it('follows a custom endpoint: its port and base path, virtual-hosted on a name, path-style on an IP', () => {
    const endpoint = new URL('http://minio.local:9000/base/');
    expect(putTarget('bkt', { endpoint, region: 'us-east-1', forcePathStyle: false })).toEqual({
      origin: 'http://bkt.minio.local:9000',
      host: 'bkt.minio.local:9000',
      prefix: '/base/',
    });
    expect(putTarget('bkt', { endpoint, region: 'us-east-1', forcePathStyle: true })).toEqual({ origin: 'http://minio.local:9000', host: 'minio.local:9000', prefix: '/base/bkt/' });
    // Dots are fine over plain http (no certificate to match).
    expect(putTarget('a.b', { endpoint, region: 'us-east-1', forcePathStyle: false }).host).toBe('a.b.minio.local:9000');
    expect(putTarget('bkt', { endpoint: new URL('http://127.0.0.1:4569'), region: 'us-east-1', forcePathStyle: false })).toEqual({
      origin: 'http://127.0.0.1:4569',
      host: '127.0.0.1:4569',
      prefix: '/bkt/',
    });
  });

  it('knows DNS-compatible bucket names', () => {
    for (const name of ['abc', 'my-bucket', 'a.b.c', '0bucket']) expect(isDnsCompatibleBucket(name)).toBe(true);
    for (const name of ['ab', 'Upper', 'under_score', '-lead', 'trail-', 'a..b', 'a.-b', '192.168.1.1', 'x'.repeat(64)]) expect(isDnsCompatibleBucket(name)).toBe(false);
  });

  it('encodes keys once, as S3 signs them', () => {
    expect(encodeKey('leaves/2020/Ünï 包+1/(a)!*\'.json')).toBe("leaves/2020/%C3%9Cn%C3%AF%20%E5%8C%85%2B1/%28a%29%21%2A%27.json");
    expect(encodeKey('a~b-c_d.e')).toBe('a~b-c_d.e');
  });

  it('names what it leaves to the SDK', () => {
    expect(leanPutUnsupported('b', NO_FLAGS)).toEqual([]);
    expect(leanPutUnsupported('b', { ...NO_FLAGS, fips: true })).toEqual(['FIPS endpoint (AWS_USE_FIPS_ENDPOINT)']);
    expect(leanPutUnsupported('b', { ...NO_FLAGS, dualstack: true })).toEqual(['dual-stack endpoint (AWS_USE_DUALSTACK_ENDPOINT)']);
    expect(leanPutUnsupported('b--use1-az4--x-s3', NO_FLAGS)).toEqual(['S3 Express directory bucket']);
    expect(leanPutUnsupported('arn:aws:s3:us-east-1:1:accesspoint/x', NO_FLAGS)).toEqual(['access point ARN']);
  });

  it.each([
    [{ useFipsEndpoint: true }, /FIPS/],
    [{ useDualstackEndpoint: true }, /dual-stack/],
    [{ useAccelerateEndpoint: true }, /Accelerate/],
  ])('sends a PUT through the SDK when the client has %o (the SDK then applies its own rules)', async (extra, refusal) => {
    // A custom endpoint with these is a configuration the SDK itself refuses before any request: its error,
    // not an S3PutError, shows the PUT went to the SDK.
    const client = new S3Client({ endpoint: 'http://127.0.0.1:9', region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' }, maxAttempts: 1, ...extra });
    const put = new S3PutClient(client, { connections: 1 });
    const error = await put.put({ bucket: 'bkt', key: 'k.json', body: Buffer.from('{}'), contentType: 'application/json' }).catch((e: unknown) => e);
    await put.close();
    client.destroy();
    expect(error).not.toBeInstanceOf(S3PutError);
    expect((error as Error).message).toMatch(refusal);
  });
});
