import { expandDateOnly, type RawSettings, type SettingNames } from '../../contract/index.js';

/** The CLI's names for the engine's settings: errors name the flag the user typed. */
export const FLAG_NAMES: SettingNames = {
  CATALOG_SOURCE: '--source',
  CURSOR_NAME: '--cursor-name',
  DEPENDS_ON: '--depends-on',
  SNAPSHOT_PREFIX: '--prefix',
  START_CURSOR: '--start',
  MAX_COMMITS: '--max-commits',
  MAX_LEAVES: '--max-leaves',
  CONCURRENCY: '--concurrency',
  QUARANTINE: '--quarantine',
  ALLOWED_ORIGINS: '--allow-origin',
  INCLUDE_IDS: '--include',
  EXCLUDE_IDS: '--exclude',
};

/** Options shared by every command that reaches a store. */
export interface StoreOptions {
  source?: string;
  cursorName?: string;
  dependsOn?: string[];
  cursorTable?: string;
  bucket?: string;
  prefix?: string;
  dataDir: string;
  verbose?: boolean;
}

/** The flags that name a mirror's stores ({@link StoreOptions}): what a worker process needs to open the same ones. */
export const STORE_OPTION_KEYS = [
  'source',
  'cursorName',
  'dependsOn',
  'cursorTable',
  'bucket',
  'prefix',
  'dataDir',
  'verbose',
] as const satisfies readonly (keyof StoreOptions)[];

/** The `keys` of `options` that are set (a worker process is told only what was given). */
export function pickDefined<T extends object, K extends keyof T>(options: T, keys: readonly K[]): Pick<T, K> {
  const picked: Partial<Pick<T, K>> = {};
  for (const key of keys) if (options[key] !== undefined) picked[key] = options[key];
  return picked as Pick<T, K>;
}

/** Options of `catalog-sync run`. */
export interface RunOptions extends StoreOptions {
  start?: string;
  maxCommits?: string;
  maxLeaves?: string;
  concurrency?: string;
  quarantine?: boolean;
  allowOrigin?: string[];
  include?: string[];
  exclude?: string[];
  refilter?: boolean;
  timeBudget?: string;
  until?: string;
  delay?: string;
  follow?: boolean;
  pollInterval?: string;
  json?: boolean;
  progress?: boolean;
}

/** Maps flags onto the engine's raw settings. */
export function rawSettingsOf(options: RunOptions | StoreOptions): RawSettings {
  const run = options as RunOptions;
  return {
    CATALOG_SOURCE: options.source,
    CURSOR_NAME: options.cursorName,
    DEPENDS_ON: options.dependsOn,
    SNAPSHOT_PREFIX: options.prefix,
    // A date alone is midnight UTC, as everywhere the CLI takes a time.
    START_CURSOR: run.start === undefined ? undefined : expandDateOnly(run.start),
    MAX_COMMITS: run.maxCommits,
    MAX_LEAVES: run.maxLeaves,
    CONCURRENCY: run.concurrency,
    QUARANTINE: run.quarantine,
    ALLOWED_ORIGINS: run.allowOrigin,
    INCLUDE_IDS: run.include,
    EXCLUDE_IDS: run.exclude,
  };
}

/** Collects a repeatable flag. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}
