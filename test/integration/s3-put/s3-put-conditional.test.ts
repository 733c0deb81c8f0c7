/**
 * The lean client's compare-and-swap (issue 33: the private feed's and the latest view's documents): `read` gives
 * the ETag the SDK's GetObject gives, `putIf` sends `If-Match` / `If-None-Match: *` signed as the SDK's PutObject
 * signs them (checked by the fault front's own SigV4, which shares no code with ours, and against the headers the
 * SDK sends for the same PutObject), answers false on 412 and on 409 ConditionalRequestConflict, and a conditional
 * write whose answer was lost after it was stored is retried, refused by its own write, and then found written by the
 * view's guarded write, as with the SDK. The view's and the feed's documents take this path; a bucket the lean client
 * does not sign goes through the SDK's commands with the same answers.
 */
import { GetObjectCommand, PutObjectCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SettingsError } from '../../../lambda/contract/settings.js';
import { S3FeedStorage } from '../../../lambda/feed/s3-feed-storage.js';
import { AWS_SERVICE, withSetupErrors } from '../../../lambda/stores/aws-setup-error.js';
import { S3PutClient } from '../../../lambda/stores/s3-put-client.js';
import { PUT_USER_AGENT } from '../../../lambda/stores/s3-put-attempt.js';
import { leanPutFor } from '../../../lambda/stores/s3-put-wiring.js';
import { writeGuarded } from '../../../lambda/view/guarded-write.js';
import { S3ViewDocuments } from '../../../lambda/view/s3-view-documents.js';
import { createBucket } from '../../../testkit/emulators.js';
import { testServices, uniqueName } from '../../../testkit/env.js';
import { FAST_BACKOFF } from '../../../testkit/fast-backoff.js';
import { S3FaultFront, type SeenRequest } from '../../../testkit/s3-fault-front.js';

const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
/** An S3 client of the front (path-style, s3rver's credentials), with `config` over those. */
const frontClient = (config: S3ClientConfig = {}): S3Client =>
  new S3Client({ endpoint: front.url, region: 'us-east-1', credentials: CREDENTIALS, forcePathStyle: true, ...config });
const bucket = uniqueName('lean-cas');
let front: S3FaultFront;
let client: S3Client;
let lean: S3PutClient;

const json = (text: string) => ({ bucket, key: '', body: Buffer.from(text), contentType: 'application/json' });
const at = (key: string, text: string) => ({ ...json(text), key });
const putsOf = (key: string): SeenRequest[] => front.putsOf(`/${bucket}/${key}`);
const matching = (key: string) => (seen: SeenRequest) =>
  seen.method === 'PUT' && seen.url.split('?')[0] === `/${bucket}/${key}`;

async function sdkGet(key: string): Promise<{ text: string; etag: string | undefined }> {
  const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return { text: await object.Body!.transformToString(), etag: object.ETag };
}

beforeAll(async () => {
  await createBucket(testServices().s3Endpoint, bucket);
  front = await S3FaultFront.start(testServices().s3Endpoint);
  client = frontClient({ maxAttempts: 3 });
  lean = new S3PutClient(client, { connections: 4, backoff: FAST_BACKOFF });
});
afterAll(async () => {
  await lean.close();
  await leanPutFor(client).close();
  client.destroy();
  await front.stop();
});

