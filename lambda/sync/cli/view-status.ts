/**
 * `status`'s lines of the latest view, when the mirror has a `view.json` (the view recorded an id filter change, or a
 * rebuild that cleared one): the changes it lacks leaves for, each with what to run, or that it lacks nothing.
 * Read from the mirror alone, as `status`'s stored state is.
 */
import { parseIdFilterRecord } from '../../contract/filter-history.js';
import { filterKeyOf } from '../../contract/keys.js';
import {
  parseViewState,
  staleLine,
  VIEW_CONSUMER,
  viewStateKeyOf,
  withRefills,
  type StaleChangeRefill,
  type ViewState,
} from '../../contract/view.js';
import type { SnapshotStore } from '../../stores/types.js';

/** The latest view as `status --json` shows it. */
export interface ViewStatus {
  /** The id filter changes the view lacks leaves for, each with its refill when done; empty: it lacks nothing. */
  readonly stale: readonly StaleChangeRefill[];
  /** The last rebuild that cleared a change. */
  readonly rebuilt: ViewState['rebuilt'] | null;
}

/** The view's status, or null when the mirror has no `view.json`. */
export async function readViewStatus(snapshots: SnapshotStore, prefix: string): Promise<ViewStatus | null> {
  const state = parseViewState(await snapshots.getJson(viewStateKeyOf(prefix)));
  if (state === undefined) return null;
  const record = parseIdFilterRecord(await snapshots.getJson(filterKeyOf(prefix)));
  return { stale: withRefills(state, record), rebuilt: state.rebuilt ?? null };
}

/** Its lines. */
export function describeViewStatus(view: ViewStatus): string {
  if (view.stale.length === 0)
    return `view ${VIEW_CONSUMER}: lacks no package an id filter change added${view.rebuilt ? ` (rebuilt ${view.rebuilt.at})` : ''}`;
  return view.stale.map((change) => staleLine(VIEW_CONSUMER, change)).join('\n');
}
