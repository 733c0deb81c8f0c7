/**
 * Every kind of bad document stops the run before the damage: the cursor stays at the last complete commit
 * before it, nothing after is marked done, and the error names the URL and what is wrong.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitKey, manifestKey } from '../../lambda/contract/keys.js';
import { formatTimestamp } from '../../lambda/contract/time.js';
import { SyncError } from '../../lambda/sync/engine.js';
import { generateCatalog, leafBody, type GeneratedCatalog } from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { commitTicks, SyncHarness } from '../../testkit/sync-harness.js';

let catalog: GeneratedCatalog;
let replica: CatalogReplica;

beforeAll(async () => {
  catalog = generateCatalog({ commits: 24, seed: 61, leavesPerCommit: [1, 3], deleteRatio: 0 });
  replica = await CatalogReplica.start({ catalog, pageSize: 8 });
});
afterAll(async () => {
  await replica.stop();
});

/** The commit whose first leaf is made bad. */
const BAD_COMMIT = 13;

function badLeaf() {
  return catalog.commits[BAD_COMMIT]!.leaves[0]!;
}

function mutatedLeaf(mutate: (json: Record<string, unknown>) => void): string {
  const json = JSON.parse(leafBody(catalog, badLeaf(), replica.origin)) as Record<string, unknown>;
  mutate(json);
  return JSON.stringify(json, null, 2);
}

