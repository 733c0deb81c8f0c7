/**
 * Whether the latest view lacks leaves after a widening `--refilter` (issue 32): the view's cursor is past the
 * commits the refill backfill rewrites, so upkeep never reads their new manifests, and the packages the new filter
 * adds would get indexes built from later commits only, without a sign. So the view looks at `filter.json`'s history
 * each run: a widening it has not looked at yet is recorded in `view.json` as stale, and stays so, in the run
 * summary, `status` and the Lambda's `ViewStale` metric, until a rebuild that read the refilled manifests clears it
 * (stale-rebuild.ts). Conservative: a view that has read nothing yet, of a change already refilled, reads the
 * rewritten manifests and is not stale; any other widening is, whatever the view's cursor.
 */
import { readConsumerCursor } from '../consumer/consumer-cursors.js';
import type { Mirror } from '../consumer/mirror.js';
import type { CursorStore } from '../stores/types.js';
import { addedByChange, parseIdFilterRecord, wideningsOf, type IdFilterRecord } from '../contract/filter-history.js';
import type { IdFilter } from '../contract/id-filter.js';
import { filterKeyOf } from '../contract/keys.js';
import { formatTimestamp } from '../contract/time.js';
import {
  withRefills,
  type StaleChange,
  type StaleChangeRefill,
  type StoredIdFilter,
  type ViewState,
} from '../contract/view.js';
import { ViewError } from './errors.js';
import type { ViewDocuments } from './view-documents.js';
import { updateViewState } from './view-state.js';

/** A stale change as a run reports it, with its refill (`refilledAt`) when the refill backfill has finished. */
export type ViewStaleness = StaleChangeRefill;

/** A filter as `view.json` stores it. */
function stored(filter: IdFilter | undefined): StoredIdFilter | null {
  return filter === undefined ? null : { include: filter.include, exclude: filter.exclude };
}

/** A filter `view.json` stored. */
export function filterOfStored(filter: StoredIdFilter | null): IdFilter | undefined {
  return filter === null ? undefined : filter;
}

/**
 * The state after the view looked at `record`: each widening at or past `historySeen` recorded stale (since `now`),
 * unless the view has read nothing yet (`hasRead` false) and the change is refilled already.
 */
export function lookAtFilterHistory(
  state: ViewState | undefined,
  record: IdFilterRecord,
  hasRead: boolean,
  now: string,
): ViewState {
  const seen = state?.historySeen ?? 0;
  const stale = [...(state?.stale ?? [])];
  for (const widening of wideningsOf(record)) {
    if (widening.change < seen || (!hasRead && widening.refilledAt !== undefined)) continue;
    stale.push({
      change: widening.change,
      until: formatTimestamp(widening.until),
      previous: stored(widening.previous),
      next: stored(widening.next),
      since: now,
    });
  }
  return { ...state, historySeen: Math.max(seen, record.history.length), stale };
}

/** Whether a package (its lowercased id) was added by one of `changes`: its index may lack versions until rebuilt. */
export function addedBy(changes: readonly StaleChange[]): (lowerId: string) => boolean {
  const filters = changes.map((change) => ({
    previous: filterOfStored(change.previous),
    next: filterOfStored(change.next),
  }));
  return (lowerId) => filters.some((change) => addedByChange(change, lowerId));
}

/** The mirror's `filter.json` (no document: no filter, no history). */
export async function readFilterRecord(mirror: Mirror): Promise<IdFilterRecord> {
  const key = filterKeyOf(mirror.prefix);
  const bytes = await mirror.store.getBytes(key);
  if (bytes === undefined) return parseIdFilterRecord(undefined);
  try {
    return parseIdFilterRecord(JSON.parse(bytes.toString('utf8')));
  } catch (cause) {
    throw new ViewError(
      `${mirror.where} ${key}: not the id filter record (JSON with "include", "exclude", "history")`,
      {
        cause,
      },
    );
  }
}

/** What {@link checkStaleness} needs. */
export interface StalenessTarget {
  readonly documents: ViewDocuments;
  readonly prefix: string;
  readonly mirror: Mirror;
  /** Whether the view has applied any commit yet (its cursor exists). */
  readonly hasRead: () => Promise<boolean>;
}

/**
 * Looks at the mirror's filter history (one GET of `filter.json`; with a history, `view.json` too, written when a
 * change is new to the view) and resolves to the view's stale changes, with their refills, and the record read.
 */
export async function checkStaleness(
  target: StalenessTarget,
  now: () => Date = () => new Date(),
): Promise<{ readonly stale: ViewStaleness[]; readonly record: IdFilterRecord; readonly state: ViewState }> {
  const record = await readFilterRecord(target.mirror);
  // Most mirrors never change their filter: nothing to look at, nothing stale, no view.json.
  if (record.history.length === 0) return { stale: [], record, state: { historySeen: 0, stale: [] } };
  const hasRead = wideningsOf(record).some((change) => change.refilledAt !== undefined) ? await target.hasRead() : true;
  const at = now().toISOString();
  const state = await updateViewState(target.documents, target.prefix, (current) =>
    lookAtFilterHistory(current, record, hasRead, at),
  );
  return { stale: withRefills(state, record), record, state };
}

/**
 * {@link checkStaleness} before a run's first batch, again at most every `everyMs` while it goes on (`view --follow`
 * runs for days; a `--refilter` may come meanwhile), and at its end if it took no batch: `stale` is what the last look
 * found, and `onStale` hears of each change of it.
 */
export class StalenessWatch {
  stale: ViewStaleness[] = [];
  private lastMs = Number.NEGATIVE_INFINITY;
  private told = '[]';

  constructor(
    private readonly target: StalenessTarget,
    private readonly onStale: (stale: ViewStaleness[]) => void = () => undefined,
    private readonly everyMs = 60_000,
    private readonly nowMs: () => number = Date.now,
  ) {}

  /** Looks now. */
  async check(): Promise<ViewStaleness[]> {
    this.lastMs = this.nowMs();
    this.stale = (await checkStaleness(this.target)).stale;
    const shown = JSON.stringify(this.stale);
    if (shown !== this.told) {
      this.told = shown;
      this.onStale(this.stale);
    }
    return this.stale;
  }

  /** Looks when it never did, or the last look is `everyMs` old. */
  async checkIfDue(): Promise<void> {
    if (this.nowMs() - this.lastMs >= this.everyMs) await this.check();
  }
}

/** Whether the view consumer `name` of `mirror` has applied any commit yet (its cursor exists). */
export function hasReadOf(cursors: CursorStore, mirror: Mirror, name: string): () => Promise<boolean> {
  return async () => (await readConsumerCursor(cursors, mirror, name)) !== undefined;
}

/** The watch of upkeep (`keepView`) of the consumer `name` over `options.mirror`. */
export function viewStalenessWatch(
  target: { readonly documents: ViewDocuments; readonly prefix: string },
  options: {
    readonly mirror: Mirror;
    readonly cursors: CursorStore;
    readonly onStale?: (stale: ViewStaleness[]) => void;
  },
  name: string,
): StalenessWatch {
  return new StalenessWatch(
    {
      documents: target.documents,
      prefix: target.prefix,
      mirror: options.mirror,
      hasRead: hasReadOf(options.cursors, options.mirror, name),
    },
    options.onStale,
  );
}
