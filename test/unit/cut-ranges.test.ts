/**
 * Cutting a catalog into backfill ranges: ranges are contiguous from the start to the bound, every commit in
 * (start, B] is owned by exactly one range, and every page that holds an item of a range's commits is among the
 * range's pages (its own, then the lookahead), so the follower's commit stream over a range's pages alone yields
 * each of its commits whole. Checked on hand-made cases, then on random catalogs: shuffled index order, pages
 * sharing a newest commit, commits split across pages, bounds on and between commits.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CatalogClient } from '../../lambda/catalog/catalog-client.js';
import type { CatalogIndex, CatalogIndexEntry, CatalogPage, PageItem } from '../../lambda/catalog/index.js';
import { formatTimestamp, parseTimestamp } from '../../lambda/contract/time.js';
import type { BackfillRange } from '../../lambda/contract/backfill.js';
import { commitsAfter } from '../../lambda/sync/commit-stream.js';
import { cutRanges } from '../../lambda/backfill/cut-ranges.js';

/** 2025-01-01 in ticks, and one second: commit times are seconds after it. */
const BASE = parseTimestamp('2025-01-01T00:00:00Z');
const SECOND = 10_000_000n;
const at = (i: number): bigint => BASE + BigInt(i) * SECOND;

/** A catalog: commits (in time order, `leaves` each) cut into pages of the given sizes, index entries shuffled. */
function fakeCatalog(commitLeaves: number[], pageSizes: (n: number) => number, order: (n: number) => number) {
  const items: PageItem[] = commitLeaves.flatMap((leaves, c) =>
    Array.from({ length: leaves }, (_, l) => ({
      url: `https://x/c${c}/l${l}.json`,
      type: 'PackageDetails' as const,
      commitId: `commit-${c}`,
      commitTimeStamp: formatTimestamp(at(c + 1)),
      commitTicks: at(c + 1),
      id: `P${c}.${l}`,
      version: '1.0.0',
    })),
  );
  const pages = new Map<string, CatalogPage>();
  const entries: CatalogIndexEntry[] = [];
  for (let start = 0, n = 0; start < items.length; n++) {
    const pageItems = items.slice(start, start + pageSizes(n));
    start += pageItems.length;
    const newest = pageItems.at(-1)!;
    const url = `https://x/page${order(n)}-${n}.json`;
    pages.set(url, {
      commitId: newest.commitId,
      commitTimeStamp: newest.commitTimeStamp,
      commitTicks: newest.commitTicks,
      items: [...pageItems].reverse(),
    });
    entries.push({
      url,
      commitId: newest.commitId,
      commitTimeStamp: newest.commitTimeStamp,
      commitTicks: newest.commitTicks,
      count: pageItems.length,
    });
  }
  // Entries in an order unrelated to time.
  entries.sort((a, b) => (a.url < b.url ? -1 : 1));
  const head = items.at(-1)!;
  const index: CatalogIndex = {
    commitId: head.commitId,
    commitTimeStamp: head.commitTimeStamp,
    commitTicks: head.commitTicks,
    items: entries,
  };
  const client = { getPage: async (entry: CatalogIndexEntry) => pages.get(entry.url)! } as unknown as CatalogClient;
  return { index, client, pages };
}

/** The commits the follower's stream yields over one range's pages alone: (ticks, size). */
async function rangeCommits(client: CatalogClient, range: BackfillRange) {
  const items: CatalogIndexEntry[] = range.pages.map((page) => ({
    ...page,
    commitTicks: parseTimestamp(page.commitTimeStamp),
  }));
  const hi = parseTimestamp(range.hi);
  const index: CatalogIndex = { commitId: '', commitTimeStamp: range.hi, commitTicks: hi, items };
  const out: { ticks: bigint; size: number }[] = [];
  for await (const commit of commitsAfter(client, index, parseTimestamp(range.lo), hi))
    out.push({ ticks: commit.ticks, size: commit.items.length });
  return out;
}