describe("the lean client's conditional PUT", () => {
  it('If-None-Match: * stores a new key once; If-Match stores over the ETag read, and only over it', async () => {
    expect(await lean.putIf(at('cas/a.json', '{"n":1}'), { ifNoneMatch: '*' })).toBe(true);
    expect(await lean.putIf(at('cas/a.json', '{"n":2}'), { ifNoneMatch: '*' })).toBe(false);
    const first = await lean.read(bucket, 'cas/a.json');
    expect(first?.bytes.toString()).toBe('{"n":1}');
    expect(await lean.putIf(at('cas/a.json', '{"n":3}'), { ifMatch: first!.etag })).toBe(true);
    // The ETag read first is out of date now: refused, nothing written.
    expect(await lean.putIf(at('cas/a.json', '{"n":4}'), { ifMatch: first!.etag })).toBe(false);
    expect((await sdkGet('cas/a.json')).text).toBe('{"n":3}');
    // 412 is the answer, not a failure: one attempt each.
    expect(putsOf('cas/a.json')).toHaveLength(4);
  });

  it("409 ConditionalRequestConflict answers false, not retried, as the SDK's PutObject is not", async () => {
    const conflict = {
      kind: 'answer',
      status: 409,
      code: 'ConditionalRequestConflict',
      message: 'A conflicting conditional operation is currently in progress against this resource.',
    } as const;
    front.fault({ match: matching('cas/conflict.json'), fault: conflict });
    front.fault({ match: matching('cas/conflict-sdk.json'), fault: conflict });
    try {
      expect(await lean.putIf(at('cas/conflict.json', '{}'), { ifNoneMatch: '*' })).toBe(false);
      const sdk = await client
        .send(new PutObjectCommand({ Bucket: bucket, Key: 'cas/conflict-sdk.json', Body: '{}', IfNoneMatch: '*' }))
        .catch((error: { $metadata: { httpStatusCode: number; attempts: number } }) => error.$metadata);
      expect(sdk).toMatchObject({ httpStatusCode: 409, attempts: 1 });
      expect(putsOf('cas/conflict.json')).toHaveLength(1);
    } finally {
      front.reset();
    }
  });

  it.each([
    { name: 'If-None-Match: *', ifMatch: false },
    { name: 'If-Match', ifMatch: true },
  ])(
    '$name, stored but its answer lost: the retry is refused by its own write (false), the object is ours',
    async ({ name, ifMatch }) => {
      const key = `cas/lost-${ifMatch ? 'match' : 'none'}.json`;
      let condition: { ifMatch: string } | { ifNoneMatch: '*' } = { ifNoneMatch: '*' };
      if (ifMatch) {
        await lean.put(at(key, '{"before":true}'));
        condition = { ifMatch: (await lean.read(bucket, key))!.etag };
      }
      front.fault({ match: matching(key), fault: { kind: 'lost' }, times: 1 });
      try {
        expect({ name, stored: await lean.putIf(at(key, '{"ours":true}'), condition) }).toEqual({
          name,
          stored: false,
        });
        expect(front.faults.get('lost')).toBe(1);
        expect(putsOf(key)).toHaveLength(ifMatch ? 3 : 2);
        expect((await sdkGet(key)).text).toBe('{"ours":true}');
      } finally {
        front.reset();
      }
    },
  );

  it("the view's guarded write whose answer was lost finds its own bytes: written, not lost to another writer", async () => {
    const documents = new S3ViewDocuments(bucket, client);
    const key = 'cas/view/some.package.json';
    const index = { id: 'Some.Package', commitKey: 'k1', commitTimeStamp: '2020-01-01T00:00:00Z', versions: [] };
    front.fault({ match: matching(key), fault: { kind: 'lost' }, times: 1 });
    try {
      expect(await writeGuarded(documents, key, 'k1', () => index)).toBe('written');
      expect(front.faults.get('lost')).toBe(1);
      expect(JSON.parse((await sdkGet(key)).text)).toMatchObject({ id: 'Some.Package', commitKey: 'k1' });
    } finally {
      front.reset();
    }
  });
});

describe("the lean read's ETag, and the lean request against the SDK's", () => {
  it("the ETag is the SDK's: of its PutObject and of its GetObject, quotes included; a missing key is undefined", async () => {
    const put = await client.send(
      new PutObjectCommand({ Bucket: bucket, Key: 'tag/x.json', Body: '{"x":1}', ContentType: 'application/json' }),
    );
    const read = await lean.read(bucket, 'tag/x.json');
    expect(read?.etag).toMatch(/^".+"$/);
    expect(read?.etag).toBe(put.ETag);
    expect(read?.etag).toBe((await sdkGet('tag/x.json')).etag);
    expect(await lean.read(bucket, 'tag/missing.json')).toBeUndefined();
  });

  it('signs If-Match and sends the headers the SDK sends for the same PutObject with IfMatch (checked by the front)', async () => {
    await lean.put(at('sig/sdk.json', '{"v":0}'));
    await lean.put(at('sig/lean.json', '{"v":0}'));
    const sdkTag = (await lean.read(bucket, 'sig/sdk.json'))!.etag;
    const leanTag = (await lean.read(bucket, 'sig/lean.json'))!.etag;
    expect(leanTag).toBe(sdkTag);
    await client.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: 'sig/sdk.json',
        Body: Buffer.from('{"v":1}'),
        ContentType: 'application/json',
        IfMatch: sdkTag,
      }),
    );
    expect(await lean.putIf(at('sig/lean.json', '{"v":1}'), { ifMatch: leanTag })).toBe(true);
    // The front verified both signatures with its own SigV4 (a bad one is refused, and nothing would be stored).
    expect((await sdkGet('sig/lean.json')).text).toBe('{"v":1}');
    const sdk = putsOf('sig/sdk.json').at(-1)!;
    const ours = putsOf('sig/lean.json').at(-1)!;
    const signedOf = (seen: SeenRequest): string[] =>
      /SignedHeaders=([^,]+)/.exec(String(seen.headers.authorization))![1]!.split(';');
    // The SDK's own bookkeeping (invocation id, attempt count, its user agent) is the only difference.
    const sdkOwn = (name: string) => name.startsWith('amz-sdk-') || name === 'x-amz-user-agent';
    expect(signedOf(ours)).toEqual(signedOf(sdk).filter((name) => !sdkOwn(name)));
    expect(signedOf(ours)).toContain('if-match');
    for (const name of signedOf(ours).filter((n) => n !== 'x-amz-date'))
      expect({ name, value: ours.headers[name] }).toEqual({ name, value: sdk.headers[name] });
    expect(ours.headers['user-agent']).toBe(PUT_USER_AGENT);
  });
});

