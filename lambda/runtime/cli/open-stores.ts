import { mkdir, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
// The local stores directly, not the stores' face: the face loads the AWS SDK, which a local run never needs.
import { openLocalStores } from '../../stores/local-store.js';
import type { BackfillStore, CursorStore, RunLogStore, SnapshotReader, SnapshotStore } from '../../stores/types.js';
import { SettingsError } from '../../contract/index.js';
import type { StoreOptions } from './options.js';

/** The stores a CLI command works with, and how to describe them to the user. */
export interface OpenStores {
  readonly cursors: CursorStore;
  readonly runLog: RunLogStore;
  readonly snapshots: SnapshotStore;
  /** The same mirror, read back (`catalog-sync changes`). */
  readonly reader: SnapshotReader;
  /** Backfill plans and range states (the follower checks them for a running backfill of its cursor). */
  readonly backfills: BackfillStore;
  /** e.g. `DynamoDB table cursors + S3 bucket mirror` or `./catalog-data`. */
  readonly where: string;
  /** Releases sockets, so the process can exit. */
  close(): void;
}

/**
 * DynamoDB and S3 when `--cursor-table` and `--bucket` are given (exactly as the Lambda uses them); otherwise
 * the embedded default: a folder with the same key layout and a cursor file.
 */
export async function openStores(
  options: StoreOptions,
  concurrency: number,
  env: NodeJS.ProcessEnv = process.env,
  access: DataDirAccess = 'write',
): Promise<OpenStores> {
  const { cursorTable, bucket } = options;
  if ((cursorTable === undefined) !== (bucket === undefined)) {
    throw new SettingsError(
      cursorTable === undefined ? '--cursor-table' : '--bucket',
      `is required together with ${cursorTable === undefined ? '--bucket' : '--cursor-table'}: give both for DynamoDB and S3, or neither for the local folder (--data-dir)`,
    );
  }
  if (cursorTable !== undefined && bucket !== undefined) {
    if (cursorTable.trim() === '') throw new SettingsError('--cursor-table', 'must not be empty');
    if (bucket.trim() === '') throw new SettingsError('--bucket', 'must not be empty');
    // Loaded only here: the AWS SDK takes most of a second to load, which every local command would pay.
    const [{ awsClients }, { DynamoStore }, { S3SnapshotStore }] = await Promise.all([
      import('../../stores/aws-clients.js'),
      import('../../stores/dynamo-store.js'),
      import('../../stores/s3-store.js'),
    ]);
    const clients = awsClients(env, concurrency);
    const store = new DynamoStore(cursorTable, clients.dynamo);
    const snapshots = new S3SnapshotStore(bucket, clients.s3);
    return {
      cursors: store,
      runLog: store,
      backfills: store,
      snapshots,
      reader: snapshots,
      where: `DynamoDB table ${cursorTable} + S3 bucket ${bucket}`,
      close: () => {
        clients.dynamo.destroy();
        clients.s3.destroy();
      },
    };
  }
  if (options.dataDir.trim() === '') throw new SettingsError('--data-dir', 'must not be empty');
  const caseInsensitive = forcedCaseInsensitive(env);
  await checkDataDir(resolve(options.dataDir), access);
  const { cursors, runLog, snapshots, backfills } = openLocalStores(resolve(options.dataDir), { caseInsensitive });
  return {
    cursors,
    runLog,
    snapshots,
    reader: snapshots,
    backfills,
    where: resolve(options.dataDir),
    close: () => undefined,
  };
}

/**
 * For tests only: `CATALOG_SYNC_TEST_CASE_INSENSITIVE=1` makes a new local folder escape its file names as on a
 * case-insensitive file system (macOS, Windows), which the test machines do not have.
 */
export const FORCE_CASE_INSENSITIVE_ENV = 'CATALOG_SYNC_TEST_CASE_INSENSITIVE';

function forcedCaseInsensitive(env: NodeJS.ProcessEnv): boolean {
  const value = env[FORCE_CASE_INSENSITIVE_ENV];
  if (value === undefined || value === '' || value === '0') return false;
  if (value === '1') return true;
  throw new SettingsError(
    FORCE_CASE_INSENSITIVE_ENV,
    `${JSON.stringify(value)} must be "1" or "0" (for tests only: take the file system as case-insensitive)`,
  );
}

/** What a command does with `--data-dir`: `read` (status, runs) or `write` (run, backfill, quarantine). */
export type DataDirAccess = 'read' | 'write';

/**
 * Finds `--data-dir` problems before any fetch, as usage errors naming the flag: a path that is a file (or lies
 * under one), and, for a command that writes, a folder that cannot be created or written. A writing command
 * creates the folder here (the run would create it on its first write anyway) and writes and removes a probe
 * file in it: permission bits alone do not tell (root, read-only mounts, immutable folders).
 */
export async function checkDataDir(dir: string, access: DataDirAccess): Promise<void> {
  const problem = (what: string, cause?: unknown): SettingsError =>
    new SettingsError('--data-dir', `${JSON.stringify(dir)} ${what}`, cause === undefined ? undefined : { cause });
  // The path itself, or the nearest of its parents that exists, must be a folder.
  let existing = dir;
  for (let path = dir; ; path = dirname(path)) {
    existing = path;
    const found = await stat(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      if (error.code === 'ENOTDIR') return 'under-file' as const;
      throw problem(`cannot be read: ${error.message}`, error);
    });
    if (found === 'under-file') throw problem('lies under a file, not a folder');
    if (found !== undefined) {
      if (!found.isDirectory())
        throw problem(
          path === dir ? 'is a file, not a folder' : `lies under ${JSON.stringify(path)}, a file, not a folder`,
        );
      break;
    }
    if (dirname(path) === path) break;
  }
  if (access === 'read') return;
  await createFolders(existing, dir, problem);
  const probe = join(dir, `.catalog-sync-write-probe-${process.pid}`);
  try {
    await writeFile(probe, '');
    await unlink(probe);
  } catch (error) {
    throw problem(`cannot be written: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, error);
  }
}

/**
 * Creates the folders from `existing` (the nearest parent that exists) down to `dir`, one level at a time: Node's
 * recursive mkdir loops for ever, at full CPU, where a folder refuses a new one with ENOENT (procfs: `/proc/foo`).
 * A level another process created meanwhile is fine.
 */
async function createFolders(
  existing: string,
  dir: string,
  problem: (what: string, cause?: unknown) => SettingsError,
): Promise<void> {
  const levels: string[] = [];
  for (let path = dir; path !== existing && dirname(path) !== path; path = dirname(path)) levels.unshift(path);
  for (const level of levels) {
    try {
      await mkdir(level);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') continue;
      throw problem(
        `cannot be created: ${JSON.stringify(dirname(level))} takes no new folder (${code ?? (error as Error).message})`,
        error,
      );
    }
  }
}
