/**
 * The test kit's catalog replica over time: conditional requests until the catalog grows, stale copies of a page,
 * commits split across pages, leaves on another origin, stop() with stalled responses, setCatalog.
 */
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { appendCommits, generateCatalog, type GeneratedCommit } from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { get, getJson, ticks, type Index, type Page } from './replica-kit.js';

describe('CatalogReplica over time', () => {
  it('answers 304 to If-None-Match and If-Modified-Since until the catalog grows', async () => {
    const catalog = generateCatalog({ commits: 10, seed: 9 });
    const replica = await CatalogReplica.start({ catalog });
    try {
      const first = await get(replica.catalogIndexUrl);
      const etag = first.headers.etag as string;
      const lastModified = first.headers['last-modified'] as string;
      expect(etag).toMatch(/^W\/".+"$/);
      expect(new Date(lastModified).getTime()).toBe(
        Math.floor(Date.parse(catalog.commits.at(-1)!.timestamp) / 1000) * 1000,
      );
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
