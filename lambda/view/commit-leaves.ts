import type { MirrorCommit } from '../consumer/mirror.js';
import { leafFieldsOf } from './leaf-fields.js';
import type { ViewLeaf } from './package-index.js';

/** A commit's leaves grouped by package (id lowercased), in manifest order, with the details leaves' filter fields read. */
export async function packagesOf(commit: MirrorCommit): Promise<Map<string, ViewLeaf[]>> {
  const groups = new Map<string, ViewLeaf[]>();
  const leaves = await Promise.all(
    commit.leaves.map(async (leaf): Promise<ViewLeaf> => {
      const base = { key: leaf.key, id: leaf.id, version: leaf.version, type: leaf.type };
      if (leaf.quarantined) return { ...base, quarantined: true };
      if (leaf.type === 'PackageDelete') return base;
      return { ...base, fields: leafFieldsOf(await leaf.json()) };
    }),
  );
  for (const leaf of leaves) {
    const id = leaf.id.toLowerCase();
    const group = groups.get(id);
    if (group === undefined) groups.set(id, [leaf]);
    else group.push(leaf);
  }
  return groups;
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
