/**
 * The lease rule shared by the backfill's plan and a named consumer (contract.md): a lease names its holder and
 * lasts until an epoch-ms time; a holder renews it before a third of it has passed, and gives it back on a clean
 * stop by setting its end to now. Another may take it, by a compare-and-set on the lease it saw, once it has lapsed
 * or once its holder is known to be gone (the CLI: a process of this host that no longer exists); its own holder
 * may take it again at any time.
 */

/** A lease as stored. */
export interface LeaseView {
  /** Epoch ms. */
  readonly leaseUntil: number;
  /** Who took it last, when it named itself. */
  readonly leaseHolder?: string;
}

/** Why a lease may or may not be taken: `free` (lapsed or none), `mine`, `gone` (its holder died), `held`. */
export type LeaseVerdict = 'free' | 'mine' | 'gone' | 'held';

/** Whether `holder` may take `lease` at `now`. */
export function judgeLease(
  lease: LeaseView | undefined,
  holder: string | undefined,
  now: number,
  holderGone?: (holder: string) => boolean,
): LeaseVerdict {
  if (lease === undefined) return 'free';
  if (lease.leaseHolder !== undefined && lease.leaseHolder === holder) return 'mine';
  if (lease.leaseUntil <= now) return 'free';
  if (lease.leaseHolder !== undefined && holderGone?.(lease.leaseHolder) === true) return 'gone';
  return 'held';
}