async function expectStopBeforeBadLeaf(expected: RegExp): Promise<void> {
  const harness = await SyncHarness.create();
  const error = await harness.run(replica.serviceIndexUrl, { CONCURRENCY: '4' }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(SyncError);
  const message = (error as Error).message;
  expect(message).toContain(`${replica.origin}${badLeaf().path}`);
  expect(message).toMatch(expected);
  const lastGood = commitTicks(catalog, BAD_COMMIT - 1);
  expect((error as SyncError).summary).toMatchObject({
    stoppedBy: 'error',
    commits: BAD_COMMIT,
    cursorAfter: formatTimestamp(lastGood),
  });
  expect(await harness.cursor()).toBe(formatTimestamp(lastGood));
  expect(await harness.manifestsAfter(catalog, lastGood)).not.toContain(
    manifestKey('', commitKey(commitTicks(catalog, BAD_COMMIT))),
  );
  expect(await harness.strayManifests(catalog, replica.origin, lastGood)).toEqual([]);
  expect(await harness.verify(catalog, replica.origin, lastGood)).toEqual([]);
  const runs = await harness.store.listRuns('catalog-to-s3', { limit: 5 });
  expect(runs[0]).toMatchObject({ stoppedBy: 'error' });
}

describe('bad leaves', () => {
  const cases: [string, () => string | Buffer, RegExp][] = [
    ['not JSON', () => '{"@id": "x", ', /not valid JSON/],
    ['an empty body', () => '', /JSON/],
    ['a JSON array', () => '[]', /object/i],
    ['no packageHash', () => mutatedLeaf((json) => delete json.packageHash), /packageHash/],
    ['a negative packageSize', () => mutatedLeaf((json) => (json.packageSize = -1)), /packageSize/],
    [
      'no catalog:commitTimeStamp',
      () => mutatedLeaf((json) => delete json['catalog:commitTimeStamp']),
      /catalog:commitTimeStamp/,
    ],
    [
      'a commit timestamp 100 ns off the page item',
      () =>
        mutatedLeaf((json) => {
          json['catalog:commitTimeStamp'] = formatTimestamp(commitTicks(catalog, BAD_COMMIT) + 1n);
        }),
      /commitTimeStamp/,
    ],
    [
      'another commitId',
      () => mutatedLeaf((json) => (json['catalog:commitId'] = '00000000-0000-0000-0000-000000000000')),
      /commitId/,
    ],
    ['another package id', () => mutatedLeaf((json) => (json.id = 'Someone.Else')), /\bid\b/],
    [
      'the other leaf type',
      () => mutatedLeaf((json) => (json['@type'] = ['PackageDelete', 'catalog:Permalink'])),
      /type/i,
    ],
    ['an invalid published date', () => mutatedLeaf((json) => (json.published = '2017-02-30T00:00:00Z')), /published/],
  ];
  for (const [name, body, expected] of cases) {
    it(`${name}: stops before the commit`, async () => {
      replica.overrideBody(badLeaf().path, body(), { times: 1_000 });
      try {
        await expectStopBeforeBadLeaf(expected);
      } finally {
        replica.clearFaults();
      }
    });
  }

  it('a page item whose id no store can hold (1,000 characters, past S3 keys): stops before the commit, naming the page, the item and the bound', async () => {
    const path = replica.pagePaths().find((page) => replica.documentAt(page).includes(replica.leafUrl(badLeaf())))!;
    const page = JSON.parse(replica.documentAt(path)) as { items: Record<string, unknown>[] };
    page.items.find((item) => item['@id'] === replica.leafUrl(badLeaf()))!['nuget:id'] = `Too.Long.${'x'.repeat(991)}`;
    replica.overrideBody(path, JSON.stringify(page), { times: 1_000 });
    replica.clearLog();
    const pageUrl = `${replica.origin}${path}`.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    try {
      await expectStopBeforeBadLeaf(
        new RegExp(
          `${pageUrl}: items\\[\\d+\\]: package "Too\\.Long\\.x+… \\(1002 characters\\) .* cannot be stored: its key segments \\{id\\} and \\{version\\} encode to 1000 \\+ \\d+ bytes; at most 929 keep every key below 1024 bytes`,
        ),
      );
      // The page is named, and the leaf was never asked for: nothing could have been done with it.
      expect(replica.countRequests(badLeaf().path)).toBe(0);
    } finally {
      replica.clearFaults();
    }
  });

  it('a body larger than its bound', async () => {
    replica.overrideBody(badLeaf().path, Buffer.alloc(33 * 1024 * 1024, 0x20), { times: 1_000 });
    try {
      await expectStopBeforeBadLeaf(/exceeds the limit/);
    } finally {
      replica.clearFaults();
    }
  });

  it('a gzip bomb stops at the bound', async () => {
    replica.gzipBomb(badLeaf().path);
    try {
      await expectStopBeforeBadLeaf(/decompressed body exceeds the limit/);
    } finally {
      replica.clearFaults();
    }
  });
});

describe('bad pages and indexes', () => {
  it('a page that is not JSON stops the run at the last commit of the pages before it', async () => {
    const harness = await SyncHarness.create();
    const pages = replica.pagePaths();
    replica.overrideBody(pages[1]!, '<html>oops</html>', { times: 1_000 });
    try {
      const error = await harness.run(replica.serviceIndexUrl).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SyncError);
      expect((error as Error).message).toContain(`${replica.origin}${pages[1]}`);
      expect((error as Error).message).toContain('not valid JSON');
      const done = (error as SyncError).summary.commits;
      // The newest commit of page 0 could continue on page 1 (the protocol does not forbid it), so it is
      // whole only once page 1 is read: the run stops before it.
      expect(done).toBe(replica.commitsOnPage(0) - 1);
      expect(await harness.manifestsAfter(catalog, commitTicks(catalog, done - 1))).toEqual([]);
    } finally {
      replica.clearFaults();
    }
  });

  it('a page item with an impossible timestamp is named with its path', async () => {
    const harness = await SyncHarness.create();
    const pages = replica.pagePaths();
    const page = JSON.parse(replica.documentAt(pages[0]!)) as { items: Record<string, unknown>[] };
    page.items[2]!.commitTimeStamp = '2017-13-01T00:00:00Z';
    replica.overrideBody(pages[0]!, JSON.stringify(page), { times: 1_000 });
    try {
      const error = await harness.run(replica.serviceIndexUrl).catch((e: unknown) => e);
      expect((error as Error).message).toContain(`${replica.origin}${pages[0]}`);
      expect((error as Error).message).toMatch(/items\[2\]\.commitTimeStamp/);
      expect(await harness.cursor()).toBeUndefined();
      expect(await harness.count('commits/')).toBe(0);
    } finally {
      replica.clearFaults();
    }
  });

  it('an index that is not an index leaves the cursor alone', async () => {
    const harness = await SyncHarness.create();
    replica.overrideBody('/v3/catalog0/index.json', JSON.stringify({ items: [{ '@id': 'page0.json' }] }), {
      times: 1_000,
    });
    try {
      const error = await harness.run(replica.serviceIndexUrl).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SyncError);
      expect((error as Error).message).toContain(replica.catalogIndexUrl);
      expect(await harness.cursor()).toBeUndefined();
    } finally {
      replica.clearFaults();
    }
  });

  it('a service index without a Catalog/3.0.0 resource says so', async () => {
    const harness = await SyncHarness.create();
    replica.overrideBody(
      '/v3/index.json',
      JSON.stringify({
        version: '3.0.0',
        resources: [{ '@id': `${replica.origin}/x`, '@type': 'SearchQueryService' }],
      }),
      { times: 1_000 },
    );
    try {
      const error = await harness.run(replica.serviceIndexUrl).catch((e: unknown) => e);
      expect((error as Error).message).toContain(replica.serviceIndexUrl);
      expect((error as Error).message).toContain('Catalog/3.0.0');
    } finally {
      replica.clearFaults();
    }
  });
});
