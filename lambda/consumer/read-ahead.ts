/**
 * Maps an async sequence through an async function with at most `limit` calls in flight, yielding the results in
 * the order of the sequence. Memory is bounded by `limit` results whatever the sequence's length; nothing is
 * fetched further ahead than that while the caller is busy with earlier results.
 */
export async function* mapInOrder<T, R>(source: AsyncIterable<T>, limit: number, fetch: (item: T) => Promise<R>): AsyncGenerator<R> {
  const queue: Promise<R>[] = [];
  try {
    for await (const item of source) {
      const pending = fetch(item);
      // A failure surfaces when its turn comes; until then it must not count as unhandled.
      pending.catch(() => undefined);
      queue.push(pending);
      if (queue.length >= limit) yield await queue.shift()!;
    }
    while (queue.length > 0) yield await queue.shift()!;
  } finally {
    queue.length = 0;
  }
}
