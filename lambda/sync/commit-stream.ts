import type { CatalogClient } from '../catalog/catalog-client.js';
import type { RequestBounds } from '../catalog/http-options.js';
import { InvalidDocumentError } from '../catalog/errors.js';
import type { CatalogIndex, CatalogIndexEntry, CatalogPage, PageItem } from '../catalog/index.js';
import { compareTicks, formatTimestamp, ticksFromEpochMs, ticksToEpochMs, type Ticks } from '../contract/time.js';

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
 * How far past this machine's clock a commit's time may be. A catalog's commits are timed by its writer when it
 * commits, before the page and the index that list them are published, so a commit from the future is a clock that
 * is wrong (the feed writer's or ours). Taken, it would move the cursor past every genuine commit appended after it
 * with an earlier time: the follower refuses it instead, naming it, and takes it once the clock has caught up. 15
 * minutes is the skew S3 and SigV4 allow a client's clock.
 */
export const FUTURE_COMMIT_TOLERANCE_MS = 15 * 60_000;

/** The newest commit time taken at `nowMs` (epoch ms): the clock plus {@link FUTURE_COMMIT_TOLERANCE_MS}. */
export function futureBound(nowMs: number): Ticks {
  return ticksFromEpochMs(nowMs + FUTURE_COMMIT_TOLERANCE_MS);
}

/** A commit found at or before the cursor on a page read after it. */
export interface CommitBehind {
  readonly ticks: Ticks;
  readonly commitId: string;
  readonly pageUrl: string;
}

/** What the follower watches the commit stream for, beside the commits it yields. */
export interface CommitWatch {
  /**
   * The newest commit time that may be yielded, asked as each commit is about to be (default: no bound). A commit
   * later than it is an {@link InvalidDocumentError} naming its page, thrown once every earlier commit is yielded.
   */
  readonly notAfter?: () => Ticks;
  /**
   * Told once of each commit at or before the cursor on the pages read. Most are commits taken before (a page spans
   * the cursor); one the catalog appended behind the cursor since is never taken, and only the mirror can tell
   * the two apart (behind-cursor.ts).
   */
  readonly onBehindCursor?: (commit: CommitBehind) => void;
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
  watch: CommitWatch = {},
): AsyncGenerator<PlannedCommit> {
  const entries = pagesAfter(index, cursor);
  const pending = new Map<Ticks, { commitId: string; items: PageItem[]; pageUrl: string }>();
  const behind = new Set<Ticks>();
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
      if (item.commitTicks <= cursor && watch.onBehindCursor !== undefined && !behind.has(item.commitTicks)) {
        behind.add(item.commitTicks);
        watch.onBehindCursor({ ticks: item.commitTicks, commitId: item.commitId, pageUrl: entry.url });
      }
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
    yield* release(pending, (ticks) => ticks < pageNewest, watch.notAfter);
    if (pageNewest > upper) break;
  }
  yield* release(pending, () => true, watch.notAfter);
}

function* release(
  pending: Map<Ticks, { commitId: string; items: PageItem[]; pageUrl: string }>,
  closed: (ticks: Ticks) => boolean,
  notAfter: (() => Ticks) | undefined,
): Generator<PlannedCommit> {
  const ready = [...pending.keys()].filter(closed).sort(compareTicks);
  for (const ticks of ready) {
    const { commitId, items, pageUrl } = pending.get(ticks)!;
    const bound = notAfter?.();
    if (bound !== undefined && ticks > bound) throw futureCommit(pageUrl, ticks, commitId, bound);
    pending.delete(ticks);
    yield { ticks, commitId, items };
  }
}

/** The error of a commit dated past the clock's tolerance: it names the commit, its page and both clocks. */
function futureCommit(pageUrl: string, ticks: Ticks, commitId: string, bound: Ticks): InvalidDocumentError {
  const clock = new Date(ticksToEpochMs(bound) - FUTURE_COMMIT_TOLERANCE_MS).toISOString();
  return new InvalidDocumentError(
    pageUrl,
    `commit ${formatTimestamp(ticks)} (${commitId}) is dated more than ${FUTURE_COMMIT_TOLERANCE_MS / 60_000} minutes after this machine's clock (${clock}): ` +
      `the feed's clock or this machine's is wrong. Taking it would move the cursor past every commit written later with an earlier time, so the run stops before it; it is taken once the clock is within ${FUTURE_COMMIT_TOLERANCE_MS / 60_000} minutes of it`,
  );
}
