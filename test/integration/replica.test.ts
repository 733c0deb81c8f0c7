/**
 * The test support itself: the catalog generator and the catalog replica (over real HTTP on
 * 127.0.0.1), so the sync tests can trust what they are served.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliDecompressSync, createGunzip, gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseTimestamp } from '../../lambda/contract/time.js';
import {
  appendCommits,
  generateCatalog,
  leafBody,
  type GeneratedCatalog,
  type GeneratedCommit,
} from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { versionIdentity } from '../../testkit/package-identities.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/NuGetGallery/NgTests-TestCatalogEntries', import.meta.url));

interface Fetched {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

async function get(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Fetched> {
  const response = await request(url, { method: method as 'GET', headers });
  return { status: response.statusCode, headers: response.headers, body: Buffer.from(await response.body.arrayBuffer()) };
}

async function getJson<T>(url: string): Promise<T> {
  const { status, body } = await get(url);
  expect(status, url).toBe(200);
  return JSON.parse(body.toString('utf8')) as T;
}

interface Index {
  '@id': string;
  commitId: string;
  commitTimeStamp: string;
  count: number;
  items: { '@id': string; '@type': string; commitId: string; commitTimeStamp: string; count: number }[];
}
interface Page {
  '@id': string;
  commitId: string;
  commitTimeStamp: string;
  count: number;
  parent: string;
  items: { '@id': string; '@type': string; commitId: string; commitTimeStamp: string; 'nuget:id': string; 'nuget:version': string }[];
}

const ticks = (text: string): bigint => parseTimestamp(text);
const isSortedByTime = (items: readonly { commitTimeStamp: string }[]): boolean =>
  items.every((item, i) => i === 0 || ticks(items[i - 1]!.commitTimeStamp) <= ticks(item.commitTimeStamp));

describe('generateCatalog', () => {
  const options = {
    commits: 300,
    seed: 7,
    sameMillisecondPairs: 12,
    trimTrailingZeros: true,
    deleteRatio: 0.15,
    semver2Ratio: 0.3,
    nonNormalizedDeleteRatio: 0.5,
  };
  const catalog = generateCatalog(options);

  it('is deterministic for a seed, and differs between seeds', () => {
    expect(generateCatalog(options)).toEqual(catalog);
    expect(generateCatalog({ ...options, seed: 8 }).commits[0]!.commitId).not.toBe(catalog.commits[0]!.commitId);
  });

  it('starts at the start timestamp, verbatim, and commits strictly increase in exact time', () => {
    expect(catalog.commits).toHaveLength(300);
    expect(catalog.commits[0]!.timestamp).toBe('2017-10-31T23:30:32.4197849Z');
    for (let i = 1; i < catalog.commits.length; i++) {
      expect(ticks(catalog.commits[i]!.timestamp)).toBeGreaterThan(ticks(catalog.commits[i - 1]!.timestamp));
    }
  });

  it('puts exactly the requested pairs of consecutive commits inside one millisecond', () => {
    const sameMs = catalog.commits.filter(
      (c, i) => i > 0 && ticks(c.timestamp) / 10_000n === ticks(catalog.commits[i - 1]!.timestamp) / 10_000n,
    );
    expect(sameMs).toHaveLength(12);
    expect(generateCatalog({ commits: 2, sameMillisecondPairs: 1 }).commits.map((c) => c.timestamp)[1]).toMatch(
      /^2017-10-31T23:30:32\.419\d{4}Z$/,
    );
    expect(() => generateCatalog({ commits: 3, sameMillisecondPairs: 2 })).toThrow(/cannot fit/);
  });

  it('serves some timestamps with fewer than seven fractional digits only when asked', () => {
    const digits = catalog.commits.map((c) => /(?:\.(\d+))?Z$/.exec(c.timestamp)![1]?.length ?? 0);
    expect(digits.some((d) => d === 6)).toBe(true);
    expect(digits.some((d) => d === 0)).toBe(true);
    expect(catalog.commits.every((c) => !/\.\d*0Z$/.test(c.timestamp))).toBe(true);
    const untrimmed = generateCatalog({ commits: 100, seed: 7 });
    expect(untrimmed.commits.every((c) => /\.\d{7}Z$/.test(c.timestamp))).toBe(true);
  });

  it('has at most one leaf per id + version in a commit, unique paths, nuget.org-shaped', () => {
    const paths = new Set<string>();
    for (const commit of catalog.commits) {
      const identities = commit.leaves.map((l) => `${l.id.toLowerCase()}/${versionIdentity(l.version)}`);
      expect(new Set(identities).size).toBe(identities.length);
      expect(commit.leaves.length).toBeGreaterThanOrEqual(1);
      expect(commit.leaves.length).toBeLessThanOrEqual(4);
      const folder = commit.timestamp.slice(0, 19).replace(/[-T:]/g, '.');
      for (const leaf of commit.leaves) {
        expect(paths.has(leaf.path)).toBe(false);
        paths.add(leaf.path);
        expect(leaf.path).toBe(`/v3/catalog0/data/${folder}/${leaf.id.toLowerCase()}.${leaf.version.split('+')[0]!.toLowerCase()}.json`);
      }
      expect(commit.commitId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
  });

  it('has mixed-case ids, SemVer 2.0.0 versions, unlisted packages and deletes of pushed packages', () => {
    const leaves = catalog.commits.flatMap((c) => c.leaves);
    expect(leaves.every((l) => /[A-Z]/.test(l.id))).toBe(true);
    expect(leaves.some((l) => /^\d+\.\d+\.\d+-[A-Z][^+]*\+/.test(l.version))).toBe(true);
    expect(leaves.some((l) => l.type === 'PackageDetails' && l.listed === false)).toBe(true);
    expect(leaves.some((l) => l.type === 'PackageDelete' && /^\d+\.\d+$/.test(l.version))).toBe(true);
    const live = new Set<string>();
    let deletes = 0;
    for (const leaf of leaves) {
      const key = `${leaf.id.toLowerCase()}/${versionIdentity(leaf.version)}`;
      if (leaf.type === 'PackageDelete') {
        expect(live.has(key), `${leaf.id} ${leaf.version} deleted but not pushed`).toBe(true);
        live.delete(key);
        deletes++;
      } else {
        live.add(key);
      }
    }
    expect(deletes / leaves.length).toBeGreaterThan(0.05);
  });

  it('renders leaf bodies like nuget.org, with everything a client must keep', () => {
    const origin = 'http://127.0.0.1:1';
    const commit = catalog.commits.find((c) => c.leaves.some((l) => l.type === 'PackageDelete'))!;
    for (const leaf of commit.leaves) {
      const text = leafBody(catalog, leaf, origin);
      expect(leafBody(catalog, leaf, origin)).toBe(text);
      const json = JSON.parse(text) as Record<string, unknown>;
      expect(json['@id']).toBe(`${origin}${leaf.path}`);
      expect(json['@type']).toEqual([leaf.type, 'catalog:Permalink']);
      expect(json['catalog:commitId']).toBe(commit.commitId);
      expect(json['catalog:commitTimeStamp']).toBe(commit.timestamp);
      expect(json.id).toBe(leaf.id);
      expect(json.version).toBe(leaf.version);
      expect(typeof json.published).toBe('string');
      if (leaf.type === 'PackageDelete') {
        expect(json.originalId).toBe(leaf.id);
      } else {
        expect(Buffer.from(json.packageHash as string, 'base64')).toHaveLength(64);
        expect(json.packageHashAlgorithm).toBe('SHA512');
        expect(typeof json.packageSize).toBe('number');
        expect(json.futureProperty).toBeDefined();
        expect(text).toContain('"weight": 1.50');
        if (leaf.listed === false) expect(json.published).toBe('1900-01-01T00:00:00Z');
      }
      expect(text).toMatch(/^\{\n {2}"@id": /);
    }
    const custom = { ...commit.leaves[0]!, body: '{"exactly":"this"}' };
    expect(leafBody({ commits: [{ ...commit, leaves: [custom] }] }, custom, origin)).toBe('{"exactly":"this"}');
  });

  it('appendCommits grows the catalog after its last commit, deterministically', () => {
    const grown = generateCatalog({ commits: 20, seed: 3, deleteRatio: 0.3 });
    const again = generateCatalog({ commits: 20, seed: 3, deleteRatio: 0.3 });
    const last = ticks(grown.commits.at(-1)!.timestamp);
    const added = appendCommits(grown, 30, 99);
    expect(appendCommits(again, 30, 99)).toEqual(added);
    expect(grown.commits).toHaveLength(50);
    expect(grown.commits.slice(20)).toEqual(added);
    expect(ticks(added[0]!.timestamp)).toBeGreaterThan(last);
    const paths = grown.commits.flatMap((c) => c.leaves.map((l) => l.path));
    expect(new Set(paths).size).toBe(paths.length);
  });
});

describe('CatalogReplica serving a generated catalog', () => {
  let catalog: GeneratedCatalog;
  let replica: CatalogReplica;

  beforeAll(async () => {
    catalog = generateCatalog({ commits: 60, seed: 5, sameMillisecondPairs: 3, trimTrailingZeros: true, deleteRatio: 0.2, semver2Ratio: 0.2 });
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
    expect([error.code, error.cause?.code]).toEqual(expect.arrayContaining([expect.stringMatching(/ECONNRESET|UND_ERR_SOCKET/)]));
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

    replica.overrideBody('/page2.json', JSON.stringify({ items: 'not an array', count: '3' }), { contentType: 'text/html', times: 1 });
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
    expect(replica.requests[0]).toMatchObject({ method: 'GET', path: '/v3/catalog0/index.json', headers: { 'x-test': 'one' } });
    expect(replica.countRequests('/v3/catalog0/index.json')).toBe(2);
    expect(replica.countRequests('/v3/catalog0/index.json', 'HEAD')).toBe(1);
    expect(replica.countRequests(/page\d+\.json$/)).toBe(1);
    expect(replica.countRequests(replica.catalogIndexUrl)).toBe(2);
    expect(replica.countRequests((p) => p.startsWith('/v3/'))).toBe(3);
    replica.clearLog();
    expect(replica.requests).toHaveLength(0);
  });
});

describe('CatalogReplica over time', () => {
  it('answers 304 to If-None-Match and If-Modified-Since until the catalog grows', async () => {
    const catalog = generateCatalog({ commits: 10, seed: 9 });
    const replica = await CatalogReplica.start({ catalog });
    try {
      const first = await get(replica.catalogIndexUrl);
      const etag = first.headers.etag as string;
      const lastModified = first.headers['last-modified'] as string;
      expect(etag).toMatch(/^W\/".+"$/);
      expect(new Date(lastModified).getTime()).toBe(Math.floor(Date.parse(catalog.commits.at(-1)!.timestamp) / 1000) * 1000);
      expect((await get(replica.catalogIndexUrl, { 'if-none-match': etag })).status).toBe(304);
      expect((await get(replica.catalogIndexUrl, { 'if-modified-since': lastModified })).status).toBe(304);
      expect((await get(replica.catalogIndexUrl, { 'if-none-match': '"other"' })).status).toBe(200);

      const [added] = appendCommits(catalog, 1, 1);
      const second = await get(replica.catalogIndexUrl, { 'if-none-match': etag });
      expect(second.status).toBe(200);
      expect(second.headers.etag).not.toBe(etag);
      expect((JSON.parse(second.body.toString()) as Index).commitTimeStamp).toBe(added!.timestamp);
      expect((await get(replica.leafUrl(added!.leaves[0]!))).status).toBe(200);
    } finally {
      await replica.stop();
    }
  });

  it('serves an older copy of a page, then the fresh one', async () => {
    // One leaf per commit, 45 commits, pages of 10: the last page holds 5 commits.
    const catalog = generateCatalog({ commits: 45, seed: 41, leavesPerCommit: [1, 1] });
    const replica = await CatalogReplica.start({ catalog, pageSize: 10 });
    try {
      const last = replica.pagePaths().at(-1)!;
      const fresh = JSON.parse(replica.documentAt(last)) as Page;
      const onPage = [...new Set(fresh.items.map((i) => i.commitId))];
      const commitsOnPage = catalog.commits.filter((c) => onPage.includes(c.commitId));
      replica.serveStalePage(last, 1);
      replica.serveStalePage(last, 1, 2);
      const stale1 = await getJson<Page>(`${replica.origin}${last}`);
      const stale2 = await getJson<Page>(`${replica.origin}${last}`);
      const again = await getJson<Page>(`${replica.origin}${last}`);
      const expectStale = (page: Page, back: number): void => {
        const newest: GeneratedCommit = commitsOnPage.at(-1 - back)!;
        expect(page.commitTimeStamp).toBe(newest.timestamp);
        expect(page.commitId).toBe(newest.commitId);
        expect(page.items.every((i) => ticks(i.commitTimeStamp) <= ticks(newest.timestamp))).toBe(true);
        expect(page.count).toBe(fresh.count - commitsOnPage.slice(-back).reduce((n, c) => n + c.leaves.length, 0));
      };
      expectStale(stale1, 1);
      expectStale(stale2, 2);
      expect(again).toEqual(fresh);
      expect(() => replica.serveStalePage('/v3/catalog0/page999.json')).toThrow(/no page/);
      expect(() => replica.serveStalePage(last, 1, onPage.length)).toThrow(/older/);
    } finally {
      await replica.stop();
    }
  });

  it('splits commits across pages only when asked', async () => {
    const catalog = generateCatalog({ commits: 30, seed: 2, leavesPerCommit: [2, 4] });
    const replica = await CatalogReplica.start({ catalog, pageSize: 5, splitCommits: true });
    try {
      const counts = replica.pagePaths().map((p) => (JSON.parse(replica.documentAt(p)) as Page).count);
      expect(counts.slice(0, -1).every((c) => c === 5)).toBe(true);
      expect(counts.reduce((a, b) => a + b, 0)).toBe(catalog.commits.flatMap((c) => c.leaves).length);
    } finally {
      await replica.stop();
    }
  });

  it('writes leaf URLs on another origin when asked', async () => {
    const catalog = generateCatalog({ commits: 5, seed: 4 });
    const replica = await CatalogReplica.start({ catalog, leafOrigin: 'http://localhost:1/' });
    try {
      const page = JSON.parse(replica.documentAt(replica.pagePaths()[0]!)) as Page;
      expect(page.items.every((i) => i['@id'].startsWith('http://localhost:1/v3/catalog0/data/'))).toBe(true);
      expect(page['@id'].startsWith(replica.origin)).toBe(true);
    } finally {
      await replica.stop();
    }
  });

  it('ends stalled responses on stop()', async () => {
    const catalog = generateCatalog({ commits: 3, seed: 4 });
    const replica = await CatalogReplica.start({ catalog });
    const leaf = catalog.commits[0]!.leaves[0]!;
    replica.stallBody(leaf.path, 1);
    const response = await request(replica.leafUrl(leaf), { bodyTimeout: 0, headersTimeout: 0 });
    const body = response.body.arrayBuffer();
    await replica.stop();
    await expect(body).rejects.toThrow();
  });

  it('switches catalogs with setCatalog', async () => {
    const replica = await CatalogReplica.start();
    try {
      expect((await getJson<Index>(replica.catalogIndexUrl)).items).toEqual([]);
      const catalog = generateCatalog({ commits: 4, seed: 1 });
      replica.setCatalog(catalog);
      expect((await getJson<Index>(replica.catalogIndexUrl)).commitId).toBe(catalog.commits.at(-1)!.commitId);
    } finally {
      await replica.stop();
    }
  });
});

describe('CatalogReplica serving a fixture catalog', () => {
  const files = [
    'TestCatalogWithNonNormalizedDeleteIndex.json',
    'TestCatalogWithNonNormalizedDeletePage.json',
    'TestCatalogWithNonNormalizedDeleteOtherPackage100.json',
    'TestCatalogWithNonNormalizedDeleteOtherPackageDelete.json',
  ];

  it('serves each file at its @id with the base URL rewritten, otherwise byte for byte', async () => {
    const replica = await CatalogReplica.startFromFixtures(FIXTURES, 'http://tempuri.org/', { prefix: 'TestCatalogWithNonNormalizedDelete' });
    try {
      expect(replica.catalogIndexUrl).toBe(`${replica.origin}/index.json`);
      const services = await getJson<{ resources: { '@id': string; '@type': string }[] }>(replica.serviceIndexUrl);
      expect(services.resources.find((r) => r['@type'] === 'Catalog/3.0.0')!['@id']).toBe(replica.catalogIndexUrl);
      const index = await getJson<Index>(replica.catalogIndexUrl);
      expect(index.items.map((i) => i['@id'])).toEqual([`${replica.origin}/page0.json`]);
      const page = await getJson<Page>(index.items[0]!['@id']);
      expect(page.items.map((i) => i['nuget:version']).sort()).toEqual(['1.0', '1.0.0']);
      for (const item of page.items) {
        const { status, body } = await get(item['@id']);
        expect(status).toBe(200);
        const fixtureId = item['@id'].replace(`${replica.origin}/`, 'http://tempuri.org/');
        const file = files.find((f) => (JSON.parse(readFileSync(join(FIXTURES, f), 'utf8')) as { '@id': string })['@id'] === fixtureId)!;
        const expected = readFileSync(join(FIXTURES, file), 'utf8').split('http://tempuri.org/').join(`${replica.origin}/`);
        expect(body.toString('utf8')).toBe(expected);
        expect(body.includes('tempuri')).toBe(false);
      }
      expect(replica.pagePaths()).toEqual(['/page0.json']);
      expect(replica.commitsOnPage(0)).toBe(2);
    } finally {
      await replica.stop();
    }
  });

  it('keeps foreign URLs of a leaf as they are', async () => {
    const replica = await CatalogReplica.startFromFixtures(FIXTURES, 'http://tempuri.org/', { prefix: 'TestCatalogStorageWithSemVer2' });
    try {
      const leafPath = '/data/2015.10.12.10.08.54/testpackage.semver2.1.0.0-alpha.1.json';
      const { body } = await get(`${replica.origin}${leafPath}`);
      const file = readFileSync(join(FIXTURES, 'TestCatalogStorageWithSemVer2Package.json'), 'utf8');
      expect(body.toString('utf8')).toBe(file.split('http://tempuri.org/').join(`${replica.origin}/`));
      expect(body.toString()).toContain('http://example/data/');
    } finally {
      await replica.stop();
    }
  });

  it('keeps a UTF-8 byte-order mark', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'replica-bom-'));
    try {
      for (const name of files) writeFileSync(join(dir, name), readFileSync(join(FIXTURES, name)));
      const leafFile = 'TestCatalogWithNonNormalizedDeleteOtherPackageDelete.json';
      writeFileSync(join(dir, leafFile), Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), readFileSync(join(FIXTURES, leafFile))]));
      const replica = await CatalogReplica.startFromFixtures(dir, 'http://tempuri.org/', { files });
      try {
        const { body } = await get(`${replica.origin}/data/2015.10.13.06.40.07/otherpackage.1.0.json`);
        expect([...body.subarray(0, 4)]).toEqual([0xef, 0xbb, 0xbf, 0x7b]);
      } finally {
        await replica.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a directory of several catalogs unless one is selected', async () => {
    await expect(CatalogReplica.startFromFixtures(FIXTURES, 'http://tempuri.org/')).rejects.toThrow(/both claim/);
    const selected = await CatalogReplica.startFromFixtures(FIXTURES, 'http://tempuri.org/', { files });
    await selected.stop();
    await expect(CatalogReplica.startFromFixtures(FIXTURES, 'http://example/', { files })).rejects.toThrow(/not under/);
  });
});
