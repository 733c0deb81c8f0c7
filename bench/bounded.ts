/** A bound on work in flight, for the benchmark's own loops (no import: a scenario's child loads nothing more). */

/** Runs `task` over `items`, `limit` at once. */
export async function eachBounded<T>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await task(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
