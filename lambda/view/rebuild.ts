import { consumerKey } from '../consumer/consumer-cursors.js';
import { MirrorLeaf, type Mirror } from '../consumer/mirror.js';
import { readCommits } from '../consumer/reader.js';
import { comparableVersion } from '../contract/identity.js';
import { parseTimestamp } from '../contract/time.js';
import { id as kuuidId } from '../ids/kuuid.js';
import type { CursorStore } from '../stores/types.js';
import { forEachBoundedAsync, limiter } from './commit-leaves.js';
import { writeGuarded } from './guarded-write.js';
import { bodiesNeeded, foldRecord, indexOf, type FoldedPackage } from './fold.js';
import { LatestLeafSpill, type SpillOptions } from './latest-leaf-spill.js';
import { leafFieldsOf, type LeafFields } from './leaf-fields.js';
import type { LeafRecord } from './leaf-record.js';
import { refreshQuarantinedEntry } from './quarantine-refresh.js';
import type { ViewCounts, ViewTarget } from './view-consumer.js';
import { packageIndexKey, VIEW_CONSUMER } from './view-keys.js';

/** Package indexes a rebuild writes at once (each one GET and one PUT). */
const REBUILD_CONCURRENCY = 64;
/**
 * Manifests a rebuild reads ahead: they are delivered in commit order, so one slow GET holds the rest back until it
 * comes; more in flight keep the reads going meanwhile (a manifest is a few hundred bytes).
 */
const REBUILD_READ_AHEAD = 256;
/** Leaf bodies a rebuild reads at once. */
export const DEFAULT_REBUILD_READS = 64;

/** What {@link rebuildView} did. */
export interface RebuildResult extends ViewCounts {
  readonly commits: number;
  readonly packages: number;
  /** Leaf bodies read: one per identity whose latest leaf is a details leaf (deletes and quarantined leaves have none). */
  readonly bodiesRead: number;
  /** The last commit folded in (the watermark's when the read reached it), or null for an empty mirror. */
  readonly commitKey: string | null;
  /** Whether the consumer's cursor was moved to that commit (false when it was there or past it already, or when stopped). */
  readonly cursorMoved: boolean;
  /** False when `signal` stopped the rebuild before every index was written (the cursor is then left where it was). */
  readonly complete: boolean;
}

/** Options of {@link rebuildView}. */
export interface RebuildOptions extends SpillOptions {
  /** The view consumer's cursor name (default `view-latest`). */
  readonly name?: string;
  /** Stops the rebuild: between manifests, and between shards once they are being written. */
  readonly signal?: AbortSignal;
  /** Leaf bodies read at once (default {@link DEFAULT_REBUILD_READS}). */
  readonly reads?: number;
}

/**
 * Builds the whole view from the mirror's history up to the watermark, in bounded memory, giving the bytes the
 * incremental upkeep gives:
 *
 * 1. the manifests only, in commit order: each leaf becomes a record (commit, id as spelled, identity, type, key)
 *    spilled to a shard file by a hash of the lowercased id, only the latest of an identity kept while buffered;
 * 2. one shard at a time: the records folded in order (last wins, as `applyCommit` decides within and across
 *    commits: the identity's latest leaf, the package's most recent leaf's spelling of the id and its commit);
 * 3. per package (64 at once, `reads` bodies at once in all): the bodies of the latest details leaf of each
 *    identity read (not of deletes, nor quarantined leaves), then its index written with the guard (one of a
 *    newer commit, written meanwhile by the running consumer, is kept; one of the same commit is replaced).
 *
 * Then the consumer's cursor is moved up to the last commit read if it was behind. The shard files are under a
 * temporary folder of their own, removed at the end whatever happens.
 */
