/**
 * The test kit's catalog replica serving a generated catalog over real HTTP on 127.0.0.1: every document byte for
 * byte, compression, and the faults it injects on demand (statuses, resets, truncation, stalls, bad bodies,
 * latency, a gzip bomb), so the sync tests can trust what they are served.
 */
import { brotliDecompressSync, createGunzip, gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateCatalog, leafBody, type GeneratedCatalog } from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { get, getJson, isSortedByTime, ticks, type Index, type Page } from './replica-kit.js';

describe('CatalogReplica serving a generated catalog', () => {
  let catalog: GeneratedCatalog;
  let replica: CatalogReplica;

  beforeAll(async () => {
    catalog = generateCatalog({
      commits: 60,
      seed: 5,
      sameMillisecondPairs: 3,
      trimTrailingZeros: true,
      deleteRatio: 0.2,
      semver2Ratio: 0.2,
    });
    replica = await CatalogReplica.start({ catalog, pageSize: 20 });
  });
  afterAll(() => replica.stop());
  afterEach(() => {
    replica.clearFaults();
    replica.latency(0);
    replica.clearLog();
  });

  it('listens on 127.0.0.1 and publishes the catalog in its service index', async () => {
    expect(replica.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(replica.serviceIndexUrl).toBe(`${replica.origin}/v3/index.json`);
    const services = await getJson<{ resources: { '@id': string; '@type': string }[] }>(replica.serviceIndexUrl);
    const catalogs = services.resources.filter((r) => r['@type'] === 'Catalog/3.0.0');
    expect(catalogs).toEqual([expect.objectContaining({ '@id': `${replica.origin}/v3/catalog0/index.json` })]);
    expect(replica.catalogIndexUrl).toBe(catalogs[0]!['@id']);
    expect(services.resources.length).toBeGreaterThanOrEqual(3);
  });

  it('serves index -> shuffled pages -> leaves: every leaf once, byte for byte, commits never split', async () => {
    const index = await getJson<Index>(replica.catalogIndexUrl);
    expect(index['@id']).toBe(replica.catalogIndexUrl);
    expect(index.commitId).toBe(catalog.commits.at(-1)!.commitId);
    expect(index.commitTimeStamp).toBe(catalog.commits.at(-1)!.timestamp);
    expect(index.count).toBe(index.items.length);
    expect(index.items.length).toBeGreaterThan(3);
    expect(isSortedByTime(index.items)).toBe(false);
    expect(index.items.every((item) => item['@type'] === 'CatalogPage')).toBe(true);

    const served = new Map<string, string>();
    const pageOfCommit = new Map<string, string>();
    let shuffledPages = 0;
    for (const entry of index.items) {
      const page = await getJson<Page>(entry['@id']);
      expect(page['@id']).toBe(entry['@id']);
      expect(page.parent).toBe(replica.catalogIndexUrl);
      expect(page.count).toBe(page.items.length);
      expect(page.count).toBe(entry.count);
      expect(page.count).toBeLessThanOrEqual(20);
      expect(page.commitTimeStamp).toBe(entry.commitTimeStamp);
      expect(page.commitId).toBe(entry.commitId);
      const newest = page.items.reduce((a, b) => (ticks(b.commitTimeStamp) > ticks(a.commitTimeStamp) ? b : a));
      expect(newest.commitTimeStamp).toBe(page.commitTimeStamp);
      if (!isSortedByTime(page.items)) shuffledPages++;
      for (const item of page.items) {
        expect(item['@type']).toMatch(/^nuget:Package(Details|Delete)$/);
        const other = pageOfCommit.get(item.commitId);
        expect(other === undefined || other === page['@id'], `commit ${item.commitId} split`).toBe(true);
        pageOfCommit.set(item.commitId, page['@id']);
        const { status, body } = await get(item['@id']);
        expect(status).toBe(200);
        served.set(item['@id'], body.toString('utf8'));
      }
    }
    expect(shuffledPages).toBeGreaterThan(0);
    const leaves = catalog.commits.flatMap((commit) => commit.leaves.map((leaf) => ({ commit, leaf })));
    expect(served.size).toBe(leaves.length);
    for (const { leaf } of leaves) {
      expect(served.get(replica.leafUrl(leaf))).toBe(leafBody(catalog, leaf, replica.origin));
    }
  });

  it('lists pages oldest first and tells their documents and commits', () => {
    const paths = replica.pagePaths();
    expect(paths[0]).toBe('/v3/catalog0/page0.json');
    expect(replica.pageUrls()[0]).toBe(`${replica.origin}/v3/catalog0/page0.json`);
    const page0 = JSON.parse(replica.documentAt(paths[0]!)) as Page;
    expect(replica.commitsOnPage(0)).toBe(new Set(page0.items.map((i) => i.commitId)).size);
    expect(page0.items.map((i) => i.commitId)).toContain(catalog.commits[0]!.commitId);
  });

  it('compresses with gzip or br when the client accepts it', async () => {
    const plain = await get(replica.catalogIndexUrl);
    expect(plain.headers['content-encoding']).toBeUndefined();
    const gzip = await get(replica.catalogIndexUrl, { 'accept-encoding': 'gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gzip.headers.vary).toBe('Accept-Encoding');
    expect(Number(gzip.headers['content-length'])).toBe(gzip.body.length);
    expect(gunzipSync(gzip.body).equals(plain.body)).toBe(true);
    const br = await get(replica.catalogIndexUrl, { 'accept-encoding': 'gzip, deflate, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.body).equals(plain.body)).toBe(true);
    const preferGzip = await get(replica.catalogIndexUrl, { 'accept-encoding': 'br;q=0.5, gzip' });
    expect(preferGzip.headers['content-encoding']).toBe('gzip');
    const leaf = catalog.commits[0]!.leaves[0]!;
    const leafBr = await get(replica.leafUrl(leaf), { 'accept-encoding': 'br' });
    expect(brotliDecompressSync(leafBr.body).toString('utf8')).toBe(leafBody(catalog, leaf, replica.origin));
  });

  it('answers only GET and HEAD, and 404 for unknown paths', async () => {
    const get200 = await get(replica.catalogIndexUrl);
    const head = await get(replica.catalogIndexUrl, {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body).toHaveLength(0);
    expect(Number(head.headers['content-length'])).toBe(get200.body.length);
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const response = await get(replica.catalogIndexUrl, {}, method);
      expect(response.status, method).toBe(405);
      expect(response.headers.allow).toBe('GET, HEAD');
    }
    expect((await get(`${replica.origin}/v3/catalog0/page999.json`)).status).toBe(404);
  });

  it('fails with a status the next `times` matching requests, with headers', async () => {
    replica.failWith('/v3/catalog0/index.json', 503, 2);
    replica.failWith((path) => path.endsWith('/page0.json'), 429, 1, { 'Retry-After': '1' });
    expect((await get(replica.catalogIndexUrl)).status).toBe(503);
    expect((await get(replica.catalogIndexUrl)).status).toBe(503);
    expect((await get(replica.catalogIndexUrl)).status).toBe(200);
    const limited = await get(`${replica.origin}/v3/catalog0/page0.json`);
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('1');
    expect((await get(`${replica.origin}/v3/catalog0/page0.json`)).status).toBe(200);
  });

  it('resets the connection before answering', async () => {
    replica.resetConnection('/page1.json', 1);
    const url = `${replica.origin}/v3/catalog0/page1.json`;
    const error = (await get(url).catch((e: unknown) => e)) as { code?: string; cause?: { code?: string } };
    expect(error).toBeInstanceOf(Error);
    expect([error.code, error.cause?.code]).toEqual(
      expect.arrayContaining([expect.stringMatching(/ECONNRESET|UND_ERR_SOCKET/)]),
    );
    expect((await get(url)).status).toBe(200);
  });

  it('truncates a body: full Content-Length, half the bytes, then a close', async () => {
    const leaf = catalog.commits[3]!.leaves[0]!;
    const full = Buffer.from(leafBody(catalog, leaf, replica.origin));
    replica.truncateBody(leaf.path, 1);
    const response = await request(replica.leafUrl(leaf));
    expect(response.statusCode).toBe(200);
    expect(Number(response.headers['content-length'])).toBe(full.length);
    await expect(response.body.arrayBuffer()).rejects.toThrow();
    expect((await get(replica.leafUrl(leaf))).body.equals(full)).toBe(true);
  });

  it('stalls a body until the client gives up', async () => {
    const leaf = catalog.commits[4]!.leaves[0]!;
    replica.stallBody(leaf.path, 1);
    const response = await request(replica.leafUrl(leaf), { bodyTimeout: 300 });
    expect(response.statusCode).toBe(200);
    await expect(response.body.arrayBuffer()).rejects.toMatchObject({ code: 'UND_ERR_BODY_TIMEOUT' });
    expect((await get(replica.leafUrl(leaf))).status).toBe(200);
  });

  it('overrides bodies: malformed, wrong types, huge, pre-encoded', async () => {
    const leaf = catalog.commits[5]!.leaves[0]!;
    replica.overrideBody(leaf.path, '{"@type": ', { times: 2 });
    expect((await get(replica.leafUrl(leaf))).body.toString()).toBe('{"@type": ');
    expect((await get(replica.leafUrl(leaf))).body.toString()).toBe('{"@type": ');
    expect((await get(replica.leafUrl(leaf))).body.toString()).toBe(leafBody(catalog, leaf, replica.origin));

    replica.overrideBody('/page2.json', JSON.stringify({ items: 'not an array', count: '3' }), {
      contentType: 'text/html',
      times: 1,
    });
    const wrong = await get(`${replica.origin}/v3/catalog0/page2.json`, { 'accept-encoding': 'gzip' });
    expect(wrong.headers['content-type']).toBe('text/html');
    expect(JSON.parse(gunzipSync(wrong.body).toString())).toEqual({ items: 'not an array', count: '3' });

    const huge = Buffer.alloc(40 * 1024 * 1024, 0x20);
    replica.overrideBody(leaf.path, huge, { times: 1 });
    const big = await get(replica.leafUrl(leaf));
    expect(big.body.length).toBe(huge.length);

    const raw = Buffer.from([0x1f, 0x8b, 0xde, 0xad]);
    replica.overrideBody(leaf.path, raw, { times: 1, headers: { 'Content-Encoding': 'gzip' } });
    const broken = await get(replica.leafUrl(leaf), { 'accept-encoding': 'br' });
    expect(broken.headers['content-encoding']).toBe('gzip');
    expect(broken.body.equals(raw)).toBe(true);
  });

  it('adds latency to every answer', async () => {
    replica.latency(150);
    const started = performance.now();
    expect((await get(replica.serviceIndexUrl)).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('serves a gzip bomb: about 1 MB that inflates to far more than 100 MB', async () => {
    const leaf = catalog.commits[6]!.leaves[0]!;
    replica.gzipBomb(leaf.path);
    const response = await request(replica.leafUrl(leaf));
    expect(response.headers['content-encoding']).toBe('gzip');
    expect(Number(response.headers['content-length'])).toBeLessThan(2 * 1024 * 1024);
    let inflated = 0;
    const limit = 150 * 1024 * 1024;
    await new Promise<void>((resolve, reject) => {
      const gunzip = createGunzip();
      gunzip.on('data', (chunk: Buffer) => {
        inflated += chunk.length;
        if (inflated > limit) {
          gunzip.destroy();
          response.body.on('error', () => {}).destroy();
          resolve();
        }
      });
      gunzip.on('error', reject);
      gunzip.on('end', () => resolve());
      response.body.pipe(gunzip);
    });
    expect(inflated).toBeGreaterThan(100 * 1024 * 1024);
  });

  it('logs requests with method, path and headers', async () => {
    await get(replica.catalogIndexUrl, { 'x-test': 'one' });
    await get(replica.catalogIndexUrl, {}, 'HEAD');
    await get(`${replica.origin}/v3/catalog0/page0.json?cache=bust`);
    expect(replica.requests[0]).toMatchObject({
      method: 'GET',
      path: '/v3/catalog0/index.json',
      headers: { 'x-test': 'one' },
    });
    expect(replica.countRequests('/v3/catalog0/index.json')).toBe(2);
    expect(replica.countRequests('/v3/catalog0/index.json', 'HEAD')).toBe(1);
    expect(replica.countRequests(/page\d+\.json$/)).toBe(1);
    expect(replica.countRequests(replica.catalogIndexUrl)).toBe(2);
    expect(replica.countRequests((p) => p.startsWith('/v3/'))).toBe(3);
    replica.clearLog();
    expect(replica.requests).toHaveLength(0);
  });
});
