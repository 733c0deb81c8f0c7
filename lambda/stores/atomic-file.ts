import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';

/** A temporary file older than this was left by a killed process: no write takes an hour. */
const STALE_TMP_MS = 60 * 60 * 1000;
/** Windows cannot open a folder to fsync it (EPERM); NTFS journals its metadata, so the rename is kept anyway. */
const CAN_SYNC_DIRECTORIES = process.platform !== 'win32';

/** Makes the final rename of a write: runs it, or refuses to (a lock guard: the lock must still be ours). */
export type RenameGuard = (rename: () => Promise<void>) => Promise<void>;

const unguarded: RenameGuard = (doRename) => doRename();

/**
 * Writes whole files or nothing, durably. Each write goes to a temporary file in `tmpDir` (on the same file
 * system as the targets, so the rename is atomic), is fsynced, renamed into place, and the target's folder is
 * fsynced: when {@link AtomicFileWriter.write} resolves, the file survives a power cut with all its bytes.
 * Without the file sync, a power cut after the rename can leave the new name pointing at an empty file;
 * without the folder sync, the rename itself can be lost. Folders a write creates are synced into their
 * parents too, up to `root`. A process killed mid-write leaves its temporary file in `tmpDir`, never beside
 * the targets; such leftovers are removed once an hour old.
 */
export class AtomicFileWriter {
  private readonly durable: boolean;
  private tmpReady: Promise<void> | undefined;

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

  /** Replaces `path` with `body` atomically and durably; `guard` decides, at the last moment, whether the rename happens. */
  async write(path: string, body: Buffer, guard: RenameGuard = unguarded): Promise<void> {
    await this.ensureTmpDir();
    const created = await this.ensureDir(dirname(path));
    const temporary = join(this.tmpDir, `${process.pid}-${randomBytes(6).toString('hex')}`);
    try {
      const handle = await open(temporary, 'wx');
      try {
        await handle.writeFile(body);
        if (this.durable) await handle.sync();
      } finally {
        await handle.close();
      }
      await guard(() => rename(temporary, path));
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    await this.syncFolders(dirname(path), created);
  }

  /** Appends `text` to `path` (created if missing) and syncs it, and its folder, before resolving. */
  async append(path: string, text: string): Promise<void> {
    const created = await this.ensureDir(dirname(path));
    const handle = await open(path, 'a');
    try {
      await handle.appendFile(text);
      if (this.durable) await handle.sync();
    } finally {
      await handle.close();
    }
    // The file may be new: its name must be durable too. One folder sync per append is cheap (runs are rare).
    await this.syncFolders(dirname(path), created);
  }

  /** Creates `dir` if needed; true when this call created some folder (the chain above it needs syncing). */
  private async ensureDir(dir: string): Promise<boolean> {
    return (await mkdir(dir, { recursive: true })) !== undefined;
  }

  /**
   * Syncs `dir` (it holds the new name) and, when a folder was created, every folder from its parent up to
   * {@link root}: the new folders' own names must be durable, including folders a concurrent write created
   * and has not synced yet (every write into a new folder syncs the whole chain, so none resolves early).
   */
  private async syncFolders(dir: string, created: boolean): Promise<void> {
    if (!this.durable || !CAN_SYNC_DIRECTORIES) return;
    await syncDirectory(dir);
    if (!created) return;
    const depth = relative(this.root, dir).split(sep).filter((segment) => segment !== '').length;
    for (let i = 0, folder = dir; i < depth; i++) {
      folder = dirname(folder);
      await syncDirectory(folder);
    }
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

/** fsyncs a folder, so the names created or renamed in it survive a power cut. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
