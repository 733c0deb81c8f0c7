/**
 * Where the lean S3 PUT sends an object (lambda/stores/s3-put-endpoint.ts): for every partition, FIPS,
 * dual-stack, accelerate, access points, dotted buckets, path style, a client endpoint and AWS_ENDPOINT_URL_S3,
 * the host, path and signing scope are those of the SDK's own PutObject (captured from the request the SDK
 * would send, no request leaves the machine) and, for the partitions, the hosts AWS documents, written here by
 * hand. What the lean PUT cannot sign (SigV4A, S3 Express) is left to the SDK.
 */
import { PutObjectCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import type { HttpRequest } from '@smithy/types';
import { describe, expect, it } from 'vitest';
import { S3PutClient } from '../../../lambda/stores/s3-put-client.js';
import { encodeKey, putTargetOf, resolvePutEndpoint, type PutTarget } from '../../../lambda/stores/s3-put-endpoint.js';
import { S3PutError } from '../../../lambda/stores/s3-put-error.js';

const CREDENTIALS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' };

/** What the SDK's PutObject would send for `bucket`: its URL and its Authorization's credential scope. */
async function sdkPut(config: S3ClientConfig, bucket: string, key: string): Promise<{ url: string; scope: string }> {
  let sent: HttpRequest | undefined;
  const client = new S3Client({
    credentials: CREDENTIALS,
    maxAttempts: 1,
    requestHandler: {
      handle: async (request: HttpRequest) => {
        sent = request;
        throw new Error('captured');
      },
    },
    ...config,
  });
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: '{}' })).catch(() => undefined);
  client.destroy();
  if (!sent) throw new Error('the SDK sent nothing');
  const port = sent.port ? `:${sent.port}` : '';
  const scope = /Credential=[^/]+\/\d{8}\/([^/]+\/[^/]+)\//.exec(String(sent.headers.authorization))![1]!;
  return { url: `${sent.protocol}//${sent.hostname}${port}${sent.path}`, scope };
}

async function leanTarget(config: S3ClientConfig, bucket: string): Promise<PutTarget> {
  const client = new S3Client({ credentials: CREDENTIALS, ...config });
  const target = putTargetOf(await resolvePutEndpoint(client, bucket), await client.config.region());
  client.destroy();
  if ('sdkOnly' in target) throw new Error(`left to the SDK: ${target.sdkOnly}`);
  return target;
}

const KEY = 'leaves/2020/Ünï 包+1/(a).json';

/** A region of every partition and the S3 host AWS gives it (virtual-hosted bucket `b-1`). */
const PARTITIONS: [partition: string, region: string, host: string][] = [
  ['aws', 'us-east-1', 'b-1.s3.us-east-1.amazonaws.com'],
  ['aws', 'eu-west-1', 'b-1.s3.eu-west-1.amazonaws.com'],
  ['aws-cn', 'cn-north-1', 'b-1.s3.cn-north-1.amazonaws.com.cn'],
  ['aws-us-gov', 'us-gov-west-1', 'b-1.s3.us-gov-west-1.amazonaws.com'],
  ['aws-iso', 'us-iso-east-1', 'b-1.s3.us-iso-east-1.c2s.ic.gov'],
  ['aws-iso-b', 'us-isob-east-1', 'b-1.s3.us-isob-east-1.sc2s.sgov.gov'],
  ['aws-iso-e', 'eu-isoe-west-1', 'b-1.s3.eu-isoe-west-1.cloud.adc-e.uk'],
  ['aws-iso-f', 'us-isof-south-1', 'b-1.s3.us-isof-south-1.csp.hci.ic.gov'],
  ['aws-eusc', 'eusc-de-east-1', 'b-1.s3.eusc-de-east-1.amazonaws.eu'],
];

