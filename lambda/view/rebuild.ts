import { consumerKey } from '../consumer/consumer-cursors.js';
import { MirrorLeaf, type Mirror } from '../consumer/mirror.js';
import { readCommits } from '../consumer/reader.js';
import { comparableVersion } from '../contract/identity.js';
import { parseTimestamp } from '../contract/time.js';
import { id as kuuidId } from '../ids/kuuid.js';
import type { CursorStore } from '../stores/types.js';
import { forEachBoundedAsync, limiter } from './commit-leaves.js';
import { writeGuarded } from './guarded-write.js';
import { LatestLeafSpill, type LeafRecord, type SpillOptions } from './latest-leaf-spill.js';
import { leafFieldsOf } from './leaf-fields.js';
import { entryOf, packageIndexOf, type PackageIndex } from './package-index.js';
import { refreshQuarantinedEntry } from './quarantine-refresh.js';
import { finishStaleRebuild, prepareStaleRebuild, writeOverNewer, type StaleRebuild } from './stale-rebuild.js';
import type { ViewStaleness } from './staleness.js';
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
  /** The id filter changes the view still lacks leaves for after it (staleness.ts); empty: the view is whole. */
  readonly stale: ViewStaleness[];
}

/** Options of {@link rebuildView}. */
export interface RebuildOptions extends SpillOptions {
  /** The view consumer's cursor name (default `view-latest`). */
  readonly name?: string;
  /** Stops the rebuild: between manifests, and between shards once they are being written. */
  readonly signal?: AbortSignal;
  /** Leaf bodies read at once (default {@link DEFAULT_REBUILD_READS}). */
  readonly reads?: number;
  /**
   * `added`: only the packages that stale id filter changes added, once their refill is done (`view --rebuild
   * --added`); every manifest is read, only their bodies, and the cursor is left where it is.
   */
  readonly only?: 'added';
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
  const { signal, only } = options;
  const where = { documents: target.documents, prefix: target.prefix, mirror, cursors, name };
  const stale = await prepareStaleRebuild(where);
  if (only === 'added' && stale.cleared.size === 0) {
    const left = await finishStaleRebuild(where, stale, { upTo: null, only });
    return {
      written: 0,
      current: 0,
      commits: 0,
      packages: 0,
      bodiesRead: 0,
      commitKey: null,
      cursorMoved: false,
      complete: true,
      stale: left,
    };
  }
  const spill = await LatestLeafSpill.open({ ...options, keyPrefix: mirror.prefix });
  try {
    let commits = 0;
    let last: { commitKey: string; commitId: string; commitTimeStamp: string } | undefined;
    for await (const commit of readCommits(mirror, {
      readAhead: REBUILD_READ_AHEAD,
      ...(signal === undefined ? {} : { signal }),
    })) {
      for (const leaf of commit.leaves) {
        if (only === 'added' && !stale.added(leaf.id.toLowerCase())) continue;
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
      const bodies = await writePackage(target, mirror, folded, counts, read, {
        ...stale,
        bound: last?.commitKey ?? '',
      });
      totals.packages++;
      totals.bodiesRead += bodies;
    });
    const commitKey = last?.commitKey ?? null;
    if (signal?.aborted)
      return { ...counts, commits, ...totals, commitKey, cursorMoved: false, complete: false, stale: [] };
    // A rebuild of some packages only leaves the cursor: the others' later commits are upkeep's to apply.
    const cursorMoved =
      last === undefined || only === 'added' ? false : await moveCursorUp(cursors, consumerKey(mirror, name), last);
    const left = await finishStaleRebuild(where, stale, { upTo: commitKey, ...(only ? { only } : {}) });
    return { ...counts, commits, ...totals, commitKey, cursorMoved, complete: true, stale: left };
  } finally {
    await spill.remove();
  }
}

/** A package while its shard is folded: its most recent leaf's spelling and commit, and each identity's latest leaf. */
interface FoldedPackage {
  id: string;
  commitKey: string;
  commitTimeStamp: string;
  readonly latest: Map<string, LeafRecord>;
}

/** Every package of every shard, each shard folded (its records in order: last wins) when the one before is done. */
async function* foldShards(spill: LatestLeafSpill, signal: AbortSignal | undefined): AsyncGenerator<FoldedPackage> {
  for (let shard = 0; shard < spill.shards; shard++) {
    if (signal?.aborted) return;
    const packages = new Map<string, FoldedPackage>();
    for await (const record of spill.records(shard)) {
      const lowerId = record.id.toLowerCase();
      let folded = packages.get(lowerId);
      if (folded === undefined) {
        folded = {
          id: record.id,
          commitKey: record.commitKey,
          commitTimeStamp: record.commitTimeStamp,
          latest: new Map(),
        };
        packages.set(lowerId, folded);
      }
      folded.id = record.id;
      folded.commitKey = record.commitKey;
      folded.commitTimeStamp = record.commitTimeStamp;
      folded.latest.set(record.version, record);
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
  stale: StaleRebuild & { readonly bound: string },
): Promise<number> {
  const records = [...folded.latest.values()];
  const entries = await Promise.all(
    records.map(async (record) => {
      const leaf = {
        key: record.key,
        type: record.type,
        ...(record.quarantined ? { quarantined: true as const } : {}),
      };
      if (record.type === 'PackageDelete' || record.quarantined) return entryOf(record.version, leaf, record);
      // Read as upkeep reads it (same errors for a leaf the manifest lists but the mirror lacks).
      const body = await read(() =>
        new MirrorLeaf(
          { key: record.key, id: record.id, version: record.version, type: record.type },
          mirror,
          record.commitKey,
        ).json(),
      );
      return entryOf(record.version, { ...leaf, fields: leafFieldsOf(body) }, record);
    }),
  );
  const index: PackageIndex = packageIndexOf(folded.id, folded, entries);
  const key = packageIndexKey(target.prefix, index.id);
  let outcome = await writeGuarded(target.documents, key, index.commitKey, () => index, { replaceSame: true });
  // An added package's newer index was written by upkeep over the incomplete one: merged, not kept as it is.
  if (outcome === 'current' && stale.added(index.id.toLowerCase()))
    outcome = await writeOverNewer(target.documents, key, index, stale.bound);
  counts[outcome]++;
  // A set-aside leaf stored since (retry-quarantine) is read like any other: as upkeep does after its write (an
  // index kept because a newer one was there was looked at by its own writer).
  if (outcome === 'written')
    for (const entry of index.versions)
      if (entry.quarantined)
        await refreshQuarantinedEntry(target.documents, key, entry.leaf, (leafKey) => mirror.store.getBytes(leafKey));
  return records.filter((record) => record.type === 'PackageDetails' && !record.quarantined).length;
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
