/**
 * Where the id filter (contract/id-filter.ts) meets the engine: a commit's page items are filtered before its leaves
 * are planned, so a filtered-out leaf is never fetched nor stored, while the commit itself is still taken whole (its
 * manifest written, the cursor moved over it) and its manifest says how many items the filter left out.
 */
import { keepsId, type IdFilter } from '../contract/id-filter.js';
import type { PlannedCommit } from './commit-stream.js';

/** `commit` with only the items `filter` keeps, and their count left out in `filtered`; as it is without a filter. */
export function filterCommit(commit: PlannedCommit, filter: IdFilter | undefined): PlannedCommit {
  if (filter === undefined) return commit;
  const items = commit.items.filter((item) => keepsId(filter, item.id));
  return { ...commit, items, filtered: commit.items.length - items.length };
}
