import type { Mirror } from '../consumer/mirror.js';
import { mapInOrder } from '../consumer/read-ahead.js';
import { DEFAULT_READ_AHEAD, readCommits } from '../consumer/reader.js';
import { parseTimestamp } from '../contract/time.js';
import { id as kuuidId } from '../ids/kuuid.js';
import type { CursorStore } from '../stores/types.js';
import { forEachBounded, packagesOf } from './commit-leaves.js';
import { writeGuarded } from './guarded-write.js';
import { applyCommit, type PackageIndex } from './package-index.js';
import type { ViewCounts, ViewTarget } from './view-consumer.js';
import { packageIndexKey, VIEW_CONSUMER } from './view-keys.js';

/** Package indexes a rebuild writes at once (every package of the mirror, each one GET and one PUT). */
const REBUILD_CONCURRENCY = 64;

/** What {@link rebuildView} did. */
export interface RebuildResult extends ViewCounts {
  readonly commits: number;
  readonly packages: number;
  /** The last commit folded in (the watermark's when the read reached it), or null for an empty mirror. */
  readonly commitKey: string | null;
  /** Whether the consumer's cursor was moved to that commit (false when it was there or past it already). */
  readonly cursorMoved: boolean;
}

/**
 * Builds the whole view from the mirror's history up to the watermark, with the same {@link applyCommit} as the
 * incremental upkeep (so the same bytes), and writes every package's index with the guard (an index of a newer
 * commit, written meanwhile by the running consumer, is kept; one of the same commit is replaced). Then the
 * consumer's cursor is moved up to the last commit read if it was behind. Holds every package's index in memory.
 */
export async function rebuildView(target: ViewTarget, mirror: Mirror, cursors: CursorStore, options: { readonly name?: string; readonly signal?: AbortSignal } = {}): Promise<RebuildResult> {
  const name = options.name ?? VIEW_CONSUMER;
  const indexes = new Map<string, PackageIndex>();
  let commits = 0;
  let last: { commitKey: string; commitId: string; commitTimeStamp: string } | undefined;
  const commitsRead = readCommits(mirror, options.signal === undefined ? {} : { signal: options.signal });
  // The leaf bodies of the next commits are read while this one is folded in: a rebuild is bound by GETs.
  const withLeaves = mapInOrder(commitsRead, DEFAULT_READ_AHEAD, async (commit) => ({ commit, packages: await packagesOf(commit) }));
  for await (const { commit, packages } of withLeaves) {
    for (const [id, leaves] of packages) indexes.set(id, applyCommit(indexes.get(id), commit, leaves));
    commits++;
    last = commit;
  }
  const counts: ViewCounts = { written: 0, current: 0 };
  await forEachBounded(indexes.values(), target.concurrency ?? REBUILD_CONCURRENCY, async (index) => {
    counts[await writeGuarded(target.documents, packageIndexKey(target.prefix, index.id), index.commitKey, () => index, { replaceSame: true })]++;
  });
  let cursorMoved = false;
  if (last !== undefined) {
    const value = parseTimestamp(last.commitTimeStamp);
    const runId = kuuidId();
    for (let state = await cursors.read(name); state === undefined || state.value < value; ) {
      const outcome = await cursors.compareAndSet(name, state, { value, commitId: last.commitId, runId });
      if (outcome.outcome === 'written') {
        cursorMoved = true;
        break;
      }
      state = outcome.current;
    }
  }
  return { ...counts, commits, packages: indexes.size, commitKey: last?.commitKey ?? null, cursorMoved };
}
