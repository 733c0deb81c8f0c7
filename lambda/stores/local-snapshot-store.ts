import { createHash } from 'node:crypto';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { MAX_FILE_NAME_BYTES } from '../contract/identity.js';
import type { AtomicFileWriter, StagedFile } from './atomic-file.js';
import { readFileNameMode, resolveFileNameMode } from './file-name-mode.js';
import { type LocalFolder, readTextIfExists, STATE_DIR } from './local-folder.js';
import { fileNamesOf, segmentOfFileName, type FileNameMode } from './local-paths.js';
import { LocalStateError } from './local-state-error.js';
import type { SnapshotReader, SnapshotStore, TaggedBytes } from './types.js';

/** For tests only: `caseInsensitive` takes the file system as case-insensitive whatever the probe finds. */
export interface LocalSnapshotStoreOptions {
  readonly caseInsensitive?: boolean;
}

/**
 * Snapshots, manifests and quarantine records as files of a local folder, with the S3 key layout: each `/`
 * of a key is a folder. Every write is atomic and durable before it resolves (the folder's
 * {@link AtomicFileWriter}), so everything a cursor covers is on disk before the cursor is written. On a
 * case-insensitive file system (and on Windows) the file names escape upper-case letters and mark the names Windows
 * reserves ({@link FileNameMode}), chosen at first use and recorded in the folder (`file-name-mode.ts`); keys are
 * always listed as the S3 keys.
 */
export class LocalSnapshotStore implements SnapshotStore, SnapshotReader {
  /** Each key segment is a file or folder name. */
  readonly maxKeySegmentBytes = MAX_FILE_NAME_BYTES;
  /** The folder itself: its named consumers' cursors are kept in it. */
  readonly location = '.';
  private readonly root: string;
  private readonly forceCaseInsensitive: boolean;
  private fileNames: Promise<FileNameMode> | undefined;
  /** The mode a read found settled (recorded, or told from an entry), writing nothing. */
  private settledToRead: FileNameMode | undefined;

  constructor(
    private readonly folder: LocalFolder,
    options: LocalSnapshotStoreOptions = {},
  ) {
    this.root = folder.root;
    this.forceCaseInsensitive = options.caseInsensitive === true;
  }

  async putLeaf(key: string, body: Buffer): Promise<void> {
    await this.folder.writer.write(this.pathOf(key, await this.fileNameMode()), body);
  }

  /** Stores a body that arrives in pieces (the private feed's packages): see {@link AtomicFileWriter.write}. */
  async putStream(key: string, source: AsyncIterable<Uint8Array>): Promise<void> {
    await this.folder.writer.write(this.pathOf(key, await this.fileNameMode()), source);
  }

  /** The write of `key` in steps ({@link AtomicFileWriter.stage}): for a writer that places many files under one lock. */
  async stage(key: string, body: Buffer): Promise<StagedFile> {
    return this.folder.writer.stage(this.pathOf(key, await this.fileNameMode()), body);
  }

  async putJson(key: string, value: unknown): Promise<void> {
    await this.folder.writer.write(this.pathOf(key, await this.fileNameMode()), Buffer.from(JSON.stringify(value)));
  }

  async getJson(key: string): Promise<unknown> {
    const mode = await this.fileNameModeToRead();
    if (mode === undefined) return undefined;
    const text = await readTextIfExists(this.pathOf(key, mode));
    return text === undefined ? undefined : JSON.parse(text);
  }