describe("the lean PUT's target", () => {
  it.each(PARTITIONS)("in partition %s (%s) is %s, as the SDK's PutObject", async (_, region, host) => {
    const lean = await leanTarget({ region }, 'b-1');
    expect(lean.host).toBe(host);
    const sdk = await sdkPut({ region }, 'b-1', KEY);
    expect(`${lean.origin}${lean.prefix}${encodeKey(KEY)}`).toBe(sdk.url);
    expect(`${lean.signingRegion}/${lean.signingName}`).toBe(sdk.scope);
  });

  it.each([
    ['FIPS', { region: 'us-east-1', useFipsEndpoint: true }, 'b-1', 'https://b-1.s3-fips.us-east-1.amazonaws.com/'],
    [
      'FIPS in GovCloud',
      { region: 'us-gov-west-1', useFipsEndpoint: true },
      'b-1',
      'https://b-1.s3-fips.us-gov-west-1.amazonaws.com/',
    ],
    [
      'dual-stack',
      { region: 'eu-west-1', useDualstackEndpoint: true },
      'b-1',
      'https://b-1.s3.dualstack.eu-west-1.amazonaws.com/',
    ],
    [
      'FIPS and dual-stack',
      { region: 'us-east-1', useFipsEndpoint: true, useDualstackEndpoint: true },
      'b-1',
      'https://b-1.s3-fips.dualstack.us-east-1.amazonaws.com/',
    ],
    [
      'accelerate',
      { region: 'us-east-1', useAccelerateEndpoint: true },
      'b-1',
      'https://b-1.s3-accelerate.amazonaws.com/',
    ],
    [
      'an access point ARN',
      { region: 'us-west-2' },
      'arn:aws:s3:us-west-2:123456789012:accesspoint/my-ap',
      'https://my-ap-123456789012.s3-accesspoint.us-west-2.amazonaws.com/',
    ],
    [
      'a dotted bucket over https (path style)',
      { region: 'us-east-1' },
      'my.dotted.bucket',
      'https://s3.us-east-1.amazonaws.com/my.dotted.bucket/',
    ],
    [
      'forced path style',
      { region: 'eu-west-1', forcePathStyle: true },
      'b-1',
      'https://s3.eu-west-1.amazonaws.com/b-1/',
    ],
    [
      'a client endpoint, path style',
      { region: 'us-east-1', endpoint: 'http://127.0.0.1:4569', forcePathStyle: true },
      'b-1',
      'http://127.0.0.1:4569/b-1/',
    ],
    [
      'a client endpoint with a base path, virtual-hosted',
      { region: 'us-east-1', endpoint: 'http://minio.local:9000/base' },
      'bkt',
      'http://bkt.minio.local:9000/base/',
    ],
  ] as const)("for %s is the SDK's", async (_, config, bucket, prefix) => {
    const lean = await leanTarget(config, bucket);
    expect(`${lean.origin}${lean.prefix}`).toBe(prefix);
    const sdk = await sdkPut(config, bucket, KEY);
    expect(`${lean.origin}${lean.prefix}${encodeKey(KEY)}`).toBe(sdk.url);
    expect(`${lean.signingRegion}/${lean.signingName}`).toBe(sdk.scope);
  });

  it('follows AWS_ENDPOINT_URL_S3 as the SDK does', async () => {
    const saved = process.env.AWS_ENDPOINT_URL_S3;
    process.env.AWS_ENDPOINT_URL_S3 = 'http://127.0.0.1:4570';
    try {
      const lean = await leanTarget({ region: 'us-east-1', forcePathStyle: true }, 'b-1');
      expect(`${lean.origin}${lean.prefix}`).toBe('http://127.0.0.1:4570/b-1/');
      expect(`${lean.origin}${lean.prefix}${encodeKey(KEY)}`).toBe(
        (await sdkPut({ region: 'us-east-1', forcePathStyle: true }, 'b-1', KEY)).url,
      );
    } finally {
      if (saved === undefined) delete process.env.AWS_ENDPOINT_URL_S3;
      else process.env.AWS_ENDPOINT_URL_S3 = saved;
    }
  });

  it('leaves what it cannot sign to the SDK: SigV4A (multi-region access points) and S3 Express', async () => {
    const client = new S3Client({ region: 'us-east-1', credentials: CREDENTIALS });
    expect(
      putTargetOf(
        await resolvePutEndpoint(client, 'arn:aws:s3::123456789012:accesspoint/mfzwi23gnjvgw.mrap'),
        'us-east-1',
      ),
    ).toEqual({ sdkOnly: 'auth scheme sigv4a' });
    expect(putTargetOf(await resolvePutEndpoint(client, 'b--use1-az4--x-s3'), 'us-east-1')).toEqual({
      sdkOnly: 'auth scheme sigv4-s3express',
    });
    client.destroy();
  });

  it('encodes keys once, as S3 signs them', () => {
    expect(encodeKey("leaves/2020/Ünï 包+1/(a)!*'.json")).toBe(
      'leaves/2020/%C3%9Cn%C3%AF%20%E5%8C%85%2B1/%28a%29%21%2A%27.json',
    );
    expect(encodeKey('a~b-c_d.e')).toBe('a~b-c_d.e');
  });

  it("sends a PUT through the SDK when the endpoint needs what it cannot sign (the SDK's own error shows it went there)", async () => {
    // A multi-region access point with a custom endpoint is a configuration the SDK itself refuses before any
    // request: its error, not an S3PutError, shows the PUT went to the SDK.
    const client = new S3Client({
      region: 'us-east-1',
      credentials: CREDENTIALS,
      maxAttempts: 1,
      disableMultiregionAccessPoints: true,
    });
    const put = new S3PutClient(client, { connections: 1 });
    const error = await put
      .put({
        bucket: 'arn:aws:s3::123456789012:accesspoint/mfzwi23gnjvgw.mrap',
        key: 'k.json',
        body: Buffer.from('{}'),
        contentType: 'application/json',
      })
      .catch((e: unknown) => e);
    await put.close();
    client.destroy();
    expect(error).not.toBeInstanceOf(S3PutError);
    expect((error as Error).message).toMatch(/Multi-Region Access Point|MRAP|disabled/i);
  });
});
