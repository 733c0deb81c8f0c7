import type { MirrorCommit, MirrorLeaf } from '../consumer/mirror.js';
import { identityOf } from './leaf-bodies.js';

/** One commit's leaves of one package. */
export interface PackageChange {
  readonly commit: MirrorCommit;
  readonly leaves: readonly MirrorLeaf[];
}

/**
 * A batch's leaves by package (id lowercased), commit by commit in order, each identity kept only at its latest leaf
 * in the batch: an earlier leaf of the identity is replaced by it whatever the stored index holds, so it never
 * reaches the index and its body is never read. A commit left with none of a package's leaves is left out of that
 * package's changes (a later commit of the package then names its spelling and commit).
 */
export function changesOf(commits: readonly MirrorCommit[]): Map<string, PackageChange[]> {
  const seen = new Set<string>();
  const reversed = new Map<string, PackageChange[]>();
  for (let c = commits.length - 1; c >= 0; c--) {
    const commit = commits[c]!;
    const kept = new Map<string, MirrorLeaf[]>();
    for (let l = commit.leaves.length - 1; l >= 0; l--) {
      const leaf = commit.leaves[l]!;
      const identity = identityOf(leaf);
      if (seen.has(identity)) continue;
      seen.add(identity);
      const id = leaf.id.toLowerCase();
      const leaves = kept.get(id);
      if (leaves === undefined) kept.set(id, [leaf]);
      else leaves.push(leaf);
    }
    for (const [id, leaves] of kept) {
      const change = { commit, leaves: leaves.reverse() };
      const known = reversed.get(id);
      if (known === undefined) reversed.set(id, [change]);
      else known.push(change);
    }
  }
  // Packages in the order of their last leaf in the batch, their changes in commit order.
  const changes = new Map<string, PackageChange[]>();
  for (const [id, ofPackage] of [...reversed].reverse()) changes.set(id, ofPackage.reverse());
  return changes;
}

/** Runs `work` on every item, at most `concurrency` at once; rejects with the first failure after all settle. */
export async function forEachBounded<T>(
  items: Iterable<T>,
  concurrency: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  const iterator = items[Symbol.iterator]();
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    for (let next = iterator.next(); !next.done; next = iterator.next()) {
      try {
        await work(next.value);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  if (failure) throw failure.error;
}

/** Like {@link forEachBounded} over an async sequence: the workers pull the next item as each finishes (no batches). */
export async function forEachBoundedAsync<T>(
  items: AsyncIterable<T>,
  concurrency: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  const iterator = items[Symbol.asyncIterator]();
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    // An async generator queues concurrent next() calls: each item goes to one worker.
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      if (failure) continue;
      try {
        await work(next.value);
      } catch (error) {
        failure ??= { error };
        await iterator.return?.(undefined);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  if (failure) throw failure.error;
}

/** A function that runs its argument when one of `limit` slots is free: a bound on requests shared by many tasks. */
export function limiter(limit: number): <R>(task: () => Promise<R>) => Promise<R> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    if (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    else running++;
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}
