/**
 * The id filter a mirror was synced with, kept at `{prefix}filter.json` (`{ "include": [...], "exclude": [...] }`,
 * canonical patterns) so that a run with another filter is refused: its manifests would silently mean something else
 * from that commit on. `refilter` accepts the change and records it, with the filter it replaces and the cursor it
 * applied up to in `"history"` (so `verify` judges each commit by the filter its manifest was written under); the
 * caller then tells the user what a widened filter lacks, and a refill backfill that stores it marks the change
 * `refilledAt` when it finishes ({@link markRefilled}). No record means no filter: an unfiltered mirror writes none
 * until it is given one. The record's shape is read by contract/filter-history.ts, which the view reads it with too.
 */
import { parseIdFilterRecord, storedFilterOf, wideningsOf, type IdFilterRecord } from '../contract/filter-history.js';
import { sameIdFilter, shownIdFilter, widens, type IdFilter } from '../contract/id-filter.js';
import { ErrorCode } from '../contract/errors.js';
import { SettingsError } from '../contract/settings.js';
import { formatTimestamp, MIN_TIMESTAMP, parseTimestamp, type Ticks } from '../contract/time.js';
import { filterKeyOf } from '../contract/keys.js';
import type { SnapshotStore } from '../stores/types.js';
import { readWatermarkCursor } from './watermark.js';

export type { EarlierIdFilter, IdFilterRecord } from '../contract/filter-history.js';
export { shownIdFilter } from '../contract/id-filter.js';

interface StoredHistoryEntry {
  readonly include?: readonly string[];
  readonly exclude?: readonly string[];
  readonly until?: string;
  readonly refilledAt?: string;
  readonly refilledBy?: string;
}

/** A run asked for an id filter other than the mirror's, without `refilter` (a bad setting: the CLI exits 2). */
export class IdFilterChangedError extends SettingsError {
  override get code(): ErrorCode {
    return ErrorCode.idFilterChanged;
  }
  constructor(
    setting: string,
    readonly previous: IdFilter | undefined,
    readonly requested: IdFilter | undefined,
    howToChange: string,
  ) {
    super(
      setting,
      `this mirror was synced with ${shownIdFilter(previous)}, and this run asks for ${shownIdFilter(requested)}: give the same filter, or ${howToChange} to change it from the next commit on`,
    );
  }
}

/** What {@link checkIdFilter} found. */
export interface FilterCheck {
  /** The filter was changed (with `refilter`). */
  readonly changed: boolean;
  /** The new filter may keep ids the previous one left out: history before the change lacks their leaves. */
  readonly widened: boolean;
  readonly previous: IdFilter | undefined;
  /** With `changed`: the mirror's position when it changed (the run's cursor, or the watermark): the earlier filter's `until`. */
  readonly at?: Ticks;
}

function parseRecord(value: unknown): IdFilter | undefined {
  return value === undefined ? undefined : storedFilterOf(value as Partial<IdFilter>);
}

/** The stored history as written (kept as it is when a change is appended). */
function storedHistory(value: unknown): StoredHistoryEntry[] {
  const history = (value as { history?: unknown } | undefined)?.history;
  return Array.isArray(history) ? (history as StoredHistoryEntry[]) : [];
}

/** The mirror's filter record: the filter in force and the earlier ones (none before this field existed). */
export async function readIdFilterRecord(snapshots: SnapshotStore, prefix: string): Promise<IdFilterRecord> {
  return parseIdFilterRecord(await snapshots.getJson(filterKeyOf(prefix)));
}

/**
 * Compares `requested` with the mirror's filter. A mirror with no data yet (neither this cursor nor a watermark)
 * takes any filter.
 * @throws {@link IdFilterChangedError} when they differ on a mirror with data and `refilter` is not set.
 */
export async function checkIdFilter(
  snapshots: SnapshotStore,
  prefix: string,
  requested: IdFilter | undefined,
  options: {
    /** The mirror's cursor, undefined when it has none (asked only when the filters differ). */
    readonly cursor: () => Promise<Ticks | undefined>;
    readonly refilter: boolean;
    /** The setting named in the error, e.g. `--include/--exclude`. */
    readonly setting: string;
    /** How to accept the change, e.g. `pass --refilter`. */
    readonly howToChange: string;
    /**
     * Told when the record cannot be read or written (the store does not answer): the check is then skipped, so the
     * run meets the store's failure where it always did (its summary, the setting to correct) rather than here.
     */
    readonly onUnchecked: (error: unknown) => void;
  },
): Promise<FilterCheck> {
  try {
    return await compareWithRecord(snapshots, prefix, requested, options);
  } catch (error) {
    if (error instanceof IdFilterChangedError) throw error;
    options.onUnchecked(error);
    return { changed: false, widened: false, previous: undefined };
  }
}

