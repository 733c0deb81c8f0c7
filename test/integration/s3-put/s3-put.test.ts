/**
 * The lean S3 PUT (lambda/stores/s3-put-client.ts) against s3rver, behind a front that verifies SigV4 (s3rver
 * does not) and the payload hash and CRC32: the objects it stores equal the SDK's, keys of any characters land
 * where the SDK would put them, a wrong secret is refused and named, credentials are asked per request, a clock
 * off by an hour is corrected, and a store built by awsClients takes this path.
 */
import {
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import type { AwsCredentialIdentity } from '@smithy/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasErrorCode } from '../../../lambda/contract/errors.js';
import { awsClients } from '../../../lambda/stores/aws-clients.js';
import { S3PutClient } from '../../../lambda/stores/s3-put-client.js';
import { encodeKey } from '../../../lambda/stores/s3-put-endpoint.js';
import { S3PutError } from '../../../lambda/stores/s3-put-error.js';
import { S3SnapshotStore } from '../../../lambda/stores/s3-store.js';
import { createBucket } from '../../../testkit/emulators.js';
import { testServices, uniqueName } from '../../../testkit/env.js';
import { FAST_BACKOFF } from '../../../testkit/fast-backoff.js';
import { S3FaultFront } from '../../../testkit/s3-fault-front.js';
import { VERSION } from '../../../lambda/contract/version.js';

const REGION = 'us-east-1';
const GOOD = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

function s3(
  endpoint: string,
  credentials: AwsCredentialIdentity | (() => Promise<AwsCredentialIdentity>) = GOOD,
  extra: object = {},
): S3Client {
  return new S3Client({ endpoint, region: REGION, credentials, forcePathStyle: true, maxAttempts: 5, ...extra });
}

async function objectOf(client: S3Client, bucket: string, key: string) {
  const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
  const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  const body = Buffer.from(await got.Body!.transformToByteArray());
  return {
    body,
    head: { contentType: head.ContentType, contentLength: head.ContentLength, metadata: head.Metadata },
    get: { contentType: got.ContentType, contentLength: got.ContentLength, metadata: got.Metadata },
  };
}

describe('the lean S3 PUT', () => {
  const bucket = uniqueName('lean-put');
  let front: S3FaultFront;
  let client: S3Client;
  const opened: S3PutClient[] = [];
  const lean = (c: S3Client, options: Partial<ConstructorParameters<typeof S3PutClient>[1]> = {}): S3PutClient => {
    const put = new S3PutClient(c, { connections: 4, backoff: FAST_BACKOFF, ...options });
    opened.push(put);
    return put;
  };

  beforeAll(async () => {
    await createBucket(testServices().s3Endpoint, bucket);
    front = await S3FaultFront.start(testServices().s3Endpoint);
    client = s3(front.url);
  });
  afterAll(async () => {
    for (const put of opened) await put.close();
    client.destroy();
    await front.stop();
  });

  it('stores the same object as the SDK: body, content type, length and metadata, on GET and HEAD', async () => {
    const body = Buffer.from('\uFEFF{"@id":"https://example.test/leaf.json","é":"ü"}');
    const metadata = {
      'nuget-id': 'Some.Package',
      'nuget-version': '1.0.0',
      'catalog-type': 'PackageDetails',
      'commit-id': 'abc',
      'commit-timestamp': '2020-01-01T00:00:00.0000000Z',
    };
    await new S3SnapshotStore(bucket, client, lean(client)).putLeaf('same/lean.json', body, metadata);
    await client.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: 'same/sdk.json',
        Body: body,
        ContentLength: body.length,
        ContentType: 'application/json',
        Metadata: metadata,
      }),
    );
    const leanObject = await objectOf(client, bucket, 'same/lean.json');
    const sdkObject = await objectOf(client, bucket, 'same/sdk.json');
    expect(leanObject.body.equals(body)).toBe(true);
    expect(leanObject).toEqual(sdkObject);
    expect(leanObject.head.metadata).toEqual(metadata);
    // The front verified the signature, the payload's SHA-256 and its CRC32: none was refused.
    const sent = front.putsOf(`/${bucket}/same/lean.json`)[0]!;
    expect(sent.headers['x-amz-content-sha256']).toMatch(/^[0-9a-f]{64}$/);
    expect(sent.headers['x-amz-checksum-crc32']).toBeDefined();
    expect(sent.headers['x-amz-sdk-checksum-algorithm']).toBe('CRC32');
    expect(sent.headers['user-agent']).toMatch(new RegExp(`^catalog-sync/${VERSION.replace(/\./g, '\\.')} `));
    expect(front.faults.size).toBe(0);
  });

  it('puts JSON manifests as the SDK store did', async () => {
    const value = { commitId: 'c', leaves: [{ key: 'a b+c' }] };
    await new S3SnapshotStore(bucket, client, lean(client)).putJson('manifests/m.json', value);
    expect(await new S3SnapshotStore(bucket, client).getJson('manifests/m.json')).toEqual(value);
    expect((await objectOf(client, bucket, 'manifests/m.json')).head.contentType).toBe('application/json');
  });

  it("stores keys with unicode, spaces, plus signs and !'()* where the SDK would find them", async () => {
    const keys = [
      'odd/Ünïcødé 包/1.0.0.json',
      'odd/a b+c/x+y z.json',
      "odd/!'()*&$@=;:,?#[]~.json",
      'odd/tab\tpercent%20.json',
    ];
    const put = lean(client);
    for (const [index, key] of keys.entries())
      await put.put({ bucket, key, body: Buffer.from(String(index)), contentType: 'application/json' });
    const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'odd/' }));
    expect((listed.Contents ?? []).map((object) => object.Key).sort()).toEqual([...keys].sort());
    for (const [index, key] of keys.entries())
      expect((await objectOf(client, bucket, key)).body.toString()).toBe(String(index));
    expect(encodeKey("a b+c/!'()*/é")).toBe('a%20b%2Bc/%21%27%28%29%2A/%C3%A9');
  });

  it('reads back by a lean GET, signed (the front verifies it): the exact bytes of any key, undefined for a missing one', async () => {
    const keys = ['get/Ünïcødé 包/1.0.0.json', 'get/a b+c/x+y z.json', "get/!'()*&$@=;:,?#[]~.json"];
    for (const [index, key] of keys.entries())
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: `\uFEFF{"n":${index}}` }));
    const get = lean(client);
    for (const [index, key] of keys.entries())
      expect((await get.get(bucket, key))?.equals(Buffer.from(`\uFEFF{"n":${index}}`))).toBe(true);
    expect(await get.get(bucket, 'get/missing.json')).toBeUndefined();
    expect(front.faults.size).toBe(0);
    const wrong = s3(front.url, { accessKeyId: 'S3RVER', secretAccessKey: 'not-the-secret' });
    const error = await lean(wrong)
      .get(bucket, keys[0]!)
      .catch((e: unknown) => e);
    wrong.destroy();
    expect(error).toMatchObject({ bucket, key: keys[0], status: 403, s3Code: 'SignatureDoesNotMatch', attempts: 1 });
    expect((error as Error).message).toContain(`S3 GET s3://${bucket}/`);
  });

  it('fails a PUT signed with a wrong secret at once, naming SignatureDoesNotMatch, the key and the attempts', async () => {
    const wrong = s3(front.url, { accessKeyId: 'S3RVER', secretAccessKey: 'not-the-secret' });
    const error = await lean(wrong)
      .put({ bucket, key: 'wrong/secret.json', body: Buffer.from('{}'), contentType: 'application/json' })
      .catch((e: unknown) => e);
    wrong.destroy();
    expect(error).toBeInstanceOf(S3PutError);
    expect(hasErrorCode(error, 'CS_ERR_S3_PUT')).toBe(true);
    expect(error).toMatchObject({
      bucket,
      key: 'wrong/secret.json',
      status: 403,
      s3Code: 'SignatureDoesNotMatch',
      attempts: 1,
    });
    expect((error as Error).message).toContain(`s3://${bucket}/wrong/secret.json`);
    expect((error as Error).message).toContain('HTTP 403 SignatureDoesNotMatch');
    expect(front.putsOf(`/${bucket}/wrong/secret.json`)).toHaveLength(1);
  });

  it('asks the S3 client for credentials on every request, so refreshed ones sign the next PUT', async () => {
    let calls = 0;
    // Credentials that expire within the SDK's 5-minute window are fetched again on the next request (the
    // client's cache is the SDK's); the lean PUT must not keep its own copy.
    const rotating = s3(front.url, async () => ({
      ...GOOD,
      sessionToken: `token-${++calls}`,
      expiration: new Date(Date.now() + 60_000),
    }));
    const put = lean(rotating);
    await put.put({ bucket, key: 'rotate/one.json', body: Buffer.from('1'), contentType: 'application/json' });
    await put.put({ bucket, key: 'rotate/two.json', body: Buffer.from('2'), contentType: 'application/json' });
    rotating.destroy();
    const one = front.putsOf(`/${bucket}/rotate/one.json`)[0]!.headers['x-amz-security-token'];
    const two = front.putsOf(`/${bucket}/rotate/two.json`)[0]!.headers['x-amz-security-token'];
    expect(one).toMatch(/^token-\d+$/);
    expect(two).toMatch(/^token-\d+$/);
    expect(two).not.toBe(one);
  });

  it('corrects its clock when S3 answers RequestTimeTooSkewed, and the PUT succeeds', async () => {
    const hourBehind = (): number => Date.now() - 3_600_000;
    // A client of its own: the offset learnt is the client's systemClockOffset, which the SDK's requests use too.
    const skewed = s3(front.url);
    const put = lean(skewed, { now: hourBehind });
    await put.put({ bucket, key: 'skew/late.json', body: Buffer.from('late'), contentType: 'application/json' });
    const attempts = front.putsOf(`/${bucket}/skew/late.json`);
    expect(attempts).toHaveLength(2);
    expect((await objectOf(client, bucket, 'skew/late.json')).body.toString()).toBe('late');
    // About an hour, to the second the server's Date header gives.
    expect(Math.abs(put.clockOffsetMs - 3_600_000)).toBeLessThan(5_000);
    // The next PUT is signed on the corrected clock at once.
    await put.put({ bucket, key: 'skew/next.json', body: Buffer.from('next'), contentType: 'application/json' });
    expect(front.putsOf(`/${bucket}/skew/next.json`)).toHaveLength(1);
    expect(skewed.config.systemClockOffset).toBe(put.clockOffsetMs);
    skewed.destroy();
  });

  it('completes 32 concurrent PUTs signed on a clock 20 minutes fast: a correction made by another PUT still earns a retry', async () => {
    const fast = (): number => Date.now() + 20 * 60_000;
    const skewed = s3(front.url);
    const put = lean(skewed, { now: fast, connections: 32 });
    const keys = Array.from({ length: 32 }, (_, i) => `skew32/${i}.json`);
    // All 32 are in flight before the first refusal reaches the client.
    front.holdUntil(32);
    const results = await Promise.allSettled(
      keys.map((key) => put.put({ bucket, key, body: Buffer.from(key), contentType: 'application/json' })),
    );
    expect(results.filter((result) => result.status === 'rejected')).toEqual([]);
    // Each refused once for time, then signed on the corrected clock.
    for (const key of keys) expect(front.putsOf(`/${bucket}/${key}`)).toHaveLength(2);
    expect(front.seen.filter((seen) => seen.url.includes('/skew32/'))).toHaveLength(64);
    for (const key of keys) expect((await objectOf(client, bucket, key)).body.toString()).toBe(key);
    expect(Math.abs(put.clockOffsetMs + 20 * 60_000)).toBeLessThan(5_000);
    skewed.destroy();
    front.reset();
  });

  it('completes 32 concurrent PUTs against a server whose clock is 20 minutes behind (the CLI by hand is this case)', async () => {
    const behind = await S3FaultFront.start(testServices().s3Endpoint, { clockOffsetMs: -20 * 60_000 });
    const skewed = s3(behind.url);
    const put = lean(skewed, { connections: 32 });
    try {
      const keys = Array.from({ length: 32 }, (_, i) => `server-behind/${i}.json`);
      behind.holdUntil(32);
      const results = await Promise.allSettled(
        keys.map((key) => put.put({ bucket, key, body: Buffer.from(key), contentType: 'application/json' })),
      );
      expect(results.filter((result) => result.status === 'rejected')).toEqual([]);
      for (const key of keys) expect(behind.putsOf(`/${bucket}/${key}`)).toHaveLength(2);
      expect(behind.faults.size).toBe(0);
      expect(Math.abs(put.clockOffsetMs + 20 * 60_000)).toBeLessThan(5_000);
      for (const key of keys) expect((await objectOf(client, bucket, key)).body.toString()).toBe(key);
    } finally {
      skewed.destroy();
      await behind.stop();
    }
  });

  it('is what an S3SnapshotStore on awsClients uses, with the endpoint from AWS_ENDPOINT_URL_S3', async () => {
    const env = {
      AWS_ENDPOINT_URL_S3: front.url,
      S3_FORCE_PATH_STYLE: 'true',
      AWS_REGION: REGION,
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
    };
    const saved = { ...process.env };
    Object.assign(process.env, env);
    try {
      const clients = awsClients(process.env, 4);
      await new S3SnapshotStore(bucket, clients.s3).putLeaf('wired/leaf.json', Buffer.from('{}'), { 'nuget-id': 'X' });
      clients.s3.destroy();
      clients.dynamo.destroy();
    } finally {
      for (const key of Object.keys(env)) if (!(key in saved)) delete process.env[key];
      Object.assign(process.env, saved);
    }
    const [sent] = front.putsOf(`/${bucket}/wired/leaf.json`);
    // The SDK sends its user agent; the lean PUT sends none.
    expect(sent?.headers['x-amz-user-agent']).toBeUndefined();
    expect(sent?.headers['x-amz-meta-nuget-id']).toBe('X');
    expect((await objectOf(client, bucket, 'wired/leaf.json')).head.metadata).toEqual({ 'nuget-id': 'X' });
  });
});
