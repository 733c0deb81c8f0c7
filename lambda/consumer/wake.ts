/**
 * How a follower waits for the watermark to move: a poll with backoff, cut short by {@link WakeUp.wake} (an S3
 * event, an SQS message, a signal) or ended by an `AbortSignal`.
 */

/** Poll intervals of follow mode, in ms: from `minMs`, doubling while nothing moves, up to `maxMs`. */
export interface PollOptions {
  readonly minMs?: number;
  readonly maxMs?: number;
}

/** Default poll: 1 s, doubling to 30 s while the watermark stands still. */
export const DEFAULT_POLL = { minMs: 1_000, maxMs: 30_000 } as const;

/**
 * A wake-up a follower can be given: `wake()` ends its current wait at once (or the next one, when it is busy
 * reading), so an event source (S3 events, a queue, a file watcher) cuts the poll short. Events are a wake-up, not
 * the data: the follower always reads the watermark again.
 */
export class WakeUp {
  private pending = false;
  private waiters = new Set<() => void>();

  /** Wakes every waiter now, or the next wait when none is waiting. */
  wake(): void {
    if (this.waiters.size === 0) {
      this.pending = true;
      return;
    }
    for (const waiter of this.waiters) waiter();
    this.waiters.clear();
  }

  /** Waits `ms`, or until woken or aborted (resolves, never rejects); true when woken. */
  wait(ms: number, signal?: AbortSignal): Promise<boolean> {
    if (this.pending || signal?.aborted) {
      const woken = this.pending;
      this.pending = false;
      return Promise.resolve(woken);
    }
    return new Promise((resolve) => {
      const finish = (woken: boolean): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.waiters.delete(onWake);
        resolve(woken);
      };
      const onWake = (): void => finish(true);
      const onAbort = (): void => finish(false);
      const timer = setTimeout(() => finish(false), ms);
      this.waiters.add(onWake);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** The next poll interval: doubled while nothing moved, back to the minimum when something did. */
export function nextInterval(current: number, moved: boolean, poll: Required<PollOptions>): number {
  return moved ? poll.minMs : Math.min(poll.maxMs, Math.max(poll.minMs, current * 2));
}
