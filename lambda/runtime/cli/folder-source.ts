import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { STATE_DIR } from '../../stores/local-folder.js';
import { DEFAULT_CURSOR_NAME, redactUrl } from '../../contract/index.js';

/**
 * The source each cursor of a data folder was last synced from, in the folder's state (`.catalog-sync/sources.json`,
 * `{ "<cursor name>": "<source URL>" }`): so that `status --data-dir X` compares the folder with its own source,
 * not with the default, and a run or status given another source says so. Only a URL without credentials is kept.
 */
const SOURCES_FILE = 'sources.json';

type Sources = Record<string, string>;

async function readSources(dataDir: string): Promise<Sources> {
  try {
    const parsed: unknown = JSON.parse(await readFile(join(resolve(dataDir), STATE_DIR, SOURCES_FILE), 'utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Sources) : {};
  } catch {
    // Missing or unreadable: nothing remembered (it is a convenience, not state a run depends on).
    return {};
  }
}

/** The source `cursorName` of the folder was last synced from, if remembered. */
async function rememberedSource(dataDir: string, cursorName: string): Promise<string | undefined> {
  const source = (await readSources(dataDir))[cursorName];
  return typeof source === 'string' && source !== '' ? source : undefined;
}

/** Records that `cursorName` of the folder is synced from `source` (a run or backfill into it calls this). */
export async function rememberSource(dataDir: string, cursorName: string, source: string): Promise<void> {
  if (redactUrl(source) !== source) return;
  const sources = await readSources(dataDir);
  if (sources[cursorName] === source) return;
  const stateDir = join(resolve(dataDir), STATE_DIR);
  await mkdir(stateDir, { recursive: true });
  const temporary = join(stateDir, `${SOURCES_FILE}.${process.pid}.tmp`);
  await writeFile(temporary, `${JSON.stringify({ ...sources, [cursorName]: source }, null, 1)}\n`);
  await rename(temporary, join(stateDir, SOURCES_FILE));
}

/** The warning when a command is given a source other than the one the folder's cursor was synced from. */
function otherSourceWarning(cursorName: string, given: string, remembered: string): string {
  return `catalog-sync: warning: --source ${redactUrl(given)} is not the source cursor ${cursorName} of this folder was synced from (${redactUrl(remembered)}): its cursor is a position in that catalog\n`;
}

/** The options of a command that reads a catalog into, or against, a store. */
interface SourcedOptions {
  readonly dataDir: string;
  readonly cursorTable?: string;
  readonly cursorName?: string;
  readonly source?: string;
}

/**
 * A folder's command without `--source` reads the catalog the folder's cursor was synced from, not nuget.org: its
 * cursor is a position in that catalog (so `run`, `backfill`, `status`, `verify`, `retry-quarantine` and `feed` of a
 * folder synced from a replica keep to the replica). A `--source` given on the command line wins, with a warning when
 * it differs (an AWS store remembers nothing: its source is the deployment's setting).
 */
export async function withFolderSource<T extends SourcedOptions>(options: T, command: Command): Promise<T> {
  if (options.cursorTable !== undefined) return options;
  const cursorName = options.cursorName ?? DEFAULT_CURSOR_NAME;
  const remembered = await rememberedSource(options.dataDir, cursorName);
  if (remembered === undefined) return options;
  if (command.getOptionValueSource('source') !== 'cli') return { ...options, source: remembered };
  if (options.source !== remembered)
    process.stderr.write(otherSourceWarning(cursorName, options.source ?? '', remembered));
  return options;
}
