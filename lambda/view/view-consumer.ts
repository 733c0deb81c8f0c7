import { consumeAs, type AdaptiveBatchSize, type ConsumeOptions, type ConsumeResult } from '../consumer/consume.js';
import type { MirrorCommit, MirrorLeaf } from '../consumer/mirror.js';
import { changesOf, type PackageChange } from './commit-leaves.js';
import { writeGuardedMany, type GuardedWriteOptions } from './guarded-write.js';
import { applyCommits } from './fold.js';
import { LeafFieldsReader } from './leaf-bodies.js';
import type { LeafFields } from './leaf-fields.js';
import type { PackageIndex } from './package-index.js';
import { refreshQuarantinedEntry } from './quarantine-refresh.js';
import { budgeted, requestBudget, type RequestBudget } from './request-budget.js';
import type { ViewDocuments } from './view-documents.js';
import { packageIndexKey, VIEW_CONSUMER } from './view-keys.js';
import { viewStalenessWatch, type ViewStaleness } from './staleness.js';

/**
 * Requests the upkeep has in flight at once (leaf bodies, index reads and writes together): at 20-50 ms a request
 * about 5,000 a second, so a batch's thousands of requests never wait in phases for each other.
 */
export const DEFAULT_VIEW_CONCURRENCY = 256;
/**
 * The most commits applied together on S3 (each package written once for all of them): about 3,000 leaves at
 * nuget.org's 3 a commit, a few seconds of a Lambda's run, so a run that ends mid-batch redoes little. Batches are
 * as deep as the stream: a caught-up view applies each commit as it comes.
 */
export const DEFAULT_VIEW_BATCH = 1_024;
/** The same in a folder, whose reads take microseconds: about 12,000 leaves, a few MB. */
export const DEFAULT_FOLDER_VIEW_BATCH = 4_096;
/**
 * Manifests the upkeep reads ahead (a few hundred bytes each): they come in commit order, so one slow GET holds the
 * rest back; at 20-50 ms a GET, 256 in flight form the next batch at several thousand commits a second.
 */
export const DEFAULT_VIEW_READ_AHEAD = 256;

/** Where the view is kept and how. */
export interface ViewTarget {
  readonly documents: ViewDocuments;
  /** The mirror's prefix: the view is under `{prefix}packages/`. */
  readonly prefix: string;
  /** Requests in flight at once (default {@link DEFAULT_VIEW_CONCURRENCY}). */
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

/** What a run of the upkeep shares between its batches: its request budget and its reads ahead. @internal */
export interface UpkeepRun {
  readonly budget: RequestBudget;
  readonly bodies: LeafFieldsReader;
}

/** A run's shared parts, for `concurrency` requests in flight (default {@link DEFAULT_VIEW_CONCURRENCY}). @internal */
export function upkeepRun(concurrency?: number): UpkeepRun {
  const budget = requestBudget(concurrency ?? DEFAULT_VIEW_CONCURRENCY);
  return { budget, bodies: new LeafFieldsReader(budget) };
}

/**
 * Batches for {@link consumeAs} as the upkeep takes them: as deep as the stream (up to {@link DEFAULT_VIEW_BATCH}
 * commits), the bodies of the next batch read while one is applied; in a folder (`inFolder`), up to
 * {@link DEFAULT_FOLDER_VIEW_BATCH} and nothing read ahead (a read takes microseconds, and reading ahead would read
 * every leaf, where the batch reads only the latest of each identity). @internal
 */
export function upkeepBatches(run: UpkeepRun, inFolder = false): AdaptiveBatchSize {
  return inFolder
    ? { max: DEFAULT_FOLDER_VIEW_BATCH }
    : { max: DEFAULT_VIEW_BATCH, onRead: (commit) => run.bodies.readAhead(commit) };
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
 * and an index another writer moved on meanwhile is built on, never gone back on). Every package's index read and
 * its leaves' bodies are requested at once, and its write goes as soon as both have come (on a folder, the batch's
 * writes are one round under the view lock).
 */
