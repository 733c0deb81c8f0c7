/** The latest view's fixed names (contract.md, "The latest view"), shared by the view and the CDK constructs. */
import type { IdFilterRecord } from './filter-history.js';
import { shownIdFilter } from './id-filter.js';

/** The built-in view consumer's cursor name (`pk` of its cursor item). */
export const VIEW_CONSUMER = 'view-latest';

/** The key pattern of the view's documents under the sync's prefix: `packages/{id}/index.json`. */
export const VIEW_KEYS = 'packages/*';

/**
 * The key, under the prefix, the view's conditional-PUT check writes (docs/contract.md, "What an S3-compatible server
 * must guarantee"): beside `view.json`, outside `packages/`, so that a reader listing the indexes never meets it.
 */
export const VIEW_PROBE_KEY = 'view-conditional-put-check';

/** The key, under the prefix, of what the latest view knows of its own completeness: `view.json`. */
export const VIEW_STATE_KEY = 'view.json';

/** `{prefix}view.json`. */
export function viewStateKeyOf(prefix: string): string {
  return `${prefix}${VIEW_STATE_KEY}`;
}

/** A stored id filter in `view.json`: `null` for none. */
export interface StoredIdFilter {
  readonly include: readonly string[];
  readonly exclude: readonly string[];
}

/**
 * A widening `--refilter` the view has not been rebuilt for: the indexes of the ids `next` keeps and `previous` did
 * not may lack every version whose latest leaf is at or before `until`.
 */
export interface StaleChange {
  /** The change's place in `filter.json`'s `history`. */
  readonly change: number;
  /** The last commit written under `previous` (ISO 8601, 7 digits). */
  readonly until: string;
  readonly previous: StoredIdFilter | null;
  readonly next: StoredIdFilter | null;
  /** When the view found it (ISO 8601). */
  readonly since: string;
}

/** What `{prefix}view.json` holds (docs/contract.md, "The latest view"). */
export interface ViewState {
  /** The entries of `filter.json`'s `history` the view has looked at: a change at or past it is new to the view. */
  readonly historySeen: number;
  /** The changes the view lacks leaves for, oldest first; empty: the view is complete. */
  readonly stale: readonly StaleChange[];
  /** The last rebuild that finished: when, up to which commit, `added` for one of the ids a change added only. */
  readonly rebuilt?: { readonly at: string; readonly upTo: string | null; readonly only?: 'added' };
}

/** The state a `view.json` document holds; a missing or unreadable one is none (the view then looks at every change). */
export function parseViewState(value: unknown): ViewState | undefined {
  const state = value as Partial<ViewState> | null | undefined;
  if (typeof state !== 'object' || state === null) return undefined;
  if (typeof state.historySeen !== 'number' || !Array.isArray(state.stale)) return undefined;
  const stale = state.stale.filter(
    (entry): entry is StaleChange =>
      typeof entry === 'object' &&
      entry !== null &&
      typeof entry.change === 'number' &&
      typeof entry.until === 'string',
  );
  return { ...state, historySeen: state.historySeen, stale } as ViewState;
}

/** A stale change, with its refill when done. */
export type StaleChangeRefill = StaleChange & { readonly refilledAt?: string };

/** The stale changes of `state`, each with its refill from `record` (`filter.json`). */
export function withRefills(state: ViewState, record: IdFilterRecord): StaleChangeRefill[] {
  return state.stale.map((change) => {
    const refilledAt = record.history[change.change]?.refilledAt;
    return refilledAt === undefined ? change : { ...change, refilledAt };
  });
}

/**
 * What a stale change means, in one line for the consumer `name`: the packages concerned, the commits, and what to
 * run (the view's commands and Lambda, and `status`, say it alike).
 */
export function staleLine(name: string, change: StaleChangeRefill): string {
  const previous = shownIdFilter(change.previous ?? undefined);
  const next = shownIdFilter(change.next ?? undefined);
  const what = `view ${name}: STALE since ${change.since}: packages kept by ${next} but not by ${previous} lack their versions up to ${change.until} (id filter change ${change.change}, --refilter)`;
  return change.refilledAt === undefined
    ? `${what}; store them first with the refill backfill --refilter printed (catalog-sync backfill … --cursor-name <cursor>-refill --until ${change.until} …), then run \`catalog-sync view --rebuild --added\``
    : `${what}; their refill finished at ${change.refilledAt}: run \`catalog-sync view --rebuild --added\``;
}
