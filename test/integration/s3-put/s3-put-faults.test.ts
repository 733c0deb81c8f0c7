/**
 * The lean S3 PUT's retries, against s3rver behind a fault-injecting front (testkit/s3-fault-front.ts): what
 * the SDK's retry strategy retries (503 SlowDown, 500, a reset connection) is retried until it succeeds; what it
 * does not (403) fails at once; a PUT that keeps failing names its key, status, code and attempts; and every
 * throttled attempt reaches the backfill's SlowDownGauge.
 */
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { S3PutClient } from '../../../lambda/stores/s3-put-client.js';
import { S3PutError } from '../../../lambda/stores/s3-put-error.js';
import {
  BACKPRESSURE_MAX_ATTEMPTS,
  backpressureS3Client,
  SlowDownGauge,
} from '../../../lambda/stores/s3-backpressure.js';
import { S3SnapshotStore } from '../../../lambda/stores/s3-store.js';
import { createBucket } from '../../../testkit/emulators.js';
import { testServices, uniqueName } from '../../../testkit/env.js';
import { FAST_BACKOFF } from '../../../testkit/fast-backoff.js';
import { S3FaultFront, type S3Fault, type SeenRequest } from '../../../testkit/s3-fault-front.js';
import { generateCatalog } from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { SyncHarness } from '../../../testkit/sync-harness.js';
import { SyncError } from '../../../lambda/sync/engine.js';

const SLOW_DOWN: S3Fault = {
  kind: 'answer',
  status: 503,
  code: 'SlowDown',
  message: 'Please reduce your request rate.',
};

