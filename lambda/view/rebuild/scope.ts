/**
 * What a rebuild covers when the view is stale after a widening `--refilter` (staleness.ts): the refilled changes it
 * clears, as plain JSON, so that the CLI's worker processes (and a map's children) get the same scope as the planner.
 * A whole rebuild merges, rather than keeps, a newer index of a package those changes added (upkeep may have written
 * one over the incomplete index meanwhile); `only: 'added'` folds those packages alone and leaves the cursor.
 */
import type { StaleChange } from '../../contract/view.js';
import { addedBy } from '../staleness.js';

/** A rebuild's scope (plain JSON). */
export interface RebuildScope {
  /** `added`: only the packages the refilled changes added (`view --rebuild --added`). */
  readonly only?: 'added';
  /** The widening id filter changes refilled before the rebuild started (from `filter.json`'s history). */
  readonly refilled: readonly StaleChange[];
}

/** Whether a package (its lowercased id) was added by one of the scope's refilled changes. */
export function addedByScope(scope: RebuildScope | undefined): (lowerId: string) => boolean {
  if (scope === undefined || scope.refilled.length === 0) return () => false;
  return addedBy(scope.refilled);
}
