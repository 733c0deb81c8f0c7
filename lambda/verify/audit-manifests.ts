/**
 * What the audit reads in a stored manifest: which id filter it was written under (after a change of filter, a
 * commit's manifest may be an earlier filter's), and why it does not match its commit's page items.
 */
import { commitKey as commitKeyOf } from '../contract/keys.js';
import type { Ticks } from '../contract/time.js';
import { keepsId, type IdFilter } from '../contract/id-filter.js';
import type { PlannedCommit } from '../sync/commit-stream.js';
import { placeLeaf } from '../sync/layout.js';
import type { EarlierIdFilter } from '../sync/filter-record.js';

/** The filters a manifest of the commit at `ticks` may have been written under: the one in force then, and every later one. */
export function filtersAt(
  ticks: Ticks,
  history: readonly EarlierIdFilter[],
  current: IdFilter | undefined,
): (IdFilter | undefined)[] {
  const first = history.findIndex((earlier) => ticks <= earlier.until);
  return first < 0 ? [current] : [...history.slice(first).map((earlier) => earlier.filter), current];
}

/** The keys of the leaves `filter` keeps of `commit`. */
function keptKeys(
  commit: PlannedCommit,
  filter: IdFilter | undefined,
  prefix: string,
  maxKeySegmentBytes: number | undefined,
): Set<string> {
  const ck = commitKeyOf(commit.ticks);
  return new Set(
    commit.items
      .filter((item) => keepsId(filter, item.id))
      .map((item) => placeLeaf(prefix, ck, item, maxKeySegmentBytes).key),
  );
}

/**
 * The latest of `filters` whose kept leaves are exactly the manifest's (a commit with no item between two filters
 * counts as the later one's); the first (in force then) when none is.
 */
export function filterOfManifest(
  manifest: unknown,
  commit: PlannedCommit,
  filters: readonly (IdFilter | undefined)[],
  prefix: string,
  maxKeySegmentBytes: number | undefined,
): IdFilter | undefined {
  const leaves = (manifest as { leaves?: unknown } | undefined)?.leaves;
  if (!Array.isArray(leaves)) return filters[0];
  const listed = new Set(leaves.map((leaf: { key?: unknown }) => String(leaf?.key)));
  for (const filter of [...filters].reverse()) {
    const kept = keptKeys(commit, filter, prefix, maxKeySegmentBytes);
    if (kept.size === listed.size && [...kept].every((key) => listed.has(key))) return filter;
  }
  return filters[0];
}

/** Why a stored manifest does not match its commit's page items; undefined when it does. */
export function manifestProblem(
  stored: unknown,
  commit: PlannedCommit,
  prefix: string,
  maxKeySegmentBytes: number | undefined,
): string | undefined {
  const manifest = stored as { commitId?: unknown; commitTimeStamp?: unknown; leaves?: unknown } | undefined;
  if (manifest === undefined || typeof manifest !== 'object' || manifest === null) return 'not a JSON object';
  if (manifest.commitId !== commit.commitId)
    return `commitId ${JSON.stringify(manifest.commitId)}, the catalog says ${JSON.stringify(commit.commitId)}`;
  if (!Array.isArray(manifest.leaves)) return 'no "leaves" list';
  const ck = commitKeyOf(commit.ticks);
  const expected = new Set(commit.items.map((item) => placeLeaf(prefix, ck, item, maxKeySegmentBytes).key));
  const listed = new Set(manifest.leaves.map((leaf: { key?: unknown }) => String(leaf?.key)));
  const absent = [...expected].filter((key) => !listed.has(key));
  const extra = [...listed].filter((key) => !expected.has(key));
  if (absent.length > 0 || extra.length > 0)
    return `its leaves differ from the page items: ${absent.length} not listed, ${extra.length} not in the catalog`;
  return undefined;
}