export async function applyBatchToView(
  target: ViewTarget,
  commits: readonly MirrorCommit[],
  counts: ViewCounts = { written: 0, current: 0 },
  run: UpkeepRun = upkeepRun(target.concurrency),
): Promise<ViewCounts> {
  const changes = [...changesOf(commits).values()];
  const documents = budgeted(target.documents, run.budget);
  const items = changes.map((ofPackage) => {
    const fields = readFields(ofPackage, run.bodies);
    // Awaited by the build; a package found current (or whose read failed) is never built.
    fields.catch(() => undefined);
    return {
      key: packageIndexKey(target.prefix, ofPackage[0]!.leaves[0]!.id),
      commitKey: ofPackage[ofPackage.length - 1]!.commit.commitKey,
      make: async (previous: PackageIndex | undefined) => build(previous, ofPackage, await fields),
    };
  });
  const options = target.beforeWrite === undefined ? {} : { beforeWrite: target.beforeWrite };
  let outcomes;
  try {
    outcomes = await writeGuardedMany(documents, items, options);
  } finally {
    run.bodies.forget(commits);
  }
  // Rare: the leaves set aside by quarantine, looked at again after their index is written. A quarantined leaf
  // stored by retry-quarantine while this batch was on its way: whichever of the two writes second sees the other's
  // (the retry looks at the index after storing the leaf; this looks at the leaf after writing the index), so the
  // entry cannot stay quarantined. An index kept because a newer one was there was looked at by its own writer.
  await Promise.all(
    outcomes.map(async (outcome, n) => {
      counts[outcome]++;
      if (outcome !== 'written') return;
      for (const { leaves } of changes[n]!)
        for (const leaf of leaves)
          if (leaf.quarantined)
            await refreshQuarantinedEntry(documents, items[n]!.key, leaf.key, () => leaf.storedBody());
    }),
  );
  return counts;
}

/** The package's leaves' fields by leaf key (details leaves not quarantined), all requested at once. */
async function readFields(
  ofPackage: readonly PackageChange[],
  bodies: LeafFieldsReader,
): Promise<Map<string, LeafFields>> {
  const details = ofPackage.flatMap(({ leaves }) =>
    leaves.filter((leaf) => leaf.type === 'PackageDetails' && !leaf.quarantined),
  );
  const fields = await Promise.all(details.map((leaf) => bodies.fields(leaf)));
  return new Map(details.map((leaf, i) => [leaf.key, fields[i]!]));
}

/** The package's index: the stored one, with the batch's commits after its `commitKey` applied in order. */
function build(
  previous: PackageIndex | undefined,
  ofPackage: readonly PackageChange[],
  fields: ReadonlyMap<string, LeafFields>,
): PackageIndex {
  const viewLeaf = (leaf: MirrorLeaf) => {
    const base = { key: leaf.key, id: leaf.id, version: leaf.version, type: leaf.type };
    if (leaf.quarantined) return { ...base, quarantined: true as const };
    const found = fields.get(leaf.key);
    return found === undefined ? base : { ...base, fields: found };
  };
  return applyCommits(
    previous,
    ofPackage
      .filter(({ commit }) => previous === undefined || commit.commitKey > previous.commitKey)
      .map(({ commit, leaves }) => ({ commit, leaves: leaves.map(viewLeaf) })),
  );
}

/** What {@link keepView} did. */
export interface ViewRunResult extends ConsumeResult, ViewCounts {
  /** The id filter changes the view lacks leaves for (staleness.ts), as last looked at; empty: the view is whole. */
  readonly stale: ViewStaleness[];
  /** Batches applied (their size follows the stream: `commits / batches` commits on average). */
  readonly batches: number;
}

/**
 * Keeps the latest view up to the watermark as the named consumer `name` (default `view-latest`): in commit order,
 * in batches as deep as the stream (up to {@link DEFAULT_VIEW_BATCH} commits, {@link DEFAULT_FOLDER_VIEW_BATCH} in a
 * folder; `batchSize` fixes their size), the
 * next batch's leaf bodies read while one is applied, checkpointed after each batch is applied, never past the
 * watermark (the consumer's guarantees), with the stale-writer guard on every index.
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
  const run = upkeepRun(target.concurrency);
  let batches = 0;
  try {
    const result = await consumeAs(
      name,
      async (commits) => {
        await staleness.checkIfDue();
        await applyBatchToView(target, commits, counts, run);
        batches++;
      },
      {
        readAhead: DEFAULT_VIEW_READ_AHEAD,
        ...options,
        batchSize: options.batchSize ?? upkeepBatches(run, options.mirror.folder !== undefined),
      },
    );
    await staleness.checkIfDue();
    return { ...result, ...counts, batches, stale: staleness.stale };
  } finally {
    await run.bodies.close();
  }
}