export async function rebuildView(
  target: ViewTarget,
  mirror: Mirror,
  cursors: CursorStore,
  options: RebuildOptions = {},
): Promise<RebuildResult> {
  const name = options.name ?? VIEW_CONSUMER;
  const { signal } = options;
  const spill = await LatestLeafSpill.open({ ...options, keyPrefix: mirror.prefix });
  try {
    let commits = 0;
    let last: { commitKey: string; commitId: string; commitTimeStamp: string } | undefined;
    for await (const commit of readCommits(mirror, {
      readAhead: REBUILD_READ_AHEAD,
      ...(signal === undefined ? {} : { signal }),
    })) {
      for (const leaf of commit.leaves) {
        const record = {
          commitKey: commit.commitKey,
          commitTimeStamp: commit.commitTimeStamp,
          id: leaf.id,
          version: comparableVersion(leaf.version),
          type: leaf.type,
          quarantined: leaf.quarantined === true,
          key: leaf.key,
        };
        if (spill.add(record)) await spill.flush();
      }
      commits++;
      last = commit;
    }
    await spill.flush();
    const counts: ViewCounts = { written: 0, current: 0 };
    const totals = { packages: 0, bodiesRead: 0 };
    const read = limiter(options.reads ?? DEFAULT_REBUILD_READS);
    // One pool over the packages of every shard in turn: no pause at the end of a shard for its slowest request.
    await forEachBoundedAsync(foldShards(spill, signal), target.concurrency ?? REBUILD_CONCURRENCY, async (folded) => {
      const bodies = await writePackage(target, mirror, folded, counts, read);
      totals.packages++;
      totals.bodiesRead += bodies;
    });
    if (signal?.aborted)
      return { ...counts, commits, ...totals, commitKey: last?.commitKey ?? null, cursorMoved: false, complete: false };
    const cursorMoved = last === undefined ? false : await moveCursorUp(cursors, consumerKey(mirror, name), last);
    return { ...counts, commits, ...totals, commitKey: last?.commitKey ?? null, cursorMoved, complete: true };
  } finally {
    await spill.remove();
  }
}

/** Every package of every shard, each shard folded (its records in order: last wins) when the one before is done. */
async function* foldShards(spill: LatestLeafSpill, signal: AbortSignal | undefined): AsyncGenerator<FoldedPackage> {
  for (let shard = 0; shard < spill.shards; shard++) {
    if (signal?.aborted) return;
    const packages = new Map<string, FoldedPackage>();
    for await (const record of spill.records(shard)) {
      const lowerId = record.id.toLowerCase();
      packages.set(lowerId, foldRecord(packages.get(lowerId), record));
    }
    for (const folded of packages.values()) {
      if (signal?.aborted) return;
      yield folded;
    }
  }
}

/** Reads the bodies of a package's latest details leaves, writes its index; returns the bodies read. */
async function writePackage(
  target: ViewTarget,
  mirror: Mirror,
  folded: FoldedPackage,
  counts: ViewCounts,
  read: <R>(task: () => Promise<R>) => Promise<R>,
): Promise<number> {
  const needed = bodiesNeeded(folded);
  const fields = new Map<LeafRecord, LeafFields>();
  await Promise.all(
    needed.map(async (record) => {
      // Read as upkeep reads it (same errors for a leaf the manifest lists but the mirror lacks).
      const body = await read(() =>
        new MirrorLeaf(
          { key: record.key, id: record.id, version: record.version, type: record.type },
          mirror,
          record.commitKey,
        ).json(),
      );
      fields.set(record, leafFieldsOf(body));
    }),
  );
  const index = indexOf(folded, fields);
  const key = packageIndexKey(target.prefix, index.id);
  const outcome = await writeGuarded(target.documents, key, index.commitKey, () => index, { replaceSame: true });
  counts[outcome]++;
  // A set-aside leaf stored since (retry-quarantine) is read like any other: as upkeep does after its write (an
  // index kept because a newer one was there was looked at by its own writer).
  if (outcome === 'written')
    for (const entry of index.versions)
      if (entry.quarantined)
        await refreshQuarantinedEntry(target.documents, key, entry.leaf, (leafKey) => mirror.store.getBytes(leafKey));
  return needed.length;
}

/** Moves the consumer's cursor (stored under `key`) up to `last` if it is behind it; true when it moved. */
async function moveCursorUp(
  cursors: CursorStore,
  key: string,
  last: { commitId: string; commitTimeStamp: string },
): Promise<boolean> {
  const value = parseTimestamp(last.commitTimeStamp);
  const runId = kuuidId();
  for (let state = await cursors.read(key); state === undefined || state.value < value; ) {
    const outcome = await cursors.compareAndSet(key, state, { value, commitId: last.commitId, runId });
    if (outcome.outcome === 'written') return true;
    state = outcome.current;
  }
  return false;
}
