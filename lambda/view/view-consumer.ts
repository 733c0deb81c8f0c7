import { consume, type ConsumeOptions, type ConsumeResult } from '../consumer/consume.js';
import type { MirrorCommit } from '../consumer/mirror.js';
import { forEachBounded, packagesOf } from './commit-leaves.js';
import { writeGuarded, type GuardedWriteOptions } from './guarded-write.js';
import { applyCommit } from './package-index.js';
import type { ViewDocuments } from './view-documents.js';
import { packageIndexKey, VIEW_CONSUMER } from './view-keys.js';

/** Packages written at once while a commit is applied (nuget.org: about 3 leaves a commit). */
export const DEFAULT_VIEW_CONCURRENCY = 16;

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
export async function applyToView(target: ViewTarget, commit: MirrorCommit, counts: ViewCounts = { written: 0, current: 0 }): Promise<ViewCounts> {
  const packages = await packagesOf(commit);
  const options = target.beforeWrite === undefined ? {} : { beforeWrite: target.beforeWrite };
  await forEachBounded(packages.values(), target.concurrency ?? DEFAULT_VIEW_CONCURRENCY, async (leaves) => {
    const key = packageIndexKey(target.prefix, leaves[0]!.id);
    const outcome = await writeGuarded(target.documents, key, commit.commitKey, (previous) => applyCommit(previous, commit, leaves), options);
    counts[outcome]++;
  });
  return counts;
}

/** What {@link keepView} did. */
export interface ViewRunResult extends ConsumeResult, ViewCounts {}

/**
 * Keeps the latest view up to the watermark as the named consumer `name` (default `view-latest`): in commit order,
 * checkpointed after each commit is applied, never past the watermark (the consumer's guarantees), with the
 * stale-writer guard on every index.
 */
export async function keepView(target: ViewTarget, options: ConsumeOptions & { readonly name?: string }): Promise<ViewRunResult> {
  const counts: ViewCounts = { written: 0, current: 0 };
  const result = await consume(options.name ?? VIEW_CONSUMER, (commit) => applyToView(target, commit, counts), options);
  return { ...result, ...counts };
}
