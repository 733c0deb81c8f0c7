import { RANGE_PAGE_BYTES, type BackfillPage, type BackfillRange } from '../contract/backfill.js';
import type { CatalogIndex, CatalogIndexEntry } from '../catalog/index.js';
import { formatTimestamp, type Ticks } from '../contract/time.js';

/**
 * Cuts the pages of a catalog index into the ranges of a backfill of the commits in (start, bound].
 *
 * Pages are sorted by (newest commit, url). A range owns the pages whose newest commit is in its (lo, hi]; pages
 * that share a newest commit are never separated; a range is closed once its pages' counts reach `rangeLeaves`,
 * or its pages take `maxPageBytes` as JSON (so that every range item fits a Step Functions batch, whatever the
 * feed's page sizes), its `hi` being its last page's newest commit; the last range's `hi` is `bound`. Each range also lists its
 * lookahead: the pages whose newest commit is the smallest one after `hi` (a commit split across pages, or a
 * bound between two pages' newest commits, continues there). Ranges are contiguous: range 0's `lo` is `start`,
 * each next `lo` the previous `hi`. Nothing when `bound` is at or before `start`.
 *
 * Pure and linear after one sort: 25,000 pages take a few milliseconds.
 */
export function cutRanges(
  index: CatalogIndex,
  start: Ticks,
  bound: Ticks,
  rangeLeaves: number,
  backfillId: string,
  maxPageBytes = RANGE_PAGE_BYTES,
): BackfillRange[] {
  if (bound <= start) return [];
  const groups = groupsAfter(index.items, start);
  const ranges: BackfillRange[] = [];
  let lo = start;
  let own: CatalogIndexEntry[] = [];
  let leaves = 0;
  let bytes = 0;
  const close = (hi: Ticks, next: number): void => {
    const lookahead = groups[next]?.pages ?? [];
    ranges.push({
      backfillId,
      n: ranges.length,
      lo: formatTimestamp(lo),
      hi: formatTimestamp(hi),
      leaves,
      pages: [...own, ...lookahead].map(toPage),
    });
    lo = hi;
    own = [];
    leaves = 0;
    bytes = 0;
  };
  let g = 0;
  for (; g < groups.length && groups[g]!.ticks <= bound; g++) {
    const group = groups[g]!;
    for (const page of group.pages) {
      own.push(page);
      leaves += page.count;
      bytes += Buffer.byteLength(JSON.stringify(toPage(page))) + 1;
    }
    const last = g + 1 >= groups.length || groups[g + 1]!.ticks > bound;
    // The last group at or before the bound is closed below, with `bound` as its hi.
    if ((leaves >= rangeLeaves || bytes >= maxPageBytes) && !last) close(group.ticks, g + 1);
  }
  // The remaining pages, or none when the bound lies between two groups right after a closed range: either way
  // the last range reaches the bound, reading on into the first group after it.
  close(bound, g);
  return ranges;
}

/** Pages whose newest commit is after `start`, grouped by newest commit, oldest first, each group by url. */
function groupsAfter(
  items: readonly CatalogIndexEntry[],
  start: Ticks,
): { ticks: Ticks; pages: CatalogIndexEntry[] }[] {
  const sorted = items
    .filter((entry) => entry.commitTicks > start)
    .sort((a, b) =>
      a.commitTicks < b.commitTicks
        ? -1
        : a.commitTicks > b.commitTicks
          ? 1
          : a.url < b.url
            ? -1
            : a.url > b.url
              ? 1
              : 0,
    );
  const groups: { ticks: Ticks; pages: CatalogIndexEntry[] }[] = [];
  for (const entry of sorted) {
    const last = groups[groups.length - 1];
    if (last !== undefined && last.ticks === entry.commitTicks) last.pages.push(entry);
    else groups.push({ ticks: entry.commitTicks, pages: [entry] });
  }
  return groups;
}

function toPage(entry: CatalogIndexEntry): BackfillPage {
  return { url: entry.url, commitId: entry.commitId, commitTimeStamp: entry.commitTimeStamp, count: entry.count };
}