describe("the view's and the feed's documents go through the lean client", () => {
  it("S3ViewDocuments reads and writes lean; S3FeedStorage's PUTs too", async () => {
    const documents = new S3ViewDocuments(bucket, client);
    const storage = new S3FeedStorage(bucket, client);
    front.reset();
    expect(await documents.writeIf('docs/a.json', Buffer.from('{"a":1}'), undefined)).toBe(true);
    const stored = await documents.read('docs/a.json');
    expect(stored?.bytes.toString()).toBe('{"a":1}');
    expect(await documents.writeIf('docs/a.json', Buffer.from('{"a":2}'), stored!.tag)).toBe(true);
    expect(await documents.writeIf('docs/a.json', Buffer.from('{"a":3}'), stored!.tag)).toBe(false);
    await storage.put('docs/flat/index.json', Buffer.from('{"versions":[]}'), 'json');
    expect(front.seen.map((seen) => seen.headers['user-agent'])).toEqual(Array(5).fill(PUT_USER_AGENT));
    expect((await sdkGet('docs/a.json')).text).toBe('{"a":2}');
  });

  it("a bucket the lean client does not sign: the SDK's GetObject and conditional PutObject, with the same answers", async () => {
    // A `bucketEndpoint` client takes the bucket as its endpoint: the lean client leaves it to the SDK.
    const sdkOnly = new S3Client({
      region: 'us-east-1',
      credentials: CREDENTIALS,
      bucketEndpoint: true,
      maxAttempts: 1,
    });
    const documents = new S3ViewDocuments(`${front.url}/${bucket}`, sdkOnly);
    front.reset();
    try {
      expect(await documents.read('sdk-only/a.json')).toBeUndefined();
      expect(await documents.writeIf('sdk-only/a.json', Buffer.from('{"a":1}'), undefined)).toBe(true);
      expect(await documents.writeIf('sdk-only/a.json', Buffer.from('{"a":2}'), undefined)).toBe(false);
      const stored = await documents.read('sdk-only/a.json');
      expect(stored?.tag).toBe((await sdkGet('sdk-only/a.json')).etag);
      expect(await documents.writeIf('sdk-only/a.json', Buffer.from('{"a":3}'), stored!.tag)).toBe(true);
      expect(await documents.writeIf('sdk-only/a.json', Buffer.from('{"a":4}'), stored!.tag)).toBe(false);
      // Six requests of the documents and the test's own GetObject, none of them lean.
      expect(front.seen).toHaveLength(7);
      expect(front.seen.every((seen) => seen.headers['user-agent'] !== PUT_USER_AGENT)).toBe(true);
    } finally {
      await leanPutFor(sdkOnly).close();
      sdkOnly.destroy();
    }
  });

  it("no region: the settings error naming AWS_REGION, as the SDK's calls of a client built by awsClients give", async () => {
    // The SDK's default region provider fails so when no region is set anywhere.
    const noRegion = withSetupErrors(
      frontClient({ region: (): Promise<string> => Promise.reject(new Error('Region is missing')) }),
      AWS_SERVICE.s3,
    );
    const documents = new S3ViewDocuments(bucket, noRegion);
    const storage = new S3FeedStorage(bucket, noRegion);
    try {
      for (const request of [
        documents.read('docs/a.json'),
        documents.writeIf('docs/b.json', Buffer.from('{}'), undefined),
        storage.put('docs/c.json', Buffer.from('{}'), 'json'),
        noRegion.send(new GetObjectCommand({ Bucket: bucket, Key: 'docs/a.json' })),
      ]) {
        const error = await request.then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(SettingsError);
        expect((error as SettingsError).setting).toBe('AWS_REGION');
      }
    } finally {
      await leanPutFor(noRegion).close();
      noRegion.destroy();
    }
  });
});
