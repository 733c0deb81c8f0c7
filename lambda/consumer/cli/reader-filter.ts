/**
 * `changes --include/--exclude`: a reader's view of the mirror by package id (the mirror is not changed, and a
 * commit is always delivered: its left-out leaves are counted in `filtered`).
 */
import { idFilterOf, idPatternProblem, keepsId, SettingsError, type IdFilter } from '../../contract/index.js';

/** The filter of `changes`' `--include` / `--exclude` (a reader's view: the mirror is not changed). */
export function readerIdFilter(include: readonly string[] = [], exclude: readonly string[] = []): IdFilter | undefined {
  for (const [flag, patterns] of [
    ['--include', include],
    ['--exclude', exclude],
  ] as const) {
    for (const pattern of patterns) {
      const problem = idPatternProblem(pattern);
      if (problem !== undefined) throw new SettingsError(flag, problem);
    }
  }
  return idFilterOf(include, exclude);
}

/**
 * `commit` with only the leaves `filter` keeps (the commit itself is always delivered: cursors move over whole
 * commits), the leaves it left out added to the commit's `filtered` count, so a reader still tells them from missing.
 */
export function filteredLeaves<
  C extends { readonly filtered?: number; readonly leaves: readonly { readonly id: string }[] },
>(commit: C, filter: IdFilter | undefined): C {
  if (filter === undefined) return commit;
  const leaves = commit.leaves.filter((leaf) => keepsId(filter, leaf.id));
  return { ...commit, filtered: (commit.filtered ?? 0) + commit.leaves.length - leaves.length, leaves };
}
