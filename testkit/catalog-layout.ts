/**
 * How a generated catalog's commits are cut into pages, the way nuget.org's writer does it:
 * commits are appended to the newest page until the next one would not fit, then a new page
 * starts. So the layout of any prefix of the commits is a prefix of the full layout (only its last
 * page may hold fewer commits): which is exactly what an older copy of a page looks like.
 */
import type { GeneratedCommit, GeneratedLeaf } from './catalog-generator.js';

/** One leaf with the commit it belongs to. */
export interface LaidOutLeaf {
  commit: GeneratedCommit;
  leaf: GeneratedLeaf;
}

/** One page of a layout. */
export interface LaidOutPage {
  /** 0-based page number, in time order (the served order is shuffled). */
  number: number;
  entries: LaidOutLeaf[];
  /** The newest commit on the page. */
  newest: GeneratedCommit;
  /** Index (in the catalog's commits) of the newest commit on the page. */
  newestIndex: number;
}

/**
 * Cuts `commits` into pages of at most `pageSize` leaves.
 *
 * @param splitCommits fill every page to exactly `pageSize`, splitting a commit across two pages
 *   when needed; otherwise a commit is never split (a commit larger than a page gets a page of its own).
 */
export function layoutPages(
  commits: readonly GeneratedCommit[],
  pageSize: number,
  splitCommits: boolean,
): LaidOutPage[] {
  if (!(pageSize >= 1)) throw new Error(`pageSize must be at least 1, got ${pageSize}`);
  const pages: LaidOutPage[] = [];
  let current: LaidOutPage | undefined;
  commits.forEach((commit, index) => {
    if (commit.leaves.length === 0) return;
    if (!splitCommits && current && current.entries.length + commit.leaves.length > pageSize) current = undefined;
    for (const leaf of commit.leaves) {
      if (!current || (splitCommits && current.entries.length >= pageSize)) {
        current = { number: pages.length, entries: [], newest: commit, newestIndex: index };
        pages.push(current);
      }
      current.entries.push({ commit, leaf });
      current.newest = commit;
      current.newestIndex = index;
    }
  });
  return pages;
}
