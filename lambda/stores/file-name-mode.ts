/**
 * Which {@link FileNameMode} a local folder uses: found by a probe on first use, then recorded in the state
 * folder and kept, so a folder never silently changes layout.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FileNameMode } from './local-paths.js';
import { CatalogSyncError, ErrorCode } from '../contract/errors.js';

/**
 * The record of a folder's mode, in its state folder: `{"fileNames":"exact"}`, `{"fileNames":"portable"}`, or
 * `{"fileNames":"escaped"}` (recorded by versions before `portable`: upper-case letters escaped, Windows' reserved
 * names not marked).
 */
export const FILE_NAMES_RECORD = 'file-names.json';

/** A folder whose recorded mode cannot be used here, or whose record is unreadable. */
export class FileNameModeError extends CatalogSyncError {
  override readonly name = 'FileNameModeError';
  override get code(): ErrorCode {
    return ErrorCode.fileNameMode;
  }
}

/** Where a folder keeps its files, and how to write its record. */
export interface FolderLayout {
  /** The data folder. */
  readonly root: string;
  /** Its state folder, which holds the record and the probe; never holds keys. */
  readonly stateDir: string;
  /** The name of {@link stateDir} inside {@link root}. */
  readonly stateDirName: string;
  /** The file the cursors are kept in: its presence shows that an earlier catalog-sync used the folder. */
  readonly stateFile: string;
  /** For tests: take the file system as case-insensitive whatever the probe finds. */
  readonly forceCaseInsensitive?: boolean;
  /** For tests: the operating system (default `process.platform`); on `win32` a new folder is always `portable`. */
  readonly platform?: NodeJS.Platform;
  /** Writes a whole file or nothing. */
  writeAtomic(path: string, body: Buffer): Promise<void>;
}

/**
 * The folder's mode:
 * - recorded `portable`: kept on any file system (its names are correct on a case-sensitive one too);
 * - recorded `escaped` (by an earlier version): kept, its names read and written as they were made (on macOS a name
 *   like `con` is an ordinary one); on Windows it is recorded `portable` and taken as such, since no name Windows
 *   reserves could have been written there;
 * - recorded `exact`: kept, unless the folder is now on a case-insensitive file system (copied or moved
 *   there), where an error says so: its keys would overwrite each other;
 * - nothing recorded: `portable` on a case-insensitive file system or on Windows, `exact` otherwise, then recorded;
 *   but a folder an earlier catalog-sync filled with exact names (it has a snapshot folder or a state file) is
 *   an error on a case-insensitive file system, where commits may already have overwritten each other, and stays
 *   `exact` on a case-sensitive one.
 *
 * @throws {@link FileNameModeError} in the two error cases, and for a record that is not one of the three.
 */
export async function resolveFileNameMode(folder: FolderLayout): Promise<FileNameMode> {
  const recordPath = join(folder.stateDir, FILE_NAMES_RECORD);
  const recorded = await readRecord(recordPath);
  const windows = onWindows(folder);
  if (recorded === 'portable' || (recorded === 'escaped' && !windows)) return recorded;
  if (recorded === 'escaped') return writeRecord(folder, recordPath, 'portable');
  const insensitive = folder.forceCaseInsensitive === true || (await isCaseInsensitive(folder.stateDir));
  const mode = await modeOf(folder, recorded, insensitive, windows);
  return recorded === undefined ? writeRecord(folder, recordPath, mode) : mode;
}

/**
 * The folder's mode for reading, as {@link resolveFileNameMode} finds it but writing nothing: no record, no probe
 * file, no state folder (a read never writes). `undefined` when the folder does not exist (nothing to read). Whether
 * the file system is case-insensitive is told from an entry already there, looked up under its other case.
 *
 * @throws {@link FileNameModeError} as {@link resolveFileNameMode} does.
 */
export async function readFileNameMode(
  folder: Omit<FolderLayout, 'writeAtomic'>,
): Promise<{ mode: FileNameMode; settled: boolean } | undefined> {
  if (
    !(await stat(folder.root).then(
      (found) => found.isDirectory(),
      () => false,
    ))
  )
    return undefined;
  const recorded = await readRecord(join(folder.stateDir, FILE_NAMES_RECORD));
  const windows = onWindows(folder);
  // An `escaped` folder holds no name Windows reserves, so there `portable` reads it as it was written.
  if (recorded === 'portable' || recorded === 'escaped')
    return { mode: recorded === 'escaped' && !windows ? 'escaped' : 'portable', settled: true };
  const seen = folder.forceCaseInsensitive === true ? true : await seemsCaseInsensitive(folder.root);
  // Settled (kept by the caller) once recorded or once an entry told the file system apart; until then, looked for again.
  return {
    mode: await modeOf(folder, recorded, seen === true, windows),
    settled: recorded !== undefined || seen !== undefined,
  };
}

