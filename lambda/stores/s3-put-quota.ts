/**
 * The lean PUT's retry quota, as the AWS SDK's `standard` retry strategy keeps it (its `retry token bucket`):
 * one bucket per S3 client of 500 tokens; a retry takes 5 (10 after a timeout), and is not made when the bucket holds less; a success gives back what its retry took, or 1 when it
 * needed none. Under sustained throttling the bucket empties after about 100 retries and PUTs then fail at their
 * first refusal instead of multiplying the load by `maxAttempts`; it refills as PUTs succeed again.
 */

/** The SDK's standard-mode numbers (`@smithy/util-retry`). */
export const SDK_RETRY_QUOTA = { capacity: 500, retryCost: 5, timeoutCost: 10, successRefill: 1 } as const;

/** The numbers of a {@link RetryQuota}. */
export interface RetryQuotaSize {
  readonly capacity: number;
  readonly retryCost: number;
  readonly timeoutCost: number;
  readonly successRefill: number;
}

/** A retry token bucket shared by every PUT of one client (see the module). */
export class RetryQuota {
  private tokens: number;

  constructor(private readonly size: RetryQuotaSize = SDK_RETRY_QUOTA) {
    this.tokens = size.capacity;
  }

  /** Tokens left. */
  get available(): number {
    return this.tokens;
  }

  /** Takes the cost of one retry; returns what it took, or undefined (no retry) when the bucket holds too little. */
  acquire(timeout: boolean): number | undefined {
    const cost = timeout ? this.size.timeoutCost : this.size.retryCost;
    if (this.tokens < cost) return undefined;
    this.tokens -= cost;
    return cost;
  }

  /** A PUT succeeded: gives back what its last retry took (`taken`), or the refill of a first-attempt success. */
  release(taken: number | undefined): void {
    this.tokens = Math.min(this.size.capacity, this.tokens + (taken ?? this.size.successRefill));
  }
}
