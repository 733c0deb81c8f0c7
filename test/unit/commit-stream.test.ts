/**
 * Slice planning: commits come out whole and in order, however the pages are cut and listed. The chaos suite
 * found the case of two pages sharing their newest commit (one commit split across them), listed so that the
 * later page sorts first by URL (`page10.json` < `page9.json`): a commit cut across the two pages before them
 * was released incomplete. These tests pin that down, then check every cut of random catalogs.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CatalogClient } from '../../lambda/catalog/catalog-client.js';
import type { CatalogIndex, CatalogIndexEntry, CatalogPage, PageItem } from '../../lambda/catalog/index.js';
import { InvalidDocumentError } from '../../lambda/catalog/errors.js';
import { commitsAfter } from '../../lambda/sync/commit-stream.js';

interface FakeCommit {
  ticks: bigint;
  leaves: number;
}

/** A catalog cut into pages of `pageSize` leaves, commits split across pages, served by a fake client. */
function fakeCatalog(commits: FakeCommit[], pageSize: number, url: (n: number) => string) {
  const items: PageItem[] = commits.flatMap((commit, c) =>
    Array.from({ length: commit.leaves }, (_, l) => ({
      url: `https://x/c${c}/l${l}.json`,
      type: 'PackageDetails' as const,
      commitId: `commit-${c}`,
      commitTimeStamp: String(commit.ticks),
      commitTicks: commit.ticks,
      id: `P${c}.${l}`,
      version: '1.0.0',
    })),
  );
  const pages = new Map<string, CatalogPage>();
  const entries: CatalogIndexEntry[] = [];
  for (let start = 0, n = 0; start < items.length; start += pageSize, n++) {
    const pageItems = items.slice(start, start + pageSize);
    const newest = pageItems.at(-1)!;
    pages.set(url(n), {
      commitId: newest.commitId,
      commitTimeStamp: newest.commitTimeStamp,
      commitTicks: newest.commitTicks,
      items: [...pageItems].reverse(),
    });
    entries.push({
      url: url(n),
      commitId: newest.commitId,
      commitTimeStamp: newest.commitTimeStamp,
      commitTicks: newest.commitTicks,
      count: pageItems.length,
    });
  }
  const last = commits.at(-1)!;
  const index: CatalogIndex = {
    commitId: 'head',
    commitTimeStamp: String(last.ticks),
    commitTicks: last.ticks,
    items: entries.reverse(),
  };
  const client = { getPage: async (entry: CatalogIndexEntry) => pages.get(entry.url)! } as unknown as CatalogClient;
  return { index, client };
}

async function collect(commits: FakeCommit[], pageSize: number, url: (n: number) => string, cursor = 0n) {
  const { index, client } = fakeCatalog(commits, pageSize, url);
  const out: { ticks: bigint; size: number }[] = [];
  for await (const commit of commitsAfter(client, index, cursor, index.commitTicks))
    out.push({ ticks: commit.ticks, size: commit.items.length });
  return out;
}

describe('commitsAfter', () => {
  it('waits for every page that shares a newest commit before releasing anything older', async () => {
    // Pages of 2 leaves: [S S] [S T] [T T]. The last two both end at T, and 'page10' sorts before 'page9'.
    const commits = [
      { ticks: 10n, leaves: 3 },
      { ticks: 20n, leaves: 3 },
    ];
    const url = (n: number) => `https://x/page${[8, 9, 10][n]}.json`;
    expect(await collect(commits, 2, url)).toEqual([
      { ticks: 10n, size: 3 },
      { ticks: 20n, size: 3 },
    ]);
  });

  it('property: every commit comes out once, whole, in order, for any page size, split and URL order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 0, max: 1_000 }),
        fc.integer({ min: 0, max: 30 }),
        async (sizes, pageSize, salt, cursorAt) => {
          const commits = sizes.map((leaves, i) => ({ ticks: BigInt((i + 1) * 100), leaves }));
          // URLs in an arbitrary order unrelated to time.
          const url = (n: number) => `https://x/p${(n * 7919 + salt) % 10_007}-${n}.json`;
          const cursor = cursorAt < commits.length ? commits[cursorAt]!.ticks : 0n;
          const expected = commits.filter((c) => c.ticks > cursor).map((c) => ({ ticks: c.ticks, size: c.leaves }));
          expect(await collect(commits, pageSize, url, cursor)).toEqual(expected);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('commitsAfter: what the follower watches for (issue 30, item 6)', () => {
  const url = (n: number) => `https://x/page${n}.json`;
  const commits = [
    { ticks: 10n, leaves: 2 },
    { ticks: 20n, leaves: 3 },
    { ticks: 30n, leaves: 1 },
  ];

  it('a commit later than notAfter is an error naming it and its page, after every earlier commit', async () => {
    const { index, client } = fakeCatalog(commits, 10, url);
    const yielded: bigint[] = [];
    const error = await (async () => {
      for await (const commit of commitsAfter(client, index, 0n, index.commitTicks, {}, { notAfter: () => 25n }))
        yielded.push(commit.ticks);
    })().catch((e: unknown) => e);
    expect(yielded).toEqual([10n, 20n]);
    expect(error).toBeInstanceOf(InvalidDocumentError);
    expect((error as InvalidDocumentError).url).toBe('https://x/page0.json');
    expect((error as Error).message).toContain("(commit-2) is dated more than 15 minutes after this machine's clock");
  });

  it('tells each commit at or before the cursor once, with its page; takes only those after it', async () => {
    const { index, client } = fakeCatalog(commits, 10, url);
    const behind: { ticks: bigint; commitId: string; pageUrl: string }[] = [];
    const yielded: bigint[] = [];
    for await (const commit of commitsAfter(
      client,
      index,
      20n,
      index.commitTicks,
      {},
      { onBehindCursor: (c) => behind.push(c) },
    ))
      yielded.push(commit.ticks);
    expect(yielded).toEqual([30n]);
    expect(behind.sort((a, b) => Number(a.ticks - b.ticks))).toEqual([
      { ticks: 10n, commitId: 'commit-0', pageUrl: 'https://x/page0.json' },
      { ticks: 20n, commitId: 'commit-1', pageUrl: 'https://x/page0.json' },
    ]);
  });
});
