/**
 * `--include` / `--exclude` / `--refilter` of `run` and `backfill`: the flags, and the check of the mirror's recorded
 * filter before the engine runs (sync/filter-record.ts), with what to do when a widened filter leaves history short.
 */
import type { Command } from 'commander';
import { formatTimestamp, idFilterFlags, SettingsError, type SyncSettings } from '../../contract/index.js';
import { checkIdFilter, shownIdFilter } from '../index.js';
import { collect, type StoreOptions } from '../../runtime/cli/options.js';

type FilterFlags = StoreOptions & { readonly refilter?: boolean };
import type { OpenStores } from '../../runtime/cli/open-stores.js';

/** Adds the id filter's flags to `command`. */
export function idFilterOptions(command: Command): Command {
  return command
    .option(
      '--include <glob>',
      'store only packages whose id matches (case-insensitive; * and ?; repeatable)',
      patternFlag('--include'),
    )
    .option(
      '--exclude <glob>',
      'never store packages whose id matches (case-insensitive; * and ?; repeatable)',
      patternFlag('--exclude'),
    )
    .option(
      '--refilter',
      'accept an id filter other than the one this mirror was synced with (from the next commit on)',
      false,
    );
}

/**
 * Collects a repeatable id-pattern flag, refusing an empty pattern: the settings drop empty list items (a blank
 * `INCLUDE_IDS` is no filter), so `--include "$UNSET"` would otherwise quietly mirror every package.
 */
function patternFlag(flag: string): (value: string, previous: string[] | undefined) => string[] {
  return (value, previous) => {
    if (value.trim() === '') {
      throw new SettingsError(
        flag,
        `${JSON.stringify(value)} is an empty pattern, which filters nothing (every package would be kept): give a pattern such as Newtonsoft.*, or leave ${flag} out`,
      );
    }
    if (value.split(',').some((part) => part.trim() === ''))
      throw new SettingsError(flag, `${JSON.stringify(value)} has an empty pattern between its commas`);
    return collect(value, previous);
  };
}

/** The store flags of `options`, to repeat in a command the user is told to run. */
function storeFlags(options: FilterFlags): string {
  const where =
    options.cursorTable !== undefined
      ? `--cursor-table ${options.cursorTable} --bucket ${options.bucket ?? ''}`
      : `--data-dir ${options.dataDir}`;
  return [`--source ${options.source ?? ''}`, where, options.prefix ? `--prefix ${options.prefix}` : '']
    .filter((f) => f !== '')
    .join(' ');
}

/**
 * Checks the run's id filter against the mirror's (exit 2 when it differs without `--refilter`); on a change, says
 * so on stderr and, when the filter widened, gives the backfill command that stores what the history lacks.
 */
export async function checkIdFilterFlags(
  stores: OpenStores,
  settings: SyncSettings,
  options: FilterFlags,
): Promise<void> {
  const check = await checkIdFilter(stores.snapshots, settings.prefix, settings.idFilter, {
    cursor: async () => (await stores.cursors.read(settings.cursorName))?.value,
    refilter: options.refilter === true,
    setting: '--include/--exclude',
    howToChange: 'pass --refilter',
    // A store that does not answer fails the run itself, with the message that names the setting to correct (the
    // record's read would only repeat it first, less clearly): nothing to add here.
    onUnchecked: () => undefined,
  });
  if (!check.changed || check.at === undefined) return;
  const at = formatTimestamp(check.at);
  process.stderr.write(
    `id filter changed from ${shownIdFilter(check.previous)} to ${shownIdFilter(settings.idFilter)} after ${at}\n`,
  );
  if (!check.widened) {
    process.stderr.write(
      'it keeps fewer packages: the leaves stored before stay; later manifests count the others in "filtered"\n',
    );
    return;
  }
  const filter = idFilterFlags(settings.idFilter);
  process.stderr.write(
    `commits up to ${at} lack the packages the new filter adds; to store them (their manifests are rewritten under the new filter):\n` +
      `  catalog-sync backfill ${storeFlags(options)} --cursor-name ${settings.cursorName}-refill --until ${at}${filter ? ` ${filter}` : ''}\n`,
  );
}
