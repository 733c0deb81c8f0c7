import { commitKey, manifestKey } from '../contract/keys.js';
import type { Ticks } from '../contract/time.js';
import type { ReadOptions, SnapshotStore } from '../stores/types.js';
import type { CommitBehind } from './commit-stream.js';

/**
 * The commits the catalog appended behind the cursor, among those found at or before it on the pages a run read.
 *
 * The follower assumes the catalog's commit times only grow: it takes the commits after its cursor, so a commit
 * appended later with an earlier time (a feed writer whose clock went back) is never taken. A page that spans the
 * cursor holds commits before it that were taken long ago, though, and only the mirror tells the two apart: every
 * commit at or before the cursor and after `START_CURSOR` was stored with its manifest before the cursor passed it
 * (the cursor only moves over stored commits), so one without a manifest was not in the catalog then. One listing
 * of `commits/` over the span of those commits on S3, one `stat` a commit in a folder.
 */
export async function commitsAppendedBehind(
  snapshots: SnapshotStore,
  prefix: string,
  seen: readonly CommitBehind[],
  startCursor: Ticks,
  options: ReadOptions = {},
): Promise<CommitBehind[]> {
  const candidates = seen
    .filter((commit) => commit.ticks > startCursor)
    .sort((a, b) => (a.ticks < b.ticks ? -1 : a.ticks > b.ticks ? 1 : 0));
  if (candidates.length === 0) return [];
  const keys = candidates.map((commit) => manifestKey(prefix, commitKey(commit.ticks)));
  const stored =
    snapshots.storedKeys !== undefined
      ? await snapshots.storedKeys(keys, options)
      : await storedByListing(snapshots, keys, options);
  return candidates.filter((_commit, i) => !stored.has(keys[i]!));
}

/**
 * Which of `keys` (sorted, fixed-width commit keys under one folder) are stored, by one listing from just before the
 * first to just past the last: a key less its `.json` sorts before it and after every smaller commit key.
 */
async function storedByListing(
  snapshots: SnapshotStore,
  keys: readonly string[],
  options: ReadOptions,
): Promise<Set<string>> {
  const wanted = new Set(keys);
  const first = keys[0]!;
  const last = keys[keys.length - 1]!;
  const folder = first.slice(0, first.lastIndexOf('/') + 1);
  const stored = new Set<string>();
  for await (const key of snapshots.listKeys(folder, first.replace(/\.json$/, ''), options)) {
    if (key > last) break;
    if (wanted.has(key)) stored.add(key);
  }
  return stored;
}
