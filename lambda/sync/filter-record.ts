/**
 * The id filter a mirror was synced with, kept at `{prefix}filter.json` (`{ "include": [...], "exclude": [...] }`,
 * canonical patterns) so that a run with another filter is refused: its manifests would silently mean something else
 * from that commit on. `refilter` accepts the change and records it; the caller then tells the user what a widened
 * filter lacks. No record means no filter: an unfiltered mirror writes none until it is given one.
 */
import { sameIdFilter, widens, type IdFilter } from '../contract/id-filter.js';
import { ErrorCode } from '../contract/errors.js';
import { SettingsError } from '../contract/settings.js';
import type { SnapshotStore } from '../stores/types.js';

/** The key of a mirror's filter record. */
export const filterRecordKey = (prefix: string): string => `${prefix}filter.json`;

/** `include a*, b; exclude c` or `no filter`. */
export function shownIdFilter(filter: IdFilter | undefined): string {
  if (filter === undefined) return 'no filter';
  const parts = [filter.include.length > 0 ? `include ${filter.include.join(', ')}` : '', filter.exclude.length > 0 ? `exclude ${filter.exclude.join(', ')}` : ''];
  return parts.filter((p) => p !== '').join('; ');
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
    super(setting, `this mirror was synced with ${shownIdFilter(previous)}, and this run asks for ${shownIdFilter(requested)}: give the same filter, or ${howToChange} to change it from the next commit on`);
  }
}

/** What {@link checkIdFilter} found. */
export interface FilterCheck {
  /** The filter was changed (with `refilter`). */
  readonly changed: boolean;
  /** The new filter may keep ids the previous one left out: history before the change lacks their leaves. */
  readonly widened: boolean;
  readonly previous: IdFilter | undefined;
}

function parseRecord(value: unknown): IdFilter | undefined {
  if (value === undefined) return undefined;
  const record = value as Partial<IdFilter>;
  const include = record.include ?? [];
  const exclude = record.exclude ?? [];
  return include.length === 0 && exclude.length === 0 ? undefined : { include, exclude };
}

/** The id filter the mirror under `prefix` records (undefined: none). */
export async function readIdFilter(snapshots: SnapshotStore, prefix: string): Promise<IdFilter | undefined> {
  // getJson, which every store has (the range worker's back-pressure store has no getBytes).
  return parseRecord(await snapshots.getJson(filterRecordKey(prefix)));
}

/**
 * Compares `requested` with the mirror's filter. A mirror with no cursor yet takes any filter.
 * @throws {@link IdFilterChangedError} when they differ on a mirror with data and `refilter` is not set.
 */
export async function checkIdFilter(
  snapshots: SnapshotStore,
  prefix: string,
  requested: IdFilter | undefined,
  options: {
    /** Whether the mirror has a cursor (asked only when the filters differ). */
    readonly hasCursor: () => Promise<boolean>;
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
  options: { readonly hasCursor: () => Promise<boolean>; readonly refilter: boolean; readonly setting: string; readonly howToChange: string },
): Promise<FilterCheck> {
  const stored = await snapshots.getJson(filterRecordKey(prefix));
  const recorded = stored !== undefined;
  const previous = parseRecord(stored);
  if (sameIdFilter(previous, requested)) {
    // A new mirror records its filter at once; an unfiltered one writes nothing (its manifests stay as they were).
    if (!recorded && requested !== undefined) await snapshots.putJson(filterRecordKey(prefix), requested);
    return { changed: false, widened: false, previous };
  }
  const hasCursor = await options.hasCursor();
  if (hasCursor && !options.refilter) throw new IdFilterChangedError(options.setting, previous, requested, options.howToChange);
  await snapshots.putJson(filterRecordKey(prefix), requested ?? { include: [], exclude: [] });
  return { changed: hasCursor, widened: hasCursor && widens(previous, requested), previous };
}
