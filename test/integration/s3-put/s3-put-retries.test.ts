/**
 * S3 PUT retries nobody could see (issue 20, item 4), now seen and bounded: each retry is told to the caller
 * (which PUT, the attempt, why, the wait), bounded by the SDK retry strategy's token bucket (500 tokens, 5 a
 * throttled retry, refilled by successes), logged by `catalog-sync run --verbose` and in the Lambda's debug log, counted in the run summary
 * (`putRetries`) and published as the `PutRetries` EMF metric. S3 is s3rver behind the fault front.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { commitKey } from '../../../lambda/contract/keys.js';
import type { PutRetryEvent } from '../../../lambda/stores/types.js';
import { S3PutClient } from '../../../lambda/stores/s3-put-client.js';
import { S3PutError } from '../../../lambda/stores/s3-put-error.js';
import { INITIAL_RETRY_TOKENS, NO_RETRY_INCREMENT, Retry } from '@smithy/core/retry';
import { generateCatalog, type GeneratedCatalog } from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { runCli } from '../../../testkit/cli-process.js';
import { createBucket } from '../../../testkit/emulators.js';
import { testServices, uniqueName } from '../../../testkit/env.js';
import { FAST_BACKOFF } from '../../../testkit/fast-backoff.js';
import { S3FaultFront, type S3Fault, type SeenRequest } from '../../../testkit/s3-fault-front.js';
import { commitTicks, SyncHarness } from '../../../testkit/sync-harness.js';

const SLOW_DOWN: S3Fault = {
  kind: 'answer',
  status: 503,
  code: 'SlowDown',
  message: 'Please reduce your request rate.',
};

let front: S3FaultFront;
let catalog: GeneratedCatalog;
let replica: CatalogReplica;

function s3(): S3Client {
  return new S3Client({
    endpoint: front.url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    forcePathStyle: true,
    maxAttempts: 5,
  });
}

/**
 * The first leaf PUT of the catalog's second commit in `bucket`: refused with SlowDown twice, then stored (the SDK's
 * throttling backoff, from 1 s, is real in the CLI and the Lambda).
 */
function throttleOneLeaf(bucket: string): void {
  const prefix = `/${bucket}/leaves/${commitKey(commitTicks(catalog, 1))}/`;
  let leaf: string | undefined;
  const match = (seen: SeenRequest): boolean =>
    seen.method === 'PUT' && seen.url.startsWith(prefix) && (leaf ??= seen.url) === seen.url;
  front.fault({ match, fault: SLOW_DOWN, times: 2 });
}

beforeAll(async () => {
  front = await S3FaultFront.start(testServices().s3Endpoint);
  catalog = generateCatalog({ commits: 4, seed: 4242, leavesPerCommit: [1, 3] });
  replica = await CatalogReplica.start({ catalog, pageSize: 10 });
});
afterAll(async () => {
  await replica.stop();
  await front.stop();
});

