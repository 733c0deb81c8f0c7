/**
 * How the audit sees what a mirror stores without a HEAD per leaf: the keys under `leaves/` or `commits/` listed by
 * commit-key ranges (a window of commits cut into parts listed at once), or every key of a small mirror at once.
 */
import { commitKey as commitKeyOf } from '../contract/keys.js';
import type { SnapshotStore } from '../stores/types.js';
import type { PlannedCommit } from '../sync/commit-stream.js';

export async function keySet(keys: AsyncIterable<string>): Promise<Set<string>> {
  const set = new Set<string>();
  for await (const key of keys) set.add(key);
  return set;
}

/** The keys stored under `{prefix}{folder}/` for the commits of `commits` (in commit order), listed from the first. */
async function listRange(
  snapshots: SnapshotStore,
  prefix: string,
  folder: 'leaves' | 'commits',
  commits: readonly PlannedCommit[],
): Promise<string[]> {
  const first = commitKeyOf(commits[0]!.ticks);
  const last = commitKeyOf(commits.at(-1)!.ticks);
  const base = `${prefix}${folder}/`;
  // Every key of the last commit sorts before this: its commit key, then a character above `/` and `.`.
  const end = `${base}${last}~`;
  const keys: string[] = [];
  for await (const key of snapshots.listKeys(base, `${base}${first}`)) {
    if (key > end) break;
    keys.push(key);
  }
  return keys;
}

/** The stored keys of `folder` for `commits`, listed in `ranges` parts at once. */
export async function listWindow(
  snapshots: SnapshotStore,
  prefix: string,
  folder: 'leaves' | 'commits',
  commits: readonly PlannedCommit[],
  ranges: number,
): Promise<Set<string>> {
  const size = Math.ceil(commits.length / Math.max(1, ranges));
  const parts: PlannedCommit[][] = [];
  for (let i = 0; i < commits.length; i += size) parts.push(commits.slice(i, i + size));
  const listed = await Promise.all(parts.map((part) => listRange(snapshots, prefix, folder, part)));
  return new Set(listed.flat());
}
