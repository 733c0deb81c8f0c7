import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AtomicFileWriter } from './atomic-file.js';
import { LocalLock, type LocalLockOptions, type LockEvent } from './local-lock.js';

/** Where the embedded default keeps its cursors and run log, inside the data folder. */
export const STATE_DIR = '.catalog-sync';
/** The cursors of the folder, in its state folder. */
const STATE_FILE = 'state.json';
/** Temporary files of atomic writes, inside the state folder. */
const TMP_DIR = 'tmp';

/** Settings of a {@link LocalFolder}; all are for tests and the benchmark. */
export interface LocalFolderOptions {
  /** For tests only: awaited at each {@link LockEvent}. */
  readonly onLockEvent?: (event: LockEvent) => Promise<void> | void;
  /** For tests only: gives the lock a clock and a heartbeat driven by hand. */
  readonly lock?: Omit<LocalLockOptions, 'onLockEvent'>;
  /** `false` skips every fsync (benchmark comparison only). */
  readonly durable?: boolean;
}

/**
 * One data folder, as the local stores share it: its state folder, the one lock every state update takes
 * ({@link LocalLock}: owner token, heartbeat) and the one atomic writer every file goes through
 * ({@link AtomicFileWriter}: a temporary file, then a rename; fsynced with its folder). The cursor store, the
 * run log and the snapshot store of a folder are built on one `LocalFolder`, so they share its lock and the
 * writer's record of which folders are already durable.
 */
export class LocalFolder {
  readonly stateDir: string;
  /** The file the cursors are kept in. */
  readonly statePath: string;
  readonly lock: LocalLock;
  readonly writer: AtomicFileWriter;
  private readonly lockOptions: LocalLockOptions;
  private readonly namedLocks = new Map<string, LocalLock>();

  constructor(
    readonly root: string,
    options: LocalFolderOptions = {},
  ) {
    this.stateDir = join(root, STATE_DIR);
    this.statePath = join(this.stateDir, STATE_FILE);
    this.lockOptions = { ...options.lock, ...(options.onLockEvent ? { onLockEvent: options.onLockEvent } : {}) };
    this.lock = new LocalLock(this.stateDir, this.lockOptions);
    this.writer = new AtomicFileWriter(
      root,
      join(this.stateDir, TMP_DIR),
      options.durable === undefined ? {} : { durable: options.durable },
    );
  }

  /**
   * A lock of its own for one file that only some writers share (a backfill range's state): same protocol as
   * {@link lock} (owner token, heartbeat, stale-lock breaking), another lock file in the state folder.
   */
  namedLock(fileName: string): LocalLock {
    let lock = this.namedLocks.get(fileName);
    if (lock === undefined) {
      lock = new LocalLock(this.stateDir, { ...this.lockOptions, fileName });
      this.namedLocks.set(fileName, lock);
    }
    return lock;
  }
}

/** Reads a whole text file; undefined if it does not exist. */
export async function readTextIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