  async getBytes(key: string): Promise<Buffer | undefined> {
    const mode = await this.fileNameModeToRead();
    if (mode === undefined) return undefined;
    try {
      return await readFile(this.pathOf(key, mode));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  /**
   * The file a key is kept in, whether or not it exists, in this folder's file names (escaped or portable ones
   * included), for a reader that streams a large object rather than holding it (`catalog-sync serve`); `undefined` when
   * the folder holds nothing yet. Writes nothing.
   *
   * @throws {@link LocalStateError} for a key no file can stand for (an empty, `.` or `..` segment).
   */
  async fileOf(key: string): Promise<string | undefined> {
    const mode = await this.fileNameModeToRead();
    return mode === undefined ? undefined : this.pathOf(key, mode);
  }

  async getTagged(key: string): Promise<TaggedBytes | undefined> {
    const bytes = await this.getBytes(key);
    return bytes === undefined ? undefined : { bytes, tag: contentTag(bytes) };
  }

  /** Read, compare and write under the folder's state lock (the cursors' lock); renamed into place only while it is still held. */
  putJsonIf(key: string, value: unknown, expected: string | undefined): Promise<boolean> {
    return this.folder.lock.hold(async (held) => {
      const current = await this.getBytes(key);
      if ((current === undefined ? undefined : contentTag(current)) !== expected) return false;
      await this.folder.writer.write(
        this.pathOf(key, await this.fileNameMode()),
        Buffer.from(JSON.stringify(value)),
        held.whileHeld,
      );
      return true;
    });
  }

  /** One `stat` a key: listing `commits/` would read the whole folder, millions of files on a full mirror. */
  async storedKeys(keys: readonly string[]): Promise<ReadonlySet<string>> {
    const mode = await this.fileNameModeToRead();
    const stored = new Set<string>();
    if (mode === undefined) return stored;
    for (const key of keys) {
      if (
        await stat(this.pathOf(key, mode)).then(
          (found) => found.isFile(),
          () => false,
        )
      )
        stored.add(key);
    }
    return stored;
  }

  async deleteKey(key: string): Promise<void> {
    const mode = await this.fileNameModeToRead();
    if (mode !== undefined) await rm(this.pathOf(key, mode), { force: true });
  }

  /**
   * Every key, as the S3 key (never the escaped file name), whatever the file names are. Only the folder of the
   * prefix's last `/` is walked: listing `commits/` never reads the leaves' folders.
   */
  async *listKeys(prefix: string, startAfter?: string): AsyncIterable<string> {
    const mode = await this.fileNameModeToRead();
    if (mode === undefined) return;
    const keys: string[] = [];
    const folderKey = prefix.slice(0, Math.max(prefix.lastIndexOf('/'), 0));
    if (folderKey === '') await this.walk(this.root, '', mode, keys);
    else await this.walk(this.pathOf(folderKey, mode), folderKey, mode, keys);
    keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (const key of keys) {
      if (key.startsWith(prefix) && (startAfter === undefined || key > startAfter)) yield key;
    }
  }

  private async walk(dir: string, relative: string, mode: FileNameMode, keys: string[]): Promise<void> {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const entry of entries) {
      if (relative === '' && entry.name === STATE_DIR) continue;
      // Temporary files live in the state folder, so every other file is a key: even an id like `x.tmp-y`.
      const segment = segmentOfFileName(entry.name, mode);
      // An escaped folder holds only names catalog-sync escaped; others (`.DS_Store`) were never keys.
      if (segment === undefined) continue;
      const key = relative === '' ? segment : `${relative}/${segment}`;
      if (entry.isDirectory()) await this.walk(join(dir, entry.name), key, mode, keys);
      else keys.push(key);
    }
  }

  /** The file of a key. Keys are made of encoded segments, so none climbs out of the root. */
  private pathOf(key: string, mode: FileNameMode): string {
    const segments = key.split('/');
    if (
      segments.some(
        (segment) =>
          segment === '' || segment === '.' || segment === '..' || segment.includes(sep) || segment.includes('\0'),
      )
    ) {
      throw new LocalStateError(
        `key ${JSON.stringify(key)} cannot be stored as a file: it has an empty, "." or ".." segment`,
      );
    }
    try {
      return join(this.root, ...fileNamesOf(key, mode));
    } catch (cause) {
      throw new LocalStateError(`${this.root}: ${(cause as Error).message}`, { cause });
    }
  }

  /** How this folder names its files: probed and recorded on first use, then kept (`file-name-mode.ts`). */
  private fileNameMode(): Promise<FileNameMode> {
    this.fileNames ??= resolveFileNameMode({
      root: this.root,
      stateDir: this.folder.stateDir,
      stateDirName: STATE_DIR,
      stateFile: this.folder.statePath,
      forceCaseInsensitive: this.forceCaseInsensitive,
      writeAtomic: (path, body) => this.folder.writer.write(path, body),
    }).catch((error: unknown) => {
      // Found again next time: a passing failure (EMFILE) must not break a long --follow for good.
      this.fileNames = undefined;
      throw error;
    });
    return this.fileNames;
  }

  /**
   * As {@link fileNameMode}, but writing nothing (a read never writes: no record, no probe, no state folder), and
   * `undefined` (nothing to read) for a folder that does not exist. A mode once settled (recorded, or told from an
   * entry) is kept; until then it is looked for again at the next read, as a writer may record it meanwhile.
   */
  private async fileNameModeToRead(): Promise<FileNameMode | undefined> {
    if (this.fileNames !== undefined) return this.fileNames;
    if (this.settledToRead !== undefined) return this.settledToRead;
    const found = await readFileNameMode({
      root: this.root,
      stateDir: this.folder.stateDir,
      stateDirName: STATE_DIR,
      stateFile: this.folder.statePath,
      forceCaseInsensitive: this.forceCaseInsensitive,
    });
    if (found?.settled) this.settledToRead = found.mode;
    return found?.mode;
  }
}

/** A folder's tag of an object: the SHA-256 of its bytes (hex). */
export function contentTag(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}
