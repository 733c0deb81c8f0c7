/**
 * Memory-backed folders for a test run: /dev/shm where the machine has one. A test's folders there cost no disk
 * I/O: the engine still syncs every file it writes (its durability is its own), but on tmpfs a sync is a no-op, where
 * on the disk-backed /tmp of the 2-core machine the CLI tests' syncs were a good part of their system CPU.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const MEMORY_FOLDER = '/dev/shm';
/** statfs's f_type of a tmpfs. */
const TMPFS_MAGIC = 0x01021994;
/** What a test run may put in its temporary folder at most (package.test.ts's install is the largest, ~200 MB). */
const ROOM_NEEDED = 1024 ** 3;

/** /dev/shm when the machine has it as a folder we may write to; else undefined. */
export function memoryFolder(): string | undefined {
  try {
    accessSync(MEMORY_FOLDER, constants.W_OK);
    if (statSync(MEMORY_FOLDER).isDirectory()) return MEMORY_FOLDER;
  } catch {
    // none
  }
  return undefined;
}

/**
 * A fresh folder in memory for a test run's temporary files (its TMPDIR), or undefined where the machine has no
 * memory folder that fits: a tmpfs with 1 GiB free from which programs may run (the CLI tests run scripts they
 * write; Docker's /dev/shm is 64 MB and noexec). The caller removes it.
 */
export function memoryTempFolder(): string | undefined {
  const memory = memoryFolder();
  if (memory === undefined) return undefined;
  let folder: string | undefined;
  try {
    const { type, bavail, bsize } = statfsSync(memory);
    if (type !== TMPFS_MAGIC || bavail * bsize < ROOM_NEEDED) return undefined;
    folder = mkdtempSync(join(memory, 'catalog-sync-tests-'));
    const probe = join(folder, 'probe.sh');
    writeFileSync(probe, '#!/bin/sh\nexit 0\n', { mode: 0o700 });
    const runs = spawnSync(probe, { stdio: 'ignore' }).status === 0;
    rmSync(probe);
    if (runs) return folder;
  } catch {
    // no fit: the system's temp folder
  }
  if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
  return undefined;
}
