/**
 * One bound on the requests the view's upkeep has in flight, shared by its leaf body reads and its index reads and
 * writes, served by priority: writes first (each one finishes a package), then the batch's index reads (one round
 * trip each, so every package's build can start as its bodies come), then its body reads, then reads ahead for the
 * next batch. Within a priority, first come first served.
 */
import type { ConditionalWrite, StoredDocument, ViewDocuments } from './view-documents.js';

/** A request's priority in a {@link RequestBudget} (lower goes first). */
export const RequestPriority = { write: 0, read: 1, body: 2, ahead: 3 } as const;
/** One of {@link RequestPriority}'s values. */
export type RequestPriority = (typeof RequestPriority)[keyof typeof RequestPriority];

/** Runs `task` when one of the budget's slots is free and no task of a higher priority waits. */
export type RequestBudget = <R>(priority: RequestPriority, task: () => Promise<R>) => Promise<R>;

/** A {@link RequestBudget} of `limit` requests in flight. */
export function requestBudget(limit: number): RequestBudget {
  let running = 0;
  const waiting: (() => void)[][] = Object.values(RequestPriority).map(() => []);
  const next = (): (() => void) | undefined => {
    for (const queue of waiting) if (queue.length > 0) return queue.shift();
    return undefined;
  };
  return async (priority, task) => {
    if (running >= Math.max(1, limit)) await new Promise<void>((resolve) => waiting[priority]!.push(resolve));
    else running++;
    try {
      return await task();
    } finally {
      const start = next();
      // The slot goes straight to the next task, or is given back.
      if (start) start();
      else running--;
    }
  };
}

/**
 * `documents` with their requests under `budget`: reads at `read` priority, writes at `write`. A folder's
 * `writeMany` is not counted (one local round, no requests).
 */
export function budgeted(documents: ViewDocuments, budget: RequestBudget): ViewDocuments {
  const writeMany = documents.writeMany?.bind(documents);
  return {
    where: documents.where,
    read: (key): Promise<StoredDocument | undefined> => budget(RequestPriority.read, () => documents.read(key)),
    writeIf: (key, bytes, expected): Promise<boolean> =>
      budget(RequestPriority.write, () => documents.writeIf(key, bytes, expected)),
    ...(writeMany === undefined
      ? {}
      : { writeMany: (writes: readonly ConditionalWrite[]): Promise<boolean[]> => writeMany(writes) }),
  };
}
