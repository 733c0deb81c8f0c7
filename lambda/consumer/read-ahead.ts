/**
 * Maps an async sequence through an async function with at most `limit` calls in flight, yielding the results in
 * the order of the sequence. Memory is bounded by `limit` results whatever the sequence's length; nothing is
 * fetched further ahead than that while the caller is busy with earlier results.
 */
export async function* mapInOrder<T, R>(
  source: AsyncIterable<T>,
  limit: number,
  fetch: (item: T) => Promise<R>,
): AsyncGenerator<R> {
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

/**
 * Pulls up to `size` items of `source` ahead of its consumer, in the background: the listing's next page (1,000
 * keys, a round trip) is fetched while the manifests of this one are, instead of the GETs draining while it comes.
 */
export async function* bufferAhead<T>(source: AsyncIterable<T>, size: number): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  const buffer: T[] = [];
  let done = false;
  let failure: { error: unknown } | undefined;
  let pumping = false;
  let closed = false;
  let wakeConsumer: (() => void) | undefined;
  const pump = async (): Promise<void> => {
    pumping = true;
    try {
      while (!done && buffer.length < size) {
        const next = await iterator.next();
        if (next.done) done = true;
        else buffer.push(next.value);
        wakeConsumer?.();
      }
    } catch (error) {
      failure = { error };
      done = true;
    } finally {
      pumping = false;
      wakeConsumer?.();
      // The consumer left while this pull was in flight: end the source now that it is idle.
      if (closed) void iterator.return?.();
    }
  };
  try {
    for (;;) {
      if (!pumping && !done && buffer.length < size) void pump();
      if (buffer.length > 0) {
        yield buffer.shift()!;
        continue;
      }
      if (done) {
        if (failure !== undefined) throw failure.error;
        return;
      }
      await new Promise<void>((resolve) => (wakeConsumer = resolve));
      wakeConsumer = undefined;
    }
  } finally {
    done = true;
    closed = true;
    if (!pumping) await iterator.return?.();
  }
}
