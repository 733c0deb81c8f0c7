/**
 * A hedged request: when an idempotent write has not answered within `afterMs`, the same write is sent once more,
 * and whichever succeeds first settles it. S3's latency has a long tail (a PUT in a thousand may take seconds,
 * nearly always independently of the next one), so a second PUT of the same bytes is usually answered long
 * before the first; AWS recommends exactly this for latency-sensitive work. Writing a leaf or a manifest twice
 * gives the same object (the contract), and a write still in flight when the other succeeded may land later with
 * the same bytes. Only slowness is hedged: a write that fails is the store client's to retry, and a write that
 * S3 has answered (a retry after SlowDown, a 5xx) is never hedged, so throttling is not met with more load.
 */

/**
 * Runs `write`, and once more after `afterMs` if the first has not settled and has not called `answered` (the
 * server answered it, and its client is retrying); resolves with the first success, rejects only when both
 * failed (with the first's error).
 */
export function hedged(write: (answered: () => void) => Promise<void>, afterMs: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let inFlight = 1;
    let hedgeSent = false;
    let settled = false;
    let firstError: unknown;
    const settle = (error?: unknown): void => {
      clearTimeout(timer);
      if (settled) return;
      settled = true;
      if (error === undefined) resolve();
      else reject(error);
    };
    const failed = (error: unknown, first: boolean): void => {
      inFlight--;
      if (first) firstError = error;
      // A failure before the hedge was sent is final (slowness, not failure, is hedged); after it, the other write decides.
      if (!hedgeSent || inFlight === 0) settle(firstError ?? error);
    };
    const timer = setTimeout(() => {
      if (settled) return;
      hedgeSent = true;
      inFlight++;
      write(noHedge).then(
        () => settle(),
        (error: unknown) => failed(error, false),
      );
    }, afterMs);
    // Answered, then retried by its client: throttled or refused, not slow; no hedge (nor once the hedge is out).
    const answered = (): void => clearTimeout(timer);
    write(answered).then(
      () => settle(),
      (error: unknown) => failed(error, true),
    );
  });
}

function noHedge(): void {}
