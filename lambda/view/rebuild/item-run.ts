/**
 * What every item of a rebuild does around its work (a range of phase 1, a shard of phase 2): skipped when done,
 * refused when its plan was abandoned, the plan's lease renewed at its start, every third of the lease while it
 * runs and at its end, and marked done with its counts once its work completed. Stopped by the deadline or the
 * signal, an item is not done; it is run again whole.
 */
import { BackfillStatus, ZERO_TOTALS, type BackfillTotals } from '../../contract/backfill.js';
import { DEFAULT_BACKFILL_LEASE_SECONDS } from '../../contract/settings.js';
import type { ViewRebuildPlan } from '../../contract/view-rebuild.js';
import { LeaseRenewer, type RenewalLogger } from '../../stores/lease-renewer.js';
import { ViewRebuildPlanError } from '../errors.js';
import type { RebuildStores } from './stores.js';

/** How an item runs: when it stops, and whose lease it renews. */
export interface ItemOptions {
  readonly signal?: AbortSignal;
  /** Epoch ms: no work starts after it (a Lambda's remaining time less its margin). */
  readonly deadline?: number;
  /** Who holds the plan's lease (the execution's ARN, the CLI's `<pid>@<host>`): renewed only while theirs. */
  readonly holder?: string;
  /** Seconds a renewal holds the lease for (default {@link DEFAULT_BACKFILL_LEASE_SECONDS}). */
  readonly leaseSeconds?: number;
  /** The lease's clock (epoch ms; default `Date.now`). */
  readonly now?: () => number;
  /** Where a failed renewal is told (default: nowhere). */
  readonly logger?: RenewalLogger;
}

/** What one run of an item did (plain JSON). */
export interface ItemOutcome {
  /** The item (its state's `n`). */
  readonly n: number;
  /** Done, by this run or before it. */
  readonly done: boolean;
  /** Done before this run: nothing was read. */
  readonly skipped: boolean;
  /** What this run did, as the item's state stores it (zero when skipped or stopped). */
  readonly totals: BackfillTotals;
}

/** What an item's work is given: whether it must stop now, and a call that renews the lease when a third passed. */
export interface ItemContext {
  stopped(): boolean;
  tick(): Promise<void>;
}

const QUIET: RenewalLogger = { warn() {} };

/** Runs one item's `work` (its totals, or undefined when it stopped) with the plan's lease, and marks it done. */
export async function itemRun(
  stores: RebuildStores,
  plan: ViewRebuildPlan,
  n: number,
  options: ItemOptions,
  work: (context: ItemContext) => Promise<BackfillTotals | undefined>,
): Promise<ItemOutcome> {
  const { plans } = stores;
  const { cursorName: planName, backfillId: rebuildId } = plan;
  const state = await plans.readRange(planName, rebuildId, n);
  if (state?.done) return { n, done: true, skipped: true, totals: ZERO_TOTALS };
  const current = await plans.readPlan(planName, rebuildId);
  if (current?.status === BackfillStatus.abandoned)
    throw new ViewRebuildPlanError(
      `view rebuild ${rebuildId} was abandoned at ${current.abandonedAt}: its item ${n} is not run`,
    );
  const now = options.now ?? Date.now;
  const lease = new LeaseRenewer(
    plans,
    planName,
    rebuildId,
    (options.leaseSeconds ?? DEFAULT_BACKFILL_LEASE_SECONDS) * 1000,
    now,
    options.logger ?? QUIET,
    options.holder,
    'view rebuild lease renewal failed; the item goes on (the lease only holds upkeep off)',
  );
  const stopped = (): boolean =>
    options.signal?.aborted === true || (options.deadline !== undefined && Date.now() >= options.deadline);
  if (stopped()) return { n, done: false, skipped: false, totals: ZERO_TOTALS };
  await lease.renew();
  const totals = await work({ stopped, tick: () => lease.onCheckpoint() });
  if (totals === undefined) return { n, done: false, skipped: false, totals: ZERO_TOTALS };
  await plans.markRangeDone(planName, rebuildId, n, { totals });
  await lease.tryRenew();
  return { n, done: true, skipped: false, totals };
}