function onWindows(folder: Pick<FolderLayout, 'platform'>): boolean {
  return (folder.platform ?? process.platform) === 'win32';
}

/** The mode of a folder whose record says `recorded` (`exact` or nothing) on a file system that is `insensitive` or not. */
async function modeOf(
  folder: Omit<FolderLayout, 'writeAtomic'>,
  recorded: 'exact' | undefined,
  insensitive: boolean,
  windows: boolean,
): Promise<FileNameMode> {
  const recordPath = join(folder.stateDir, FILE_NAMES_RECORD);
  const clash =
    'where keys differing only in case (commit keys do: 001e9fzMHc3F and 001e9fzmHc3F, 26 s apart) overwrite each other';
  if (recorded === 'exact') {
    if (insensitive) {
      throw new FileNameModeError(
        `${folder.root}: this folder stores keys as exact file names (${recordPath} says "exact": it was made on a case-sensitive file system), ` +
          `but it is now on a case-insensitive one, ${clash}; move it back to a case-sensitive file system, or sync into a new folder here`,
      );
    }
    return 'exact';
  }
  const filled = await filledBefore(folder);
  if (insensitive && filled) {
    throw new FileNameModeError(
      `${folder.root}: this folder was filled by a catalog-sync that stored keys as exact file names (it has no ${recordPath}), ` +
        `and it is on a case-insensitive file system, ${clash}; some commits may be missing: sync into a new, empty folder`,
    );
  }
  return insensitive || (windows && !filled) ? 'portable' : 'exact';
}

async function writeRecord(folder: FolderLayout, recordPath: string, mode: FileNameMode): Promise<FileNameMode> {
  await folder.writeAtomic(recordPath, Buffer.from(`${JSON.stringify({ fileNames: mode })}\n`));
  return mode;
}

async function readRecord(path: string): Promise<FileNameMode | undefined> {
  let text;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let mode: unknown;
  try {
    mode = (JSON.parse(text) as { fileNames?: unknown } | null)?.fileNames;
  } catch (cause) {
    throw new FileNameModeError(
      `${path}: not JSON (${(cause as Error).message}); expected {"fileNames":"exact"}, {"fileNames":"portable"} or {"fileNames":"escaped"}`,
      { cause },
    );
  }
  if (mode !== 'exact' && mode !== 'escaped' && mode !== 'portable') {
    throw new FileNameModeError(
      `${path}: "fileNames" is ${JSON.stringify(mode) ?? 'missing'}; expected "exact", "portable" or "escaped"`,
    );
  }
  return mode;
}

/** Creates a lower-case probe file and looks for it under its upper-case name. */
export async function isCaseInsensitive(dir: string): Promise<boolean> {
  await mkdir(dir, { recursive: true });
  // Unique, so that probes of two processes at once never see each other.
  const name = `case-probe-${process.pid}-${randomBytes(6).toString('hex')}`;
  await writeFile(join(dir, name), '', { flag: 'wx' });
  try {
    await stat(join(dir, name.toUpperCase()));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  } finally {
    await rm(join(dir, name), { force: true });
  }
}

/**
 * Whether `dir`'s file system is case-insensitive, without writing: an entry of `dir` (or of a folder in it) with a
 * letter in its name, looked up under the name in its other case, is found as the same file. Undefined when no entry
 * has a letter (no two names there can differ only in case yet).
 */
async function seemsCaseInsensitive(dir: string, depth = 2): Promise<boolean | undefined> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const other = swapCase(entry.name);
    if (other === entry.name) continue;
    const [found, swapped] = await Promise.all([
      stat(join(dir, entry.name)).catch(() => undefined),
      stat(join(dir, other)).catch(() => undefined),
    ]);
    if (found === undefined) continue;
    return swapped !== undefined && swapped.ino === found.ino && swapped.dev === found.dev;
  }
  for (const entry of entries) {
    if (depth === 0 || !entry.isDirectory()) continue;
    const inside = await seemsCaseInsensitive(join(dir, entry.name), depth - 1);
    if (inside !== undefined) return inside;
  }
  return undefined;
}

function swapCase(name: string): string {
  return [...name].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');
}

/**
 * Whether an earlier catalog-sync stored something here: a state file, or a folder beside the state folder
 * (every key has a `/`, so every snapshot is in one). Files alone, like a `.DS_Store`, do not count.
 */
async function filledBefore(folder: Omit<FolderLayout, 'writeAtomic'>): Promise<boolean> {
  if (
    await stat(folder.stateFile).then(
      () => true,
      () => false,
    )
  )
    return true;
  let entries;
  try {
    entries = await readdir(folder.root, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  return entries.some((entry) => entry.isDirectory() && entry.name !== folder.stateDirName);
}
