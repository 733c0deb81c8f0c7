/**
 * S3 SlowDown is back-pressure, not failure: a front on s3rver (testkit/s3-fault-front.ts, which also verifies
 * every request's SigV4 signature) answers every 4th leaf PUT with 503 SlowDown (S3's XML error); the range
 * worker still completes its ranges with every leaf stored, and reports how many SlowDowns it absorbed and how far
 * it lowered its leaf PUTs in flight (in its result and in its EMF metrics).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { BackfillRange } from '../../../lambda/contract/index.js';
import { generateCatalog, type GeneratedCatalog } from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { S3FaultFront } from '../../../testkit/s3-fault-front.js';
import { commitTicks, SyncHarness } from '../../../testkit/sync-harness.js';

describe('the range worker under S3 SlowDown', () => {
  let catalog: GeneratedCatalog;
  let replica: CatalogReplica;
  let harness: SyncHarness;
  let proxy: S3FaultFront;
  const saved = { ...process.env };

  beforeAll(async () => {
    catalog = generateCatalog({ commits: 12, seed: 21, leavesPerCommit: [1, 4] });
    replica = await CatalogReplica.start({ catalog, pageSize: 30 });
    harness = await SyncHarness.create();
    proxy = await S3FaultFront.start(harness.services.s3Endpoint);
    proxy.fault({
      match: (seen) => seen.method === 'PUT' && seen.url.includes('/leaves/'),
      every: 4,
      fault: { kind: 'answer', status: 503, code: 'SlowDown', message: 'Please reduce your request rate.' },
    });
  });
  afterAll(async () => {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
    await replica.stop();
    await proxy.stop();
  });

  it('absorbs every SlowDown, lowers its PUTs in flight, and stores every leaf of its ranges', async () => {
    const env = harness.env({ CATALOG_SOURCE: replica.serviceIndexUrl, CURSOR_NAME: 'slow', CONCURRENCY: '8' });
    Object.assign(process.env, env);
    const planned = await (await import('../../../lambda/backfill/lambda/planner.js')).handler({
      rangeLeaves: 100_000,
    });
    const items = (await harness.snapshots.getJson(planned.rangesKey)) as BackfillRange[];
    process.env.AWS_ENDPOINT_URL_S3 = proxy.url;
    const worker = (await import('../../../lambda/backfill/lambda/worker.js')).handler;
    // The invocation's EMF record (stdout) carries the SlowDowns too: backfill-metrics.test.ts covers the rest of it.
    const written: string[] = [];
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    const outcome = await worker(
      { Items: items, BatchInput: { backfillId: planned.backfillId } },
      { getRemainingTimeInMillis: () => 600_000 },
    ).finally(() => stdout.mockRestore());
    const emf = written
      .join('')
      .split('\n')
      .filter((line) => line.includes('"_aws"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(emf).toHaveLength(1);
    expect(emf[0]).toMatchObject({ SlowDowns: outcome.slowDowns });
    expect(outcome.done).toBe(true);
    expect(proxy.faults.get('SlowDown') ?? 0).toBeGreaterThan(0);
    expect(outcome.slowDowns).toBe(proxy.faults.get('SlowDown') ?? 0);
    expect(outcome.lowestPutConcurrency).toBeLessThan(8);
    const head = commitTicks(catalog, -1);
    expect(await harness.verify(catalog, replica.origin, head)).toEqual([]);
  }, 180_000);
});
