/**
 * One plan at a time per name, taken up again by a rerun: the lease logic of a plan kept in a {@link BackfillStore}
 * (the backfill's plans per cursor, the view rebuild's per mirror), apart from what the plan is of. It answers with
 * data, not errors: each wing tells its own callers what a running or mismatching plan means.
 */
import { BackfillStatus, type BackfillPlan } from '../contract/backfill.js';
import { judgeLease } from '../contract/lease.js';
import { idAfter } from '../ids/id-after.js';
import type { BackfillStore } from './types.js';

/** A setting the unfinished plan was made with, and the other value asked now. */
export interface PlanDifference {
  readonly name: string;
  readonly plan: string;
  readonly asked: string;
}

/** Options of {@link takePlan}. */
export interface TakePlanOptions {
  /**
   * The id a new plan gets when none is taken up; when it would not sort after the newest plan's (a kuuid id of the
   * same second), the id right after that one instead (`idAfter`): the plan claimed is the name's newest.
   */
  readonly newId: string;
  /** How long a lease taken holds (ms). */
  readonly leaseMs: number;
  /**
   * Who takes it (the CLI: `<pid>@<host>`; on AWS the execution's ARN), stored as the lease's holder: the same holder
   * takes its own live lease up again (a retried planner).
   */
  readonly holder?: string;
  /** True when a live lease's holder is known to be gone (a process of this host that no longer exists). */
  readonly holderGone?: (holder: string) => boolean;
  /** What the caller asks that differs from the unfinished plan: any difference refuses taking it up. */
  readonly differences?: (plan: BackfillPlan) => readonly PlanDifference[];
  /**
   * False when the unfinished plan cannot be run again (its items file is gone): it is then abandoned, its claim
   * cleared, and a new plan claimed. Asked after its lease was taken.
   */
  readonly usable?: (plan: BackfillPlan) => Promise<boolean>;
  /** Told of a plan abandoned because it was not {@link usable}. */
  readonly onAbandoned?: (plan: BackfillPlan) => void;
  /** The clock (epoch ms; default `Date.now`). */
  readonly now?: () => number;
}

/** What {@link takePlan} did. */
export type PlanTake =
  /** The unfinished plan, its lease now the caller's (`leaseUntil`, `leaseHolder` as stored). */
  | { readonly taken: 'resumed'; readonly plan: BackfillPlan }
  /** No plan to take up: the name's active-plan item is claimed for `newId`, whose plan the caller now makes. */
  | { readonly taken: 'claimed'; readonly id: string }
  /** Another holds it: its plan, until when and by whom (`planning` while its plan is not written yet). */
  | {
      readonly taken: 'running';
      readonly planId: string;
      readonly leaseUntil: number | undefined;
      readonly holder: string | undefined;
      readonly planning: boolean;
    }
  /** The unfinished plan was made with other settings than asked: nothing was taken. */
  | { readonly taken: 'mismatch'; readonly planId: string; readonly differences: readonly PlanDifference[] };

/**
 * Takes the name's unfinished plan up (its lease by a compare-and-set on the lease seen), or claims the name's
 * active-plan item for a new plan (a conditional write: of two planners at once, one wins). A plan whose lease is
 * live and not the caller's, or a claim still being planned, is `running`.
 */
export async function takePlan(store: BackfillStore, name: string, options: TakePlanOptions): Promise<PlanTake> {
  const now = options.now ?? Date.now;
  const newest = await store.newestPlan(name);
  if (newest !== undefined && newest.status === BackfillStatus.running) {
    const resumed = await resume(store, name, newest, options, now());
    if (resumed !== undefined) return resumed;
  }
  // The new plan's id sorts after every plan of the name, so that it is the newest plan found (a fresh id made in the
  // same second as the plan before it would sort before that one half the time).
  return claim(store, name, { ...options, newId: idAfter(newest?.backfillId, options.newId) }, now());
}

/** Takes up a running plan, or undefined when it is not usable (abandoned: a new one is claimed). */
async function resume(
  store: BackfillStore,
  name: string,
  plan: BackfillPlan,
  options: TakePlanOptions,
  now: number,
): Promise<PlanTake | undefined> {
  const differences = options.differences?.(plan) ?? [];
  if (differences.length > 0) return { taken: 'mismatch', planId: plan.backfillId, differences };
  // The lease's own holder takes it again (a retried planner of the same execution); a holder known to be gone too.
  if (judgeLease(plan, options.holder, now, options.holderGone) === 'held') return running(plan.backfillId, plan);
  const leaseUntil = now + options.leaseMs;
  if (!(await store.setLease(name, plan.backfillId, leaseUntil, plan.leaseUntil, options.holder)))
    return running(plan.backfillId, await store.readPlan(name, plan.backfillId));
  if (options.usable !== undefined && !(await options.usable(plan))) {
    options.onAbandoned?.(plan);
    await store.abandonPlan(name, plan.backfillId, new Date(now).toISOString());
    await store.releaseActive(name, plan.backfillId);
    return undefined;
  }
  return {
    taken: 'resumed',
    plan: { ...plan, leaseUntil, ...(options.holder === undefined ? {} : { leaseHolder: options.holder }) },
  };
}

/** Claims the name's active-plan item for a new plan, taking over a stale claim; `running` when another holds it. */
async function claim(store: BackfillStore, name: string, options: TakePlanOptions, now: number): Promise<PlanTake> {
  const active = await store.readActive(name);
  let replacing: string | undefined;
  if (active !== undefined) {
    const plan = await store.readPlan(name, active.backfillId);
    const planning = plan === undefined && active.claimedAt + options.leaseMs > now;
    if (planning || (plan?.status === BackfillStatus.running && plan.leaseUntil > now))
      return claimed(active.backfillId, active, plan, options.leaseMs);
    // A claim left behind: its planner died before its plan item (and a lease's time ago), or its plan is over.
    replacing = active.backfillId;
  }
  if (!(await store.claimActive(name, options.newId, replacing, now, options.holder))) {
    // Two planners at once (a double start): the other claimed first, and may not have written its plan yet.
    const winner = await store.readActive(name);
    const plan = winner === undefined ? undefined : await store.readPlan(name, winner.backfillId);
    return claimed(winner?.backfillId ?? '(unknown)', winner, plan, options.leaseMs);
  }
  return { taken: 'claimed', id: options.newId };
}

/** A plan held by another, as its lease says. */
function running(planId: string, plan: BackfillPlan | undefined): PlanTake {
  return {
    taken: 'running',
    planId,
    leaseUntil: plan?.leaseUntil,
    holder: plan?.leaseHolder,
    planning: plan?.leaseUntil === undefined,
  };
}

/**
 * A claim held by another: its plan's lease, or, while the plan is still being planned, its claim's (the claim
 * holds the name for a lease's time from when it was made).
 */
function claimed(
  planId: string,
  active: { readonly claimedAt: number; readonly holder?: string } | undefined,
  plan: BackfillPlan | undefined,
  leaseMs: number,
): PlanTake {
  return {
    taken: 'running',
    planId,
    leaseUntil: plan?.leaseUntil ?? (active === undefined ? undefined : active.claimedAt + leaseMs),
    holder: plan?.leaseHolder ?? active?.holder,
    planning: plan === undefined,
  };
}
