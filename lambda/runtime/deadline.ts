/** How long before its limit a Lambda stops its work, the same for every function of the stack. */

/**
 * The time kept back from the Lambda's limit: at the deadline the engine aborts the requests in flight (catalog
 * GETs, S3 PUTs of leaves and their retry waits, DynamoDB reads), and within this margin it writes the
 * manifests of completed commits (aborted 2 s past the deadline if S3 has not answered), checkpoints the cursor,
 * writes the watermark and stores the run: the checkpoints and the watermark aborted 2 s before the function's end,
 * the run-log record a second before it (the follower's `CLOSE_BEFORE_END_MS`), so no write outlives the invocation.
 * A fifth of the remaining time, at least 5 s and at most 30 s.
 */
export function safetyMarginMs(remainingMs: number): number {
  return Math.min(30_000, Math.max(5_000, Math.floor(remainingMs / 5)));
}

/** The epoch ms at which a function with `remainingMs` left stops its work: its limit less {@link safetyMarginMs}. */
export function deadlineOf(remainingMs: number, now: number = Date.now()): number {
  return now + remainingMs - safetyMarginMs(remainingMs);
}