async function compareWithRecord(
  snapshots: SnapshotStore,
  prefix: string,
  requested: IdFilter | undefined,
  options: {
    readonly cursor: () => Promise<Ticks | undefined>;
    readonly refilter: boolean;
    readonly setting: string;
    readonly howToChange: string;
  },
): Promise<FilterCheck> {
  const stored = await snapshots.getJson(filterKeyOf(prefix));
  const recorded = stored !== undefined;
  const previous = parseRecord(stored);
  if (sameIdFilter(previous, requested)) {
    // A new mirror records its filter at once; an unfiltered one writes nothing (its manifests stay as they were).
    if (!recorded && requested !== undefined) await snapshots.putJson(filterKeyOf(prefix), requested);
    return { changed: false, widened: false, previous };
  }
  // The mirror holds data when this cursor exists, or any writer's watermark does (a backfill of a new cursor
  // name, e.g. a refill, on a mirror synced under another name and filter).
  const cursor = (await options.cursor()) ?? (await readWatermarkCursor(snapshots, prefix));
  const hasCursor = cursor !== undefined;
  if (hasCursor && !options.refilter)
    throw new IdFilterChangedError(options.setting, previous, requested, options.howToChange);
  const filter = requested ?? { include: [], exclude: [] };
  // Commits up to the cursor were written under the previous filter: recorded, so verify judges them by it.
  const history = hasCursor
    ? [
        ...storedHistory(stored),
        { include: previous?.include ?? [], exclude: previous?.exclude ?? [], until: formatTimestamp(cursor) },
      ]
    : storedHistory(stored);
  await snapshots.putJson(filterKeyOf(prefix), history.length > 0 ? { ...filter, history } : filter);
  return {
    changed: hasCursor,
    widened: hasCursor && widens(previous, requested),
    previous,
    ...(cursor === undefined ? {} : { at: cursor }),
  };
}

/** What a finished backfill stored, as {@link markRefilled} judges it. */
export interface RefillCoverage {
  readonly backfillId: string;
  /** The filter its manifests were written under (the backfill's own, held to the mirror's). */
  readonly filter: IdFilter | undefined;
  /** Where its plan started: only a backfill from the catalog's beginning rewrote every manifest up to its bound. */
  readonly start: Ticks;
  /** Its bound B: every commit up to it is stored. */
  readonly bound: Ticks;
}

/** The earliest start a plan can have: a backfill from it stored every commit up to its bound. */
const MIN_TICKS = parseTimestamp(MIN_TIMESTAMP);

/** Rounds of read-and-conditional-write before the mark is left to the next backfill (others keep writing the record). */
const MAX_MARK_ROUNDS = 5;

/**
 * After a backfill finished: marks `refilledAt` (now) and `refilledBy` on each widening change of `filter.json` that
 * it refilled: it started at the catalog's beginning (`start` at the earliest time), its bound is at or past the
 * change's `until`, and its filter keeps every id the change's new filter keeps. Every manifest up to `until` then
 * lists the leaves the change added, which the latest view waits for before it can be made whole again. Resolves
 * to the changes marked (their places in the history), none when nothing was refilled. A conditional write on
 * the record read (another writer in between: read again).
 */
export async function markRefilled(
  snapshots: SnapshotStore,
  prefix: string,
  coverage: RefillCoverage,
  now: () => Date = () => new Date(),
): Promise<number[]> {
  if (coverage.start > MIN_TICKS) return [];
  const key = filterKeyOf(prefix);
  for (let round = 0; round < MAX_MARK_ROUNDS; round++) {
    const stored = await snapshots.getTagged(key);
    if (stored === undefined) return [];
    const value = JSON.parse(stored.bytes.toString('utf8')) as { history?: StoredHistoryEntry[] };
    const marked = wideningsOf(parseIdFilterRecord(value))
      .filter(
        (change) =>
          change.refilledAt === undefined && change.until <= coverage.bound && !widens(coverage.filter, change.next),
      )
      .map((change) => change.change);
    if (marked.length === 0) return [];
    // The parsed history skips entries without `until` (none are written): its places, mapped back to the stored ones.
    const places = storedHistory(value).flatMap((entry, i) => (typeof entry?.until === 'string' ? [i] : []));
    const at = now().toISOString();
    const history = storedHistory(value).map((entry, i) =>
      marked.some((change) => places[change] === i)
        ? { ...entry, refilledAt: at, refilledBy: coverage.backfillId }
        : entry,
    );
    if (await snapshots.putJsonIf(key, { ...value, history }, stored.tag)) return marked;
  }
  return [];
}
