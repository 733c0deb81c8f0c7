/**
 * What `{prefix}filter.json` records (docs/contract.md, "Id filters"), read by every wing that needs it: the filter in
 * force, and each earlier one with the last commit written under it (`until`) and, once a refill backfill has
 * rewritten the manifests up to it under a filter that keeps what the change added, when and by which backfill
 * (`refilledAt`, `refilledBy`). The sync wing writes it (sync/filter-record.ts); the view reads it to know what it
 * lacks after a widening `--refilter`.
 */
import { keepsId, widens, type IdFilter } from './id-filter.js';
import { parseTimestamp, type Ticks } from './time.js';

/** A filter the mirror had before, and the last commit written under it (the mirror's cursor when it was replaced). */
export interface EarlierIdFilter {
  /** Undefined: no filter. */
  readonly filter: IdFilter | undefined;
  readonly until: Ticks;
  /** When a refill backfill finished rewriting every manifest up to `until` under a filter keeping what the change added. */
  readonly refilledAt?: string;
  /** That backfill's id. */
  readonly refilledBy?: string;
}

/** What `filter.json` records: the filter in force, and the earlier ones, oldest first. */
export interface IdFilterRecord {
  readonly current: IdFilter | undefined;
  readonly history: readonly EarlierIdFilter[];
}

/** A stored `{ include, exclude }` as a filter (none when both are empty or absent). */
export function storedFilterOf(record: {
  readonly include?: readonly string[];
  readonly exclude?: readonly string[];
}): IdFilter | undefined {
  const include = record.include ?? [];
  const exclude = record.exclude ?? [];
  return include.length === 0 && exclude.length === 0 ? undefined : { include, exclude };
}

/** The record a `filter.json` document holds (`undefined`: no document, no filter). */
export function parseIdFilterRecord(value: unknown): IdFilterRecord {
  const history: EarlierIdFilter[] = [];
  const stored = (value as { history?: unknown } | undefined)?.history;
  for (const entry of Array.isArray(stored) ? (stored as Record<string, unknown>[]) : []) {
    if (typeof entry?.['until'] !== 'string') continue;
    const { refilledAt, refilledBy } = entry;
    history.push({
      filter: storedFilterOf(entry as { include?: string[]; exclude?: string[] }),
      until: parseTimestamp(entry['until']),
      ...(typeof refilledAt === 'string' ? { refilledAt } : {}),
      ...(typeof refilledBy === 'string' ? { refilledBy } : {}),
    });
  }
  return { current: value === undefined ? undefined : storedFilterOf(value as Partial<IdFilter>), history };
}

/** A change of filter that may keep ids the one before left out: commits up to `until` lack their leaves until refilled. */
export interface FilterWidening {
  /** Its place in `history` (0 the oldest change). */
  readonly change: number;
  readonly until: Ticks;
  readonly previous: IdFilter | undefined;
  /** The filter that replaced it (the next entry's, or the one in force). */
  readonly next: IdFilter | undefined;
  readonly refilledAt?: string;
}

/** The record's widening changes, oldest first. */
export function wideningsOf(record: IdFilterRecord): FilterWidening[] {
  const found: FilterWidening[] = [];
  record.history.forEach((entry, change) => {
    const next = change + 1 < record.history.length ? record.history[change + 1]!.filter : record.current;
    if (!widens(entry.filter, next)) return;
    found.push({
      change,
      until: entry.until,
      previous: entry.filter,
      next,
      ...(entry.refilledAt === undefined ? {} : { refilledAt: entry.refilledAt }),
    });
  });
  return found;
}

/** Whether the change from `previous` to `next` added the package `id`: the next filter keeps it, the one before did not. */
export function addedByChange(
  change: { readonly previous: IdFilter | undefined; readonly next: IdFilter | undefined },
  id: string,
): boolean {
  return keepsId(change.next, id) && !keepsId(change.previous, id);
}