describe('cutRanges', () => {
  it('closes a range once its pages reach the target, never separates pages sharing a newest commit, ends at the bound', () => {
    // Commits of 3 leaves on pages of 2: pages end at c1, c2, c2, c3, c4, c4 (split commits; pages sharing c2, c4).
    const { index } = fakeCatalog(
      [3, 3, 3, 3],
      () => 2,
      (n) => n,
    );
    const ranges = cutRanges(index, 0n, index.commitTicks, 3, 'id');
    expect(ranges.map((r) => [r.lo, r.hi, r.leaves])).toEqual([
      [formatTimestamp(0n), formatTimestamp(at(2)), 6],
      [formatTimestamp(at(2)), formatTimestamp(at(4)), 6],
    ]);
    // Range 0 owns the pages ending at c1 and c2 (both of them), and reads on into the page ending at c3.
    expect(ranges[0]!.pages.map((p) => p.commitTimeStamp)).toEqual([at(1), at(2), at(2), at(3)].map(formatTimestamp));
    expect(ranges[1]!.pages.map((p) => p.commitTimeStamp)).toEqual([at(3), at(4), at(4)].map(formatTimestamp));
    expect(ranges.every((r) => r.backfillId === 'id')).toBe(true);
    expect(ranges.map((r) => r.n)).toEqual([0, 1]);
  });

  it('plans nothing when the bound is at or before the start', () => {
    const { index } = fakeCatalog(
      [2, 2],
      () => 2,
      (n) => n,
    );
    expect(cutRanges(index, at(2), at(2), 10, 'id')).toEqual([]);
    expect(cutRanges(index, at(2), at(1), 10, 'id')).toEqual([]);
  });

  it('with a bound between two pages, the last range ends at the bound and reads into the next page', () => {
    // One leaf per commit, pages of 2: pages end at c2, c4, c6.
    const { index } = fakeCatalog(
      [1, 1, 1, 1, 1, 1],
      () => 2,
      (n) => n,
    );
    const bound = at(3);
    const ranges = cutRanges(index, 0n, bound, 2, 'id');
    expect(ranges.at(-1)!.hi).toBe(formatTimestamp(bound));
    expect(ranges.at(-1)!.pages.at(-1)!.commitTimeStamp).toBe(formatTimestamp(at(4)));
    // The last page at or before the bound is never closed on its own: its range reaches the bound.
    const tail = cutRanges(index, 0n, at(5) + 1n, 1, 'id');
    expect(tail.map((r) => r.hi)).toEqual([formatTimestamp(at(2)), formatTimestamp(at(5) + 1n)]);
    expect(tail[1]!.pages.map((p) => p.commitTimeStamp)).toEqual([formatTimestamp(at(4)), formatTimestamp(at(6))]);
  });

  it('property: contiguous ranges from start to B, each commit owned once, and every page it needs is listed', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 40 }),
        fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 0, max: 45 }),
        fc.integer({ min: 0, max: 45 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 12 }),
        async (commitLeaves, sizes, salt, startAt, boundAt, between, rangeLeaves) => {
          const { index, client, pages } = fakeCatalog(
            commitLeaves,
            (n) => sizes[n % sizes.length]!,
            (n) => (n * 7919 + salt) % 10_007,
          );
          const commits = commitLeaves.map((leaves, c) => ({ ticks: at(c + 1), leaves }));
          const start = startAt === 0 ? 0n : at(startAt) + (between ? 1n : 0n);
          const bound = boundAt >= commits.length ? index.commitTicks : at(boundAt) + (between ? SECOND / 2n : 0n);
          const ranges = cutRanges(index, start, bound, rangeLeaves, 'b');
          if (bound <= start) {
            expect(ranges).toEqual([]);
            return;
          }
          // Contiguous: range 0 starts at start, each next one where the previous ended, the last ends at B.
          expect(ranges[0]!.lo).toBe(formatTimestamp(start));
          for (let k = 1; k < ranges.length; k++) expect(ranges[k]!.lo).toBe(ranges[k - 1]!.hi);
          expect(ranges.at(-1)!.hi).toBe(formatTimestamp(bound));
          expect(ranges.map((r) => r.n)).toEqual(ranges.map((_r, k) => k));
          for (const commit of commits.filter((c) => c.ticks > start && c.ticks <= bound)) {
            const owners = ranges.filter(
              (r) => parseTimestamp(r.lo) < commit.ticks && commit.ticks <= parseTimestamp(r.hi),
            );
            expect(owners).toHaveLength(1);
            // Every page holding an item of the commit is among its owner's pages.
            const listed = new Set(owners[0]!.pages.map((p) => p.url));
            for (const [url, page] of pages)
              if (page.items.some((item) => item.commitTicks === commit.ticks)) expect(listed.has(url)).toBe(true);
          }
          // The follower's stream over each range's pages alone yields exactly the commits it owns, each whole.
          const yielded = [];
          for (const range of ranges) yielded.push(...(await rangeCommits(client, range)));
          const expected = commits
            .filter((c) => c.ticks > start && c.ticks <= bound)
            .map((c) => ({ ticks: c.ticks, size: c.leaves }));
          expect(yielded).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});
