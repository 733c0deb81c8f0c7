/**
 * S3 SlowDown is back-pressure, not failure: a proxy in front of s3rver answers a share of leaf PUTs with
 * 503 SlowDown (S3's XML error); the range worker still completes its ranges with every leaf stored, and reports
 * how many SlowDowns it absorbed and how far it lowered its leaf PUTs in flight.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BackfillRange } from '../../lambda/contract/index.js';
import { generateCatalog, type GeneratedCatalog } from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { commitTicks, SyncHarness } from '../../testkit/sync-harness.js';

const SLOW_DOWN = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message><RequestId>TEST</RequestId><HostId>TEST</HostId></Error>';

/** Forwards to `target`, answering every `every`-th leaf PUT with 503 SlowDown instead. */
async function slowDownProxy(target: string, every: number): Promise<{ server: Server; url: string; slowDowns: () => number }> {
  const upstream = new URL(target);
  let puts = 0;
  let answered = 0;
  const server = createServer((req, res) => {
    if (req.method === 'PUT' && req.url?.includes('/leaves/') && ++puts % every === 0) {
      req.resume();
      req.on('end', () => {
        answered++;
        res.writeHead(503, { 'content-type': 'application/xml' });
        res.end(SLOW_DOWN);
      });
      return;
    }
    const forward = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (response) => {
      res.writeHead(response.statusCode ?? 502, response.headers);
      response.pipe(res);
    });
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, slowDowns: () => answered };
}

describe('the range worker under S3 SlowDown', () => {
  let catalog: GeneratedCatalog;
  let replica: CatalogReplica;
  let harness: SyncHarness;
  let proxy: Awaited<ReturnType<typeof slowDownProxy>>;
  const saved = { ...process.env };

  beforeAll(async () => {
    catalog = generateCatalog({ commits: 12, seed: 21, leavesPerCommit: [1, 4] });
    replica = await CatalogReplica.start({ catalog, pageSize: 30 });
    harness = await SyncHarness.create();
    proxy = await slowDownProxy(harness.services.s3Endpoint, 4);
  });
  afterAll(async () => {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
    await replica.stop();
    await new Promise((resolve) => proxy.server.close(resolve));
  });

  it('absorbs every SlowDown, lowers its PUTs in flight, and stores every leaf of its ranges', async () => {
    const env = harness.env({ CATALOG_SOURCE: replica.serviceIndexUrl, CURSOR_NAME: 'slow', CONCURRENCY: '8' });
    Object.assign(process.env, env);
    const planned = await (await import('../../lambda/backfill/planner.js')).handler({ rangeLeaves: 1_000_000 });
    const items = (await harness.snapshots.getJson(planned.rangesKey)) as BackfillRange[];
    process.env.AWS_ENDPOINT_URL_S3 = proxy.url;
    const worker = (await import('../../lambda/backfill/worker.js')).handler;
    const outcome = await worker({ Items: items, BatchInput: { backfillId: planned.backfillId } }, { getRemainingTimeInMillis: () => 600_000 });
    expect(outcome.done).toBe(true);
    expect(proxy.slowDowns()).toBeGreaterThan(0);
    expect(outcome.slowDowns).toBe(proxy.slowDowns());
    expect(outcome.lowestPutConcurrency).toBeLessThan(8);
    const head = commitTicks(catalog, -1);
    expect(await harness.verify(catalog, replica.origin, head)).toEqual([]);
  }, 180_000);
});
