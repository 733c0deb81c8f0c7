import type { CatalogClient } from '../catalog/catalog-client.js';
import type { RequestBounds } from '../catalog/http-client.js';
import { InvalidDocumentError } from '../catalog/errors.js';
import type { CatalogIndex, CatalogIndexEntry, CatalogPage, PageItem } from '../catalog/index.js';
import { compareTicks, formatTimestamp, type Ticks } from '../contract/time.js';

/** One catalog commit: every leaf that shares a commit timestamp. */
export interface PlannedCommit {
  readonly ticks: Ticks;
  readonly commitId: string;
  /** The page items of the commit, in no particular order (the catalog defines none). */
  readonly items: readonly PageItem[];
  /** With an id filter: how many of the commit's page items it left out (they are not in `items`). */
  readonly filtered?: number;
}

/**
 * The pages that may hold commits in (cursor, upper], oldest first. The index lists pages in no defined
 * order; a page's timestamp is the newest commit on it, so pages at or before the cursor hold nothing new.
 */
export function pagesAfter(index: CatalogIndex, cursor: Ticks): CatalogIndexEntry[] {
  return index.items
    .filter((entry) => entry.commitTicks > cursor)
    .sort((a, b) => compareTicks(a.commitTicks, b.commitTicks) || (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
}

/**
 * Yields the commits in (cursor, upper] in ascending time, each whole, fetching pages lazily (one page ahead)
 * so a bounded slice reads only the pages it needs, even from the start of a catalog of tens of thousands of
 * pages.
 *
 * A commit is yielded only when no later page can add to it: pages are ordered by their newest commit, and a
 * page after page P holds only commits at or after P's newest, so every commit older than P's newest is whole
 * once P is read; the commit at P's newest is held back until the next page is read (nuget.org never splits a
 * commit across pages, but the protocol does not promise it). Pages sharing one newest timestamp are read as a
 * group before anything older than it is released, since their order among themselves is unknown.
 */
export async function* commitsAfter(
  client: CatalogClient,
  index: CatalogIndex,
  cursor: Ticks,
  upper: Ticks,
  bounds: RequestBounds = {},
): AsyncGenerator<PlannedCommit> {
  const entries = pagesAfter(index, cursor);
  const pending = new Map<Ticks, { commitId: string; items: PageItem[]; pageUrl: string }>();
  const fetchPage = (entry: CatalogIndexEntry): Promise<CatalogPage> => {
    const promise = client.getPage(entry, bounds);
    // The prefetch may be abandoned when the slice ends; its failure is observed only if awaited.
    promise.catch(() => undefined);
    return promise;
  };
  let prefetched = entries.length > 0 ? fetchPage(entries[0]!) : undefined;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    const page = await prefetched!;
    prefetched = i + 1 < entries.length ? fetchPage(entries[i + 1]!) : undefined;
    for (const item of page.items) {
      if (item.commitTicks <= cursor || item.commitTicks > upper) continue;
      const commit = pending.get(item.commitTicks);
      if (!commit) {
        pending.set(item.commitTicks, { commitId: item.commitId, items: [item], pageUrl: entry.url });
      } else if (commit.commitId !== item.commitId) {
        throw new InvalidDocumentError(
          entry.url,
          `commit ${formatTimestamp(item.commitTicks)} has commitId ${item.commitId} here but ${commit.commitId} on ${commit.pageUrl}`,
        );
      } else {
        commit.items.push(item);
      }
    }
    // Pages that share their newest commit (one commit split across them) come in no defined order among
    // themselves: nothing is released until the last of them is read.
    const next = entries[i + 1];
    if (next !== undefined && next.commitTicks === entry.commitTicks) continue;
    const pageNewest = page.commitTicks > entry.commitTicks ? page.commitTicks : entry.commitTicks;
    yield* release(pending, (ticks) => ticks < pageNewest);
    if (pageNewest > upper) break;
  }
  yield* release(pending, () => true);
}

function* release(
  pending: Map<Ticks, { commitId: string; items: PageItem[] }>,
  closed: (ticks: Ticks) => boolean,
): Generator<PlannedCommit> {
  const ready = [...pending.keys()].filter(closed).sort(compareTicks);
  for (const ticks of ready) {
    const { commitId, items } = pending.get(ticks)!;
    pending.delete(ticks);
    yield { ticks, commitId, items };
  }
}