describe('the lean S3 PUT under faults', () => {
  const bucket = uniqueName('lean-faults');
  let front: S3FaultFront;
  let client: S3Client;
  let put: S3PutClient;
  let slowDowns = 0;
  const pathOf = (key: string): string => `/${bucket}/${key}`;
  const forKey = (key: string) => (seen: SeenRequest) => seen.method === 'PUT' && seen.url === pathOf(key);
  const body = (key: string) => ({
    bucket,
    key,
    body: Buffer.from(`{"key":"${key}"}`),
    contentType: 'application/json',
  });

  async function stored(key: string): Promise<string> {
    const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return got.Body!.transformToString();
  }

  beforeAll(async () => {
    await createBucket(testServices().s3Endpoint, bucket);
    front = await S3FaultFront.start(testServices().s3Endpoint);
    client = new S3Client({
      endpoint: front.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      forcePathStyle: true,
      maxAttempts: 5,
    });
    put = new S3PutClient(client, { connections: 4, backoff: FAST_BACKOFF, onSlowDown: () => slowDowns++ });
  });
  afterEach(() => {
    front.reset();
    slowDowns = 0;
  });
  afterAll(async () => {
    await put.close();
    client.destroy();
    await front.stop();
  });

  it('retries 503 SlowDown, tells the hook of each, and succeeds', async () => {
    front.fault({ match: forKey('slow/a.json'), fault: SLOW_DOWN, times: 2 });
    await put.put(body('slow/a.json'));
    expect(front.putsOf(pathOf('slow/a.json'))).toHaveLength(3);
    expect(slowDowns).toBe(2);
    expect(await stored('slow/a.json')).toBe('{"key":"slow/a.json"}');
  });

  it('a lean GET retries SlowDown and a reset like a PUT, gives up on 403 at once, and reads the stored bytes', async () => {
    await put.put(body('get/a.json'));
    const isGet = (seen: SeenRequest) => seen.method === 'GET' && seen.url === pathOf('get/a.json');
    front.fault({ match: isGet, fault: SLOW_DOWN, times: 1 });
    front.fault({ match: isGet, fault: { kind: 'reset' }, times: 1 });
    expect((await put.get(bucket, 'get/a.json'))?.toString()).toBe('{"key":"get/a.json"}');
    expect(front.seen.filter(isGet)).toHaveLength(3);
    expect(slowDowns).toBe(1);
    front.fault({ match: isGet, fault: { kind: 'answer', status: 403, code: 'AccessDenied' }, times: 1 });
    await expect(put.get(bucket, 'get/a.json')).rejects.toMatchObject({
      code: 'CS_ERR_S3_PUT',
      status: 403,
      s3Code: 'AccessDenied',
      attempts: 1,
      message: expect.stringContaining('S3 GET'),
    });
  });

  it('retries 500 InternalError and succeeds', async () => {
    front.fault({
      match: forKey('five/a.json'),
      fault: { kind: 'answer', status: 500, code: 'InternalError' },
      times: 1,
    });
    await put.put(body('five/a.json'));
    expect(front.putsOf(pathOf('five/a.json'))).toHaveLength(2);
    expect(slowDowns).toBe(0);
    expect(await stored('five/a.json')).toBe('{"key":"five/a.json"}');
  });

  it('retries a connection reset and succeeds', async () => {
    front.fault({ match: forKey('reset/a.json'), fault: { kind: 'reset' }, times: 1 });
    await put.put(body('reset/a.json'));
    expect(front.faults.get('reset')).toBe(1);
    expect(front.putsOf(pathOf('reset/a.json'))).toHaveLength(2);
    expect(await stored('reset/a.json')).toBe('{"key":"reset/a.json"}');
  });

  it('retries S3 RequestTimeout (400) as the SDK does', async () => {
    front.fault({
      match: forKey('timeout/a.json'),
      fault: { kind: 'answer', status: 400, code: 'RequestTimeout' },
      times: 1,
    });
    await put.put(body('timeout/a.json'));
    expect(front.putsOf(pathOf('timeout/a.json'))).toHaveLength(2);
  });

  it('does not retry 403 AccessDenied: one attempt, the error names it', async () => {
    front.fault({
      match: forKey('denied/a.json'),
      fault: { kind: 'answer', status: 403, code: 'AccessDenied', message: 'Access Denied' },
    });
    const error = await put.put(body('denied/a.json')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(S3PutError);
    expect(error).toMatchObject({ status: 403, s3Code: 'AccessDenied', s3Message: 'Access Denied', attempts: 1 });
    expect(front.putsOf(pathOf('denied/a.json'))).toHaveLength(1);
  });

  it("gives up after the client's maxAttempts, naming the key, status, code and attempts", async () => {
    front.fault({ match: forKey('always/slow.json'), fault: SLOW_DOWN });
    const error = await put.put(body('always/slow.json')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(S3PutError);
    expect(error).toMatchObject({ bucket, key: 'always/slow.json', status: 503, s3Code: 'SlowDown', attempts: 5 });
    expect((error as Error).message).toBe(
      `S3 PUT s3://${bucket}/always/slow.json failed after 5 attempts: HTTP 503 SlowDown: Please reduce your request rate.`,
    );
    expect(front.putsOf(pathOf('always/slow.json'))).toHaveLength(5);
    expect(slowDowns).toBe(5);
  });

  it('gives up on a connection that keeps resetting, with the transport error as the cause', async () => {
    front.fault({ match: forKey('always/reset.json'), fault: { kind: 'reset' } });
    const error = await put.put(body('always/reset.json')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(S3PutError);
    expect(error).toMatchObject({ key: 'always/reset.json', status: undefined, attempts: 5 });
    expect((error as Error).cause).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/failed after 5 attempts: no answer/);
  });

  it("tells a backfill client's SlowDownGauge of every SlowDown, with the backfill's attempts", async () => {
    const gauge = new SlowDownGauge(8);
    const env = {
      AWS_ENDPOINT_URL_S3: front.url,
      S3_FORCE_PATH_STYLE: 'true',
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
    };
    const saved = { ...process.env };
    Object.assign(process.env, env);
    let backfill: S3Client | undefined;
    try {
      backfill = backpressureS3Client(process.env, 8, gauge);
      const store = new S3SnapshotStore(bucket, backfill);
      front.fault({ match: forKey('gauge/a.json'), fault: SLOW_DOWN, times: 3 });
      await store.putLeaf('gauge/a.json', Buffer.from('{}'), {});
      expect(gauge.slowDowns).toBe(3);
      expect(front.putsOf(pathOf('gauge/a.json'))).toHaveLength(4);
      // The backfill's client has more attempts than the follower's 5 (500s: the SDK's shorter backoff, not the gauge's).
      front.fault({
        match: forKey('gauge/b.json'),
        fault: { kind: 'answer', status: 500, code: 'InternalError' },
        times: 6,
      });
      await store.putJson('gauge/b.json', { ok: true });
      expect(front.putsOf(pathOf('gauge/b.json'))).toHaveLength(7);
      expect(BACKPRESSURE_MAX_ATTEMPTS).toBeGreaterThanOrEqual(7);
      expect(gauge.slowDowns).toBe(3);
    } finally {
      backfill?.destroy();
      for (const key of Object.keys(env)) if (!(key in saved)) delete process.env[key];
      Object.assign(process.env, saved);
    }
  }, 120_000);

  it('does not hedge a leaf PUT that S3 throttles while it waits past the hedge delay to retry (x-amz-retry-after: 1300 ms)', async () => {
    const catalog = generateCatalog({ commits: 1, seed: 6, leavesPerCommit: [1, 1], deleteRatio: 0 });
    const replica = await CatalogReplica.start({ catalog });
    const harness = await SyncHarness.create();
    try {
      const leafPut = (seen: SeenRequest): boolean =>
        seen.method === 'PUT' && seen.url.startsWith(`/${harness.bucket}/leaves/`);
      front.fault({ match: leafPut, fault: { ...SLOW_DOWN, headers: { 'x-amz-retry-after': '1300' } }, times: 1 });
      const summary = await harness.run(
        replica.serviceIndexUrl,
        {},
        { snapshots: new S3SnapshotStore(harness.bucket, client, put) },
      );
      expect(summary).toMatchObject({ stoppedBy: 'caught-up', leaves: 1, putRetries: 1 });
      // The refused PUT and its retry 1.3 s later; no second PUT sent a second after the first (a hedge).
      expect(front.seen.filter(leafPut)).toHaveLength(2);
    } finally {
      await replica.stop();
    }
  });

  it('stops a run whose leaf PUT S3 refuses: the run summary and run log carry CS_ERR_S3_PUT and the key', async () => {
    const catalog = generateCatalog({ commits: 3, seed: 5, leavesPerCommit: [1, 2] });
    const replica = await CatalogReplica.start({ catalog, pageSize: 10 });
    const harness = await SyncHarness.create();
    try {
      front.fault({
        match: (seen) => seen.method === 'PUT' && seen.url.startsWith(`/${harness.bucket}/leaves/`),
        fault: { kind: 'answer', status: 403, code: 'AccessDenied', message: 'Access Denied' },
      });
      const snapshots = new S3SnapshotStore(harness.bucket, client, put);
      const error = await harness
        .run(replica.serviceIndexUrl, { CONCURRENCY: '1' }, { snapshots })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SyncError);
      const summary = (error as SyncError).summary;
      expect(summary).toMatchObject({ stoppedBy: 'error', commits: 0, error: { code: 'CS_ERR_S3_PUT' } });
      expect(summary.error!.message).toMatch(
        new RegExp(
          `^S3 PUT s3://${harness.bucket}/leaves/\\S+ failed after 1 attempt: HTTP 403 AccessDenied: Access Denied$`,
        ),
      );
      expect((await harness.store.listRuns('catalog-to-s3', { limit: 1 }))[0]).toMatchObject({
        stoppedBy: 'error',
        error: { code: 'CS_ERR_S3_PUT' },
      });
    } finally {
      await replica.stop();
    }
  });
});
