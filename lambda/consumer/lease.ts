/**
 * One active instance per named consumer: a lease beside its cursor, by the backfill's rule (contract/lease.ts):
 * taken by a compare-and-set on the lease seen once it lapsed or its holder is gone, renewed every third of its
 * length while the instance runs, given back (its end set to now) when it stops cleanly. Instances that find it held
 * stand by, looking again every `pollMs`, and take over when it lapses or its holder dies.
 */
import { judgeLease } from '../contract/lease.js';
import { holderGone as processGone, processHolder } from '../stores/lease-holder.js';
import type { ConsumerStateStore, LeaseRecord } from '../stores/types.js';
import { WakeUp } from './wake.js';

/** A dead instance's lease holds its name this long (ms), unless its holder is known gone. */
export const DEFAULT_LEASE_MS = 30_000;
/** A standing-by instance looks at the lease this often (ms). */
export const DEFAULT_STANDBY_POLL_MS = 1_000;

/** How a named consumer's instances share its name. */
export interface LeaseOptions {
  /** Who this instance is, as stored in the lease (default `<pid>@<host>#<run id>`). */
  readonly holder?: string;
  /** True when a holder is known to be gone: its lease is taken at once (default: a process of this host that no longer exists). */
  readonly holderGone?: (holder: string) => boolean;
  /** Lease length in ms (default {@link DEFAULT_LEASE_MS}); renewed every third of it. */
  readonly durationMs?: number;
  /** How often a standing-by instance looks at the lease (default {@link DEFAULT_STANDBY_POLL_MS}). */
  readonly pollMs?: number;
  /**
   * Wait while another instance holds the name, and take over when it stops or dies (default: with `follow`). Without
   * it, `consume` returns at once with `stoppedBy: held` and delivers nothing.
   */
  readonly standby?: boolean;
  /** Told once each time this instance starts standing by, with the lease that holds it off. */
  readonly onStandby?: (held: LeaseRecord) => void;
  /**
   * Told when this instance takes the name over: after standing by for it, or from a holder known gone before its
   * lease ended (not when it finds a lease given back or lapsed before it looked: that run had simply ended).
   */
  readonly onTakeOver?: (previous: LeaseRecord) => void;
}

/** The outcome of waiting for a lease. */
export type LeaseTake = { readonly taken: true } | { readonly taken: false; readonly held?: LeaseRecord };

/** One instance's hold on a consumer's lease. */
export class ConsumerLease {
  readonly holder: string;
  private readonly durationMs: number;
  private readonly pollMs: number;
  private readonly gone: (holder: string) => boolean;
  private current: LeaseRecord | undefined;
  private timer: NodeJS.Timeout | undefined;
  private renewing: Promise<void> | undefined;
  private readonly lostController = new AbortController();

  constructor(
    private readonly store: ConsumerStateStore,
    private readonly key: string,
    runId: string,
    private readonly options: LeaseOptions = {},
  ) {
    this.holder = options.holder ?? processHolder(runId);
    this.durationMs = options.durationMs ?? DEFAULT_LEASE_MS;
    this.pollMs = options.pollMs ?? DEFAULT_STANDBY_POLL_MS;
    this.gone = options.holderGone ?? processGone;
  }

  /** Aborts when this instance lost the lease (another took it, or it could not be renewed before it ended). */
  get lost(): AbortSignal {
    return this.lostController.signal;
  }

  /**
   * Takes the lease: at once when it is free, lapsed, this holder's or its holder is gone; otherwise, with `standby`,
   * once it becomes so (looking every `pollMs`), or not at all (`taken: false`, the lease that holds it).
   */
  async take(standby: boolean, signal?: AbortSignal): Promise<LeaseTake> {
    let told = false;
    for (;;) {
      if (signal?.aborted) return { taken: false };
      const seen = await this.store.readLease(this.key, signal === undefined ? undefined : { signal });
      const now = Date.now();
      const verdict = judgeLease(
        seen && { leaseUntil: seen.until, leaseHolder: seen.holder },
        this.holder,
        now,
        this.gone,
      );
      if (verdict !== 'held') {
        const next = { holder: this.holder, until: now + this.durationMs };
        if (await this.store.swapLease(this.key, seen, next)) {
          this.current = next;
          // A take-over is news when this instance stood by for it, or took a lease that had not ended (its holder
          // gone); a lease given back or lapsed before this instance looked was nobody's any more.
          if (seen !== undefined && seen.holder !== this.holder && (told || seen.until > now))
            this.options.onTakeOver?.(seen);
          this.beat();
          return { taken: true };
        }
        continue; // another instance took it first, or it was renewed: look again
      }
      if (!standby) return { taken: false, held: seen! };
      if (!told) this.options.onStandby?.(seen!);
      told = true;
      await new WakeUp().wait(this.pollMs, signal);
    }
  }

  /** True while this instance holds the lease by its own clock (renewed, and not past its end). */
  get held(): boolean {
    return this.current !== undefined && !this.lost.aborted && this.current.until > Date.now();
  }

  /** Stops renewing and gives the lease back (its end set to now), unless it was lost. */
  async release(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.renewing;
    const current = this.current;
    this.current = undefined;
    if (current === undefined || this.lost.aborted) return;
    await this.store.swapLease(this.key, current, { holder: this.holder, until: Date.now() }).catch(() => undefined);
  }

  private beat(): void {
    this.timer = setInterval(() => {
      if (this.renewing === undefined) this.renewing = this.renew().finally(() => (this.renewing = undefined));
    }, this.durationMs / 3);
    this.timer.unref();
  }

  /** Renews the lease; a failed condition (another holder now) or a lease run out before a renewal went through is a loss. */
  private async renew(): Promise<void> {
    const current = this.current;
    if (current === undefined || this.lost.aborted) return;
    const next = { holder: this.holder, until: Date.now() + this.durationMs };
    try {
      if (await this.store.swapLease(this.key, current, next)) {
        this.current = next;
        return;
      }
      // A retried write that had gone through leaves this holder's own lease: still held.
      const stored = await this.store.readLease(this.key);
      if (stored?.holder === this.holder) this.current = stored;
      else this.lose();
    } catch {
      // The store did not answer: the next beat tries again, unless the lease has run out meanwhile.
      if (current.until <= Date.now()) this.lose();
    }
  }

  private lose(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.lostController.abort();
  }
}