describe('S3 PUT retries', () => {
  const bucket = uniqueName('retries');
  beforeAll(async () => {
    await createBucket(testServices().s3Endpoint, bucket);
  });

  it('are each told to the caller: the object, the attempt that failed, why, and the wait', async () => {
    const client = s3();
    const put = new S3PutClient(client, { connections: 2, backoff: FAST_BACKOFF });
    const events: PutRetryEvent[] = [];
    try {
      front.fault({ match: (seen) => seen.url === `/${bucket}/told.json`, fault: SLOW_DOWN, times: 2 });
      front.fault({ match: (seen) => seen.url === `/${bucket}/reset.json`, fault: { kind: 'reset' }, times: 1 });
      await put.put(
        { bucket, key: 'told.json', body: Buffer.from('{}'), contentType: 'application/json' },
        { onRetry: (event) => events.push(event) },
      );
      await put.put(
        { bucket, key: 'reset.json', body: Buffer.from('{}'), contentType: 'application/json' },
        { onRetry: (event) => events.push(event) },
      );
      expect(events.map(({ delayMs: _, ...event }) => event)).toEqual([
        { url: `s3://${bucket}/told.json`, attempt: 1, why: 'SlowDown', status: 503 },
        { url: `s3://${bucket}/told.json`, attempt: 2, why: 'SlowDown', status: 503 },
        { url: `s3://${bucket}/reset.json`, attempt: 1, why: 'ECONNRESET' },
      ]);
      for (const event of events) expect(event.delayMs).toBeGreaterThanOrEqual(0);
    } finally {
      front.reset();
      await put.close();
      client.destroy();
    }
  });

  it('stop when the retry quota is spent: sustained SlowDown fails PUTs at their first refusal, successes refill it', async () => {
    const client = s3();
    const put = new S3PutClient(client, { connections: 2, backoff: FAST_BACKOFF });
    try {
      front.fault({ match: (seen) => seen.url.startsWith(`/${bucket}/quota/`), fault: SLOW_DOWN });
      const perPut = 4 * Retry.throttlingCost(); // 5 attempts: 4 retries, each of the SDK's throttling cost (5)
      const spending = INITIAL_RETRY_TOKENS / perPut; // 25 PUTs spend the 500 tokens
      for (let i = 0; i < spending; i++) {
        const error = await put
          .put({ bucket, key: `quota/${i}.json`, body: Buffer.from('{}'), contentType: 'application/json' })
          .catch((e: unknown) => e);
        expect(error).toMatchObject({ attempts: 5, quotaSpent: false });
      }
      expect(await put.retryTokens()).toBe(0);
      const spent = await put
        .put({ bucket, key: 'quota/spent.json', body: Buffer.from('{}'), contentType: 'application/json' })
        .catch((e: unknown) => e);
      expect(spent).toBeInstanceOf(S3PutError);
      expect(spent).toMatchObject({ status: 503, s3Code: 'SlowDown', attempts: 1, quotaSpent: true });
      expect((spent as Error).message).toBe(
        `S3 PUT s3://${bucket}/quota/spent.json failed after 1 attempt: HTTP 503 SlowDown: Please reduce your request rate. (not retried: the retry quota is spent, S3 has been refusing or throttling many PUTs)`,
      );
      // 25 × 5 attempts, then 1: the load stopped multiplying.
      expect(front.seen.filter((seen) => seen.url.startsWith(`/${bucket}/quota/`))).toHaveLength(spending * 5 + 1);
      front.reset();
      for (let i = 0; i < 3; i++)
        await put.put({ bucket, key: `quota/ok-${i}.json`, body: Buffer.from('{}'), contentType: 'application/json' });
      expect(await put.retryTokens()).toBe(3 * NO_RETRY_INCREMENT);
    } finally {
      front.reset();
      await put.close();
      client.destroy();
    }
  });

  it('catalog-sync run --verbose logs each one and the summary counts them (putRetries)', async () => {
    const harness = await SyncHarness.create();
    throttleOneLeaf(harness.bucket);
    try {
      const result = await runCli(
        [
          'run',
          '--source',
          replica.serviceIndexUrl,
          '--cursor-table',
          harness.table,
          '--bucket',
          harness.bucket,
          '--json',
          '--verbose',
        ],
        harness.env({ AWS_ENDPOINT_URL_S3: front.url }),
      );
      expect(result.code).toBe(0);
      const summary = JSON.parse(result.stdout.trim());
      expect(summary).toMatchObject({ stoppedBy: 'caught-up', commits: catalog.commits.length, putRetries: 2 });
      const lines = result.stderr
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const retries = lines.filter((line) => line.message === 'retry' && String(line.url).startsWith('s3://'));
      expect(
        retries.map((line) => ({ level: line.level, attempt: line.attempt, why: line.why, status: line.status })),
      ).toEqual([
        { level: 'DEBUG', attempt: 1, why: 'SlowDown', status: 503 },
        { level: 'DEBUG', attempt: 2, why: 'SlowDown', status: 503 },
      ]);
      expect(new Set(retries.map((line) => line.url)).size).toBe(1);
      expect(String(retries[0]!.url)).toMatch(new RegExp(`^s3://${harness.bucket}/leaves/`));
      for (const line of retries) expect(typeof line.delayMs).toBe('number');
    } finally {
      front.reset();
    }
  });

  it('the Lambda logs each one at DEBUG and publishes PutRetries', async () => {
    const harness = await SyncHarness.create();
    throttleOneLeaf(harness.bucket);
    const saved = { ...process.env };
    Object.assign(
      process.env,
      harness.env({ CATALOG_SOURCE: replica.serviceIndexUrl, AWS_ENDPOINT_URL_S3: front.url }),
      {
        POWERTOOLS_LOG_LEVEL: 'DEBUG',
        POWERTOOLS_SERVICE_NAME: 'catalog-sync-retries',
        POWERTOOLS_METRICS_NAMESPACE: 'CatalogSync',
      },
    );
    const written: string[] = [];
    const capture = (chunk: string | Uint8Array): boolean => {
      written.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    };
    const spies = [
      vi.spyOn(process.stdout, 'write').mockImplementation(capture),
      vi.spyOn(process.stderr, 'write').mockImplementation(capture),
    ];
    try {
      const { handler } = await import('../../../lambda/sync/lambda.js');
      const summary = await handler({}, { getRemainingTimeInMillis: () => 600_000 });
      expect(summary).toMatchObject({ stoppedBy: 'caught-up', putRetries: 2 });
    } finally {
      for (const spy of spies) spy.mockRestore();
      for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
      Object.assign(process.env, saved);
      front.reset();
    }
    const records = written
      .join('')
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const retries = records.filter((record) => record.message === 'retry' && String(record.url).startsWith('s3://'));
    expect(retries.map((record) => [record.level, record.why])).toEqual([
      ['DEBUG', 'SlowDown'],
      ['DEBUG', 'SlowDown'],
    ]);
    const emf = records.filter((record) => record._aws !== undefined);
    expect(emf).toHaveLength(1);
    expect(emf[0]).toMatchObject({ PutRetries: 2, service: 'catalog-sync-retries' });
  });
});
