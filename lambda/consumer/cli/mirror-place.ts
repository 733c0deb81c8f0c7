/**
 * The mirror a reading command (`changes`, `view`, `latest`) is pointed at by its store flags, checked before
 * anything is written: a place that holds no mirror is an error naming it (`NoMirrorError`, exit 2), and reading
 * one writes nothing.
 */
import { resolve } from 'node:path';
import { checkMirror, MirrorState } from '../mirror-place.js';
import type { Mirror } from '../mirror.js';
import type { SnapshotReader } from '../../stores/types.js';
import type { StoreOptions } from '../../runtime/cli/options.js';

/** The mirror the flags name: `--bucket` (as `s3://bucket/prefix`) or `--data-dir`, under `--prefix`. */
export function mirrorOf(options: StoreOptions, store: SnapshotReader): Mirror {
  const prefix = options.prefix ?? '';
  if (options.bucket !== undefined) return { store, prefix, where: `s3://${options.bucket}/${prefix}` };
  const folder = resolve(options.dataDir);
  return { store, prefix, where: folder, folder };
}

/**
 * Throws `NoMirrorError` when the place holds no mirror; says once on stderr when it holds one with no commit yet
 * (with `--follow`: that the command waits for the first commit).
 */
export async function requireMirror(mirror: Mirror, follow: boolean): Promise<void> {
  if ((await checkMirror(mirror)) !== MirrorState.empty) return;
  process.stderr.write(
    `catalog-sync: ${mirror.where}: no commit yet (no ${mirror.prefix}watermark.json)${follow ? ': waiting for the first commit' : ''}\n`,
  );
}
