import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { LocalStateError } from './local-state-error.js';

/** A temporary file older than this was left by a killed process: no write takes an hour. */
const STALE_TMP_MS = 60 * 60 * 1000;
/** Folders known durable (their names synced into their parents) that a writer remembers; older ones are forgotten. */
const KNOWN_DURABLE_FOLDERS = 4_096;
/** Windows cannot open a folder to fsync it (EPERM); NTFS journals its metadata, so the rename is kept anyway. */
const CAN_SYNC_DIRECTORIES = process.platform !== 'win32';
/**
 * A streamed body's pieces (a socket's, 16-64 KiB) are gathered up to this many bytes and written with one `writev`:
 * one threadpool round trip a MiB instead of one a piece, memory one MiB a write.
 */
const WRITE_BATCH_BYTES = 1024 * 1024;
/**
 * The start of this process's temporary files' names (its pid, and random bytes: a pid is reused after a reboot);
 * a counter ends each. Random bytes a file cost a call into OpenSSL and a getpid each (its fork check).
 */
const TMP_NAME_PREFIX = `${process.pid}-${randomBytes(6).toString('hex')}`;
let tmpNames = 0;

/** Makes the final rename of a write: runs it, or refuses to (a lock guard: the lock must still be ours). */
export type RenameGuard = (rename: () => Promise<void>) => Promise<void>;

const unguarded: RenameGuard = (doRename) => doRename();

/** A file written aside by {@link AtomicFileWriter.stage}, not yet in place. */
export interface StagedFile {
  /** Renames it into place (atomic). */
  place(): Promise<void>;
  /** Syncs the folders of its place, so the rename survives a power cut. */
  settle(): Promise<void>;
  /** Removes it, when it is not to be placed. */
  discard(): Promise<void>;
}

/**
 * Writes whole files or nothing, durably. Each write goes to a temporary file in `tmpDir` (on the same file
 * system as the targets, so the rename is atomic), is fsynced, renamed into place, and the target's folder is
 * fsynced: when {@link AtomicFileWriter.write} resolves, the file survives a power cut with all its bytes.
 * Without the file sync, a power cut after the rename can leave the new name pointing at an empty file;
 * without the folder sync, the rename itself can be lost. A folder's own name is synced into its parent too,
 * up to `root`, the first time this writer writes into it. Syncs of one folder requested while one is under way
 * are made once, together, after it (a group commit): concurrent leaves of a commit share their folders' syncs.
 * A folder this writer knows durable is not made again (no mkdir); one removed meanwhile is made again at the rename.
 * A process killed mid-write leaves its temporary file in `tmpDir`, never beside
 * the targets; such leftovers are removed once an hour old.
 */
export class AtomicFileWriter {
  private readonly durable: boolean;
  private tmpReady: Promise<void> | undefined;
  /** Folders whose names are durable in their parents, in the order they were learnt (oldest forgotten first). */
  private readonly durableFolders = new Map<string, true>();
  private readonly folderSyncs = new Map<string, CoalescedSync>();

  /**
   * @param root - the folder every target is under: folders created by a write are synced up to it.
   * @param tmpDir - where temporary files are staged, on the same file system as `root`.
   * @param options - `durable: false` skips every fsync (the benchmark's comparison only: a power cut can
   * then leave empty or missing files behind a cursor that covers them).
   */
  constructor(
    readonly root: string,
    readonly tmpDir: string,
    options: { durable?: boolean } = {},
  ) {
    this.durable = options.durable ?? true;
  }

  /**
   * Replaces `path` with `body` atomically and durably; `guard` decides, at the last moment, whether the rename
   * happens. A body that arrives in pieces (a package of up to hundreds of MB) is written to the temporary file as it
   * comes, so memory holds about a MiB of it at a time (pieces gathered into one write); its error (a failed download,
   * a hash that does not match) removes the temporary file and leaves `path` as it was.
   */
  async write(path: string, body: Buffer | AsyncIterable<Uint8Array>, guard: RenameGuard = unguarded): Promise<void> {
    const staged = await this.stage(path, body);
    try {
      await guard(() => staged.place());
    } catch (error) {
      await staged.discard();
      throw error;
    }
    await staged.settle();
  }

