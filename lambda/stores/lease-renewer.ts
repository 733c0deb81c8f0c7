import type { BackfillStore } from './types.js';

/** Where a failed renewal is told (a wing's engine logger). */
export interface RenewalLogger {
  warn(message: string, extra?: Record<string, unknown>): void;
}

/**
 * Keeps a plan's lease live while one of its items runs (a backfill's range, a view rebuild's range or shard; the
 * text below says range): renewed when the range starts and ends, and in
 * between whenever the range's checkpoint advances and at least a third of the lease has passed since the last
 * renewal. So a range that takes longer than the lease (a large `--range-leaves`, a slow source) still holds the
 * follower off, at the cost of one extra write per third of a lease, never one per leaf or per commit; and it
 * needs no timer, so nothing outlives the range.
 *
 * A failed renewal in the middle of a range is logged as a warning and tried again at the next checkpoint, and one
 * at its end (the range is stored and marked done) is a warning too: neither fails the range, because the lease only spares the follower work it would do twice (the writes are
 * idempotent and the cursor only moves forward), and a store that is really down fails the range's own
 * checkpoint write with the real error anyway.
 *
 * A renewal moves the lease only while `holder` holds it (see {@link BackfillStore.renewLease}): after a failed map
 * gave the lease back (`Release`), or a new execution took the plan over, the workers still running store their
 * ranges (harmless: idempotent) but no longer hold the follower off or refuse the next execution.
 */
export class LeaseRenewer {
  private last = Number.NEGATIVE_INFINITY;
  private renewing: Promise<void> | undefined;
  /** Renewals written (or attempted and failed) by this renewer. */
  renewals = 0;

  constructor(
    private readonly store: BackfillStore,
    private readonly cursorName: string,
    private readonly backfillId: string,
    private readonly leaseMs: number,
    private readonly now: () => number,
    private readonly logger: RenewalLogger,
    /** Who holds the plan's lease (the execution's ARN, the CLI's `<pid>@<host>`), when the caller knows it. */
    private readonly holder?: string,
    /** The warning of a failed renewal (the backfill's by default). */
    private readonly failedMessage = 'backfill lease renewal failed; the range goes on (the lease only holds the follower off)',
  ) {}

  /**
   * Renews the lease now; a store failure is thrown: at a range's start, before anything is fetched, a store that
   * cannot take this write could not take the range's checkpoints either.
   */
  async renew(): Promise<void> {
    const at = this.now();
    this.renewals++;
    await this.store.renewLease(this.cursorName, this.backfillId, at + this.leaseMs, this.holder, at);
    this.last = at;
  }

  /**
   * Called after each checkpoint write: renews when a third of the lease has passed since the last renewal
   * (one renewal at a time). Never throws: a failure is a warning, and the next checkpoint tries again.
   */
  async onCheckpoint(): Promise<void> {
    if (this.renewing !== undefined || this.now() - this.last < this.leaseMs / 3) return;
    await this.tryRenew();
  }

  /**
   * Renews now, a failure being a warning: at a range's end (it is stored and marked done, so a failed renewal is
   * no reason to report the range failed and have it retried), and mid-range through {@link onCheckpoint}.
   */
  async tryRenew(): Promise<void> {
    this.renewing = this.renew()
      .catch((error: unknown) => {
        this.logger.warn(this.failedMessage, {
          backfillId: this.backfillId,
          error: (error as Error)?.message ?? String(error),
        });
      })
      .finally(() => {
        this.renewing = undefined;
      });
    await this.renewing;
  }
}
