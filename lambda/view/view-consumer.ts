import { consumeAs, type ConsumeOptions, type ConsumeResult } from '../consumer/consume.js';
import type { MirrorCommit, MirrorLeaf } from '../consumer/mirror.js';
import { forEachBounded, packagesOf } from './commit-leaves.js';
import { writeGuarded, type GuardedWriteOptions } from './guarded-write.js';
import { applyCommits } from './fold.js';
import type { PackageIndex, ViewLeaf } from './package-index.js';
import { refreshQuarantinedEntry } from './quarantine-refresh.js';
import type { ViewDocuments } from './view-documents.js';
import { packageIndexKey, VIEW_CONSUMER } from './view-keys.js';
import { viewStalenessWatch, type ViewStaleness } from './staleness.js';

/** Package indexes written at once while a batch is applied. */
export const DEFAULT_VIEW_CONCURRENCY = 32;
/** Commits applied together (each package written once for all of them): about 190 leaves at nuget.org's 3 a commit. */
export const DEFAULT_VIEW_BATCH = 64;

/** Where the view is kept and how. */
export interface ViewTarget {
  readonly documents: ViewDocuments;
  /** The mirror's prefix: the view is under `{prefix}packages/`. */
  readonly prefix: string;
  readonly concurrency?: number;
  /** Tests: see {@link GuardedWriteOptions.beforeWrite}. */
  readonly beforeWrite?: GuardedWriteOptions['beforeWrite'];
}

/** Counts of one {@link applyToView}. */
export interface ViewCounts {
  /** Package indexes written. */
  written: number;
  /** Packages already at this commit or a newer one (a redelivery, or a stale writer). */
  current: number;
}

/**
 * Applies one commit to the view: each package it touches gets its index rewritten with a guarded write. Applying
 * a commit again leaves every byte as it was (each index names its newest commit, and that commit is skipped).
 */
export function applyToView(
  target: ViewTarget,
  commit: MirrorCommit,
  counts: ViewCounts = { written: 0, current: 0 },
): Promise<ViewCounts> {
  return applyBatchToView(target, [commit], counts);
}

/**
 * Applies consecutive commits to the view, each package written once: its index is built from the stored one by
 * the batch's commits after the stored `commitKey` (so a batch applied again, whole or in part, changes no byte,
 * and an index another writer moved on meanwhile is built on, never gone back on).
 */
export async function applyBatchToView(
  target: ViewTarget,
  commits: readonly MirrorCommit[],
  counts: ViewCounts = { written: 0, current: 0 },
): Promise<ViewCounts> {
  const perCommit = await Promise.all(commits.map((commit) => packagesOf(commit)));
  const changes = new Map<string, { commit: MirrorCommit; leaves: ViewLeaf[] }[]>();
  perCommit.forEach((packages, i) => {
    for (const [id, leaves] of packages) {
      const change = { commit: commits[i]!, leaves };
      const known = changes.get(id);
      if (known === undefined) changes.set(id, [change]);
      else known.push(change);
    }
  });
  // Rare: the leaves set aside by quarantine, looked at again after their index is written (see below).
  const quarantined = new Map<string, MirrorLeaf>();
  for (const commit of commits) for (const leaf of commit.leaves) if (leaf.quarantined) quarantined.set(leaf.key, leaf);
  const options = target.beforeWrite === undefined ? {} : { beforeWrite: target.beforeWrite };
  await forEachBounded(changes.values(), target.concurrency ?? DEFAULT_VIEW_CONCURRENCY, async (ofPackage) => {
    const key = packageIndexKey(target.prefix, ofPackage[0]!.leaves[0]!.id);
    const last = ofPackage[ofPackage.length - 1]!.commit.commitKey;
    const build = (previous: PackageIndex | undefined): PackageIndex =>
      applyCommits(
        previous,
        ofPackage.filter(({ commit }) => previous === undefined || commit.commitKey > previous.commitKey),
      );
    const outcome = await writeGuarded(target.documents, key, last, build, options);
    counts[outcome]++;
    // A quarantined leaf stored by retry-quarantine while this batch was on its way: whichever of the two writes
    // second sees the other's (the retry looks at the index after storing the leaf; this looks at the leaf after
    // writing the index), so the entry cannot stay quarantined. An index kept because a newer one was there was
    // looked at by its own writer.
    if (outcome === 'written')
      for (const { leaves } of ofPackage) {
        for (const leaf of leaves) {
          const stored = leaf.quarantined ? quarantined.get(leaf.key) : undefined;
          if (stored !== undefined)
            await refreshQuarantinedEntry(target.documents, key, leaf.key, () => stored.storedBody());
        }
      }
  });
  return counts;
}

/** What {@link keepView} did. */
export interface ViewRunResult extends ConsumeResult, ViewCounts {
  /** The id filter changes the view lacks leaves for (staleness.ts), as last looked at; empty: the view is whole. */
  readonly stale: ViewStaleness[];
}

/**
 * Keeps the latest view up to the watermark as the named consumer `name` (default `view-latest`): in commit order,
 * `batchSize` commits at a time (default 64), checkpointed after each batch is applied, never past the watermark (the consumer's guarantees), with the
 * stale-writer guard on every index.
 */
export async function keepView(
  target: ViewTarget,
  options: ConsumeOptions & {
    readonly name?: string;
    readonly batchSize?: number;
    /** Told each time the view's stale changes are found to differ from the last told (the first time: when any). */
    readonly onStale?: (stale: ViewStaleness[]) => void;
  },
): Promise<ViewRunResult> {
  const counts: ViewCounts = { written: 0, current: 0 };
  const name = options.name ?? VIEW_CONSUMER;
  const staleness = viewStalenessWatch(target, options, name);
  const result = await consumeAs(
    name,
    async (commits) => {
      await staleness.checkIfDue();
      await applyBatchToView(target, commits, counts);
    },
    { ...options, batchSize: options.batchSize ?? DEFAULT_VIEW_BATCH },
  );
  await staleness.checkIfDue();
  return { ...result, ...counts, stale: staleness.stale };
}