  /**
   * {@link write} in three steps, for a writer that places many files under one lock: the body written aside and
   * fsynced now (outside any lock); `place()` renames it into place (under the lock: a rename, microseconds);
   * `settle()` syncs its folders afterwards (a write is durable once settled); `discard()` drops a file not placed.
   */
  async stage(path: string, body: Buffer | AsyncIterable<Uint8Array>): Promise<StagedFile> {
    await this.ensureTmpDir();
    const dir = dirname(path);
    // A folder known durable exists: no mkdir (two syscalls and a round trip to the threadpool). Should another
    // process have removed it since, the rename finds it missing and `place` makes it again (placeIn).
    if (!this.durableFolders.has(dir)) await mkdir(dir, { recursive: true });
    const temporary = join(this.tmpDir, `${TMP_NAME_PREFIX}-${(tmpNames++).toString(36)}`);
    try {
      const handle = await open(temporary, 'wx');
      try {
        if (Buffer.isBuffer(body)) await handle.writeFile(body);
        else await writeBatched(handle, body);
        if (this.durable) await handle.sync();
      } finally {
        await handle.close();
      }
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    return {
      place: () => this.placeIn(temporary, path),
      settle: () => this.syncFolders(dirname(path)),
      discard: () => rm(temporary, { force: true }),
    };
  }

  /**
   * Renames `temporary` to `path`. A folder of `path` missing (removed by another process after this writer learnt it
   * durable, so `stage` made no mkdir): made again, forgotten as durable with every folder above it, so that `settle`
   * syncs them all again, and the rename retried.
   */
  private async placeIn(temporary: string, path: string): Promise<void> {
    try {
      await rename(temporary, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      const dir = dirname(path);
      for (let folder = dir; folder.length > this.root.length; folder = dirname(folder))
        this.durableFolders.delete(folder);
      await mkdir(dir, { recursive: true });
      await rename(temporary, path);
    }
  }

  /** Appends `text` to `path` (created if missing) and syncs it, and its folder, before resolving. */
  async append(path: string, text: string): Promise<void> {
    await mkdir(dirname(path), { recursive: true });
    const handle = await open(path, 'a');
    try {
      await handle.appendFile(text);
      if (this.durable) await handle.sync();
    } finally {
      await handle.close();
    }
    // The file may be new: its name must be durable too. One folder sync per append is cheap (runs are rare).
    await this.syncFolders(dirname(path));
  }

  /**
   * Syncs `dir` (it holds the new name) and, up to {@link root}, the parent of every folder on the way not yet
   * known durable. Whether this write created a folder does not matter: a concurrent write may have created
   * it and not synced it yet, and none may resolve before the names it depends on are durable.
   */
  private async syncFolders(dir: string): Promise<void> {
    if (!this.durable || !CAN_SYNC_DIRECTORIES) return;
    const unknown: string[] = [];
    const depth = relative(this.root, dir)
      .split(sep)
      .filter((segment) => segment !== '').length;
    for (let i = 0, folder = dir; i < depth && !this.durableFolders.has(folder); i++, folder = dirname(folder))
      unknown.push(folder);
    await Promise.all([dir, ...unknown.map((folder) => dirname(folder))].map((folder) => this.syncFolder(folder)));
    for (const folder of unknown) this.rememberDurable(folder);
  }

  private syncFolder(dir: string): Promise<void> {
    let sync = this.folderSyncs.get(dir);
    if (!sync) {
      sync = new CoalescedSync(dir, () => this.folderSyncs.delete(dir));
      this.folderSyncs.set(dir, sync);
    }
    return sync.request();
  }

  private rememberDurable(folder: string): void {
    this.durableFolders.set(folder, true);
    if (this.durableFolders.size > KNOWN_DURABLE_FOLDERS)
      this.durableFolders.delete(this.durableFolders.keys().next().value!);
  }

  /** Creates `tmpDir` once, and clears what killed processes left there long ago. */
  private ensureTmpDir(): Promise<void> {
    this.tmpReady ??= (async () => {
      await mkdir(this.tmpDir, { recursive: true });
      for (const name of await readdir(this.tmpDir)) {
        const file = join(this.tmpDir, name);
        const info = await stat(file).catch(() => undefined);
        if (info && Date.now() - info.mtimeMs > STALE_TMP_MS) await rm(file, { force: true });
      }
    })();
    return this.tmpReady;
  }
}

/** Writes a body that arrives in pieces, gathered into writes of about {@link WRITE_BATCH_BYTES}. */
async function writeBatched(handle: FileHandle, body: AsyncIterable<Uint8Array>): Promise<void> {
  let batch: Uint8Array[] = [];
  let bytes = 0;
  for await (const piece of body) {
    batch.push(piece);
    bytes += piece.byteLength;
    if (bytes >= WRITE_BATCH_BYTES) {
      await writeAll(handle, batch);
      batch = [];
      bytes = 0;
    }
  }
  if (bytes > 0) await writeAll(handle, batch);
}

/**
 * Writes every piece: libuv loops over short writes, but returns the count so far when one fails after some progress
 * (a full disk); the rest is written again, so the error comes from the write that makes none.
 */
async function writeAll(handle: FileHandle, pieces: Uint8Array[]): Promise<void> {
  for (let left = pieces; left.length > 0; ) {
    const { bytesWritten } = await handle.writev(left);
    // Only a write of nothing returns 0 without an error: never loop on one.
    if (bytesWritten === 0) throw new LocalStateError('a write into a temporary file made no progress');
    left = unwritten(left, bytesWritten);
  }
}

/** The part of `pieces` past its first `written` bytes. */
export function unwritten(pieces: readonly Uint8Array[], written: number): Uint8Array[] {
  let skip = written;
  let i = 0;
  while (i < pieces.length && skip >= pieces[i]!.byteLength) skip -= pieces[i++]!.byteLength;
  if (i === pieces.length) return [];
  return [pieces[i]!.subarray(skip), ...pieces.slice(i + 1)];
}

/**
 * The syncs of one folder, grouped: a request made while a sync runs is served by one more sync after it (the
 * running one may have begun before the request's change); every request made meanwhile shares that one.
 */
class CoalescedSync {
  private running: Promise<void> | undefined;
  private next: Promise<void> | undefined;

  constructor(
    private readonly dir: string,
    private readonly onIdle: () => void,
  ) {}

  request(): Promise<void> {
    if (this.next) return this.next;
    if (!this.running) return this.start();
    this.next = this.running
      .catch(() => undefined)
      .then(() => {
        this.next = undefined;
        return this.start();
      });
    return this.next;
  }

  private start(): Promise<void> {
    const running = syncDirectory(this.dir).finally(() => {
      if (this.running !== running) return;
      this.running = undefined;
      if (!this.next) this.onIdle();
    });
    this.running = running;
    return running;
  }
}

/** fsyncs a folder, so the names created or renamed in it survive a power cut. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
