import {
  backfillRangesKey,
  BackfillStatus,
  MAX_RANGE_ITEM_BYTES,
  MAX_RANGE_LEAVES,
  type BackfillPlan,
  type BackfillRange,
} from '../contract/backfill.js';
import {
  DEFAULT_BACKFILL_LEASE_SECONDS,
  DEFAULT_RANGE_LEAVES,
  SettingsError,
  type SyncSettings,
} from '../contract/settings.js';
import { judgeLease } from '../contract/lease.js';
import { formatTimestamp, MIN_TICKS, type Ticks } from '../contract/time.js';
import { id as newId } from '../ids/kuuid.js';
import type { BackfillDeps } from '../sync/engine-deps.js';
import { cutRanges } from './cut-ranges.js';
import type { ActivePlanClaim, BackfillStore } from '../stores/types.js';
import { BackfillMismatchError, BackfillPlanError, BackfillRunningError } from './errors.js';
import { finishBackfill } from './finish.js';

/** Options of {@link planBackfill}. */
export interface PlanOptions {
  /** The bound B when it is before the index head (`--until`). */
  readonly until?: Ticks;
  /** Target leaves per range (default {@link DEFAULT_RANGE_LEAVES}, at most {@link MAX_RANGE_LEAVES}). */
  readonly rangeLeaves?: number;
  /** Seconds the lease holds off the follower (default {@link DEFAULT_BACKFILL_LEASE_SECONDS}). */
  readonly leaseSeconds?: number;
  /**
   * Who plans (the CLI: `<pid>@<host>`; on AWS the execution's ARN), stored as the lease's holder: the same holder
   * takes its own live lease up again (a retried planner).
   */
  readonly holder?: string;
  /**
   * True when a live lease's holder is known to be gone (the CLI: a process of this host that no longer exists), so
   * its plan may be taken up at once instead of when the lease lapses.
   */
  readonly holderGone?: (holder: string) => boolean;
}

/** A plan and its ranges. */
export interface PlannedBackfill {
  readonly plan: BackfillPlan;
  readonly ranges: BackfillRange[];
  /** The cursor's unfinished plan was taken up again (same id, same ranges). */
  readonly resumed: boolean;
}

/**
 * Plans a backfill of a cursor, or resumes its unfinished one (same id, its ranges file read again, its lease
 * taken). One plan at a time: an unfinished plan whose lease is live (someone runs it) is not resumed but refused
 * with {@link BackfillRunningError}, and two planners at once make one plan (each claims the cursor's active-plan
 * item with a conditional write first; the loser is refused naming the winner's plan). A rerun asking another
 * `until` or `rangeLeaves` than the unfinished plan's is refused with {@link BackfillMismatchError}. A plan whose
 * ranges file is gone is abandoned (with a warning) and a new one is made.
 *
 * A new plan reads the catalog index once, bounds it at B (the index head, `until`, or a dependency cursor,
 * whichever is first), cuts the pages after the stored cursor (or `settings.startCursor`) into ranges, writes the
 * ranges file, then the plan item (the plan's commit point). With B at or before the cursor the plan has no range
 * and is finished at once.
 */
export async function planBackfill(
  settings: SyncSettings,
  deps: BackfillDeps,
  options: PlanOptions = {},
): Promise<PlannedBackfill> {
  const backfills = storeOf(deps, 'planBackfill');
  if (
    options.rangeLeaves !== undefined &&
    !(Number.isSafeInteger(options.rangeLeaves) && options.rangeLeaves >= 1 && options.rangeLeaves <= MAX_RANGE_LEAVES)
  ) {
    throw new SettingsError(
      'rangeLeaves',
      `must be a whole number from 1 to ${MAX_RANGE_LEAVES} (got ${JSON.stringify(options.rangeLeaves)})`,
    );
  }
  const leaseMs = (options.leaseSeconds ?? DEFAULT_BACKFILL_LEASE_SECONDS) * 1000;
  const newest = await backfills.newestPlan(settings.cursorName);
  if (newest !== undefined && newest.status === BackfillStatus.running) {
    const resumed = await resume(settings, deps, newest, options, leaseMs);
    if (resumed !== undefined) return resumed;
  }

  const backfillId = deps.runId ?? newId();
  await claim(settings, backfills, backfillId, leaseMs, options.holder);
  try {
    return await planAnew(settings, deps, backfillId, options, leaseMs);
  } catch (error) {
    // No plan (or a plan that can never run): let the next planner claim the cursor at once.
    if ((await backfills.readPlan(settings.cursorName, backfillId)) === undefined)
      await backfills.releaseActive(settings.cursorName, backfillId).catch(() => undefined);
    throw error;
  }
}

/**
 * Abandons the cursor's unfinished plan (`backfill --abandon`, the input `{"abandon": true}`): it is never run or
 * finished again, what its ranges stored stays stored, and the next planner plans anew. Returns the abandoned plan,
 * or undefined when there was none. A plan whose lease is live is abandoned too (its workers find it abandoned: the
 * caller was told who held it).
 */
export async function abandonBackfill(settings: SyncSettings, deps: BackfillDeps): Promise<BackfillPlan | undefined> {
  const backfills = storeOf(deps, 'abandonBackfill');
  const newest = await backfills.newestPlan(settings.cursorName);
  const active = await backfills.readActive(settings.cursorName);
  let abandoned: BackfillPlan | undefined;
  if (
    newest !== undefined &&
    newest.status === BackfillStatus.running &&
    (await backfills.abandonPlan(settings.cursorName, newest.backfillId, new Date().toISOString()))
  ) {
    abandoned = await backfills.readPlan(settings.cursorName, newest.backfillId);
    deps.logger?.warn('backfill abandoned', {
      backfillId: newest.backfillId,
      leaseUntil: newest.leaseUntil,
      holder: newest.leaseHolder,
    });
  }
  if (active !== undefined) await backfills.releaseActive(settings.cursorName, active.backfillId);
  return abandoned;
}

/**
 * Gives a running plan's lease back at once (a clean stop of the CLI, a failed map on AWS): the follower is no longer
 * held off, and the next planner resumes the plan without waiting. Done ranges stay done.
 */
export async function releaseBackfillLease(
  settings: SyncSettings,
  deps: BackfillDeps,
  backfillId: string,
): Promise<void> {
  await storeOf(deps, 'releaseBackfillLease').setLease(settings.cursorName, backfillId, Date.now(), undefined);
}

/** Takes up a running plan, or undefined when its ranges file is gone (the plan is abandoned: plan anew). */
async function resume(
  settings: SyncSettings,
  deps: BackfillDeps,
  plan: BackfillPlan,
  options: PlanOptions,
  leaseMs: number,
): Promise<PlannedBackfill | undefined> {
  const backfills = storeOf(deps, 'planBackfill');
  const differences = [];
  if (options.until !== undefined && plan.until !== formatTimestamp(options.until)) {
    differences.push({
      name: 'until',
      plan: plan.until ?? `none (B = ${plan.bound}, the index head then)`,
      asked: formatTimestamp(options.until),
    });
  }
  if (options.rangeLeaves !== undefined && plan.rangeLeaves !== options.rangeLeaves) {
    differences.push({
      name: 'rangeLeaves',
      plan: String(plan.rangeLeaves ?? 'unknown (planned before it was recorded)'),
      asked: String(options.rangeLeaves),
    });
  }
  if (differences.length > 0) throw new BackfillMismatchError(plan.backfillId, differences);
  const now = Date.now();
  // The lease's own holder takes it again (a retried planner of the same execution); a holder known to be gone too.
  if (judgeLease(plan, options.holder, now, options.holderGone) === 'held')
    throw new BackfillRunningError(plan.backfillId, settings.cursorName, plan.leaseUntil, plan.leaseHolder);
  // Compare-and-set on the lease seen: of two planners taking it up at once, one wins; the other is refused.
  if (
    !(await backfills.setLease(settings.cursorName, plan.backfillId, now + leaseMs, plan.leaseUntil, options.holder))
  ) {
    const current = await backfills.readPlan(settings.cursorName, plan.backfillId);
    throw new BackfillRunningError(plan.backfillId, settings.cursorName, current?.leaseUntil, current?.leaseHolder);
  }
  const key = backfillRangesKey(plan.prefix, plan.backfillId);
  if ((await deps.snapshots.getJson(key).catch(() => null)) === undefined) {
    deps.logger?.warn('backfill abandoned: its ranges file is gone; planning anew', {
      backfillId: plan.backfillId,
      key,
    });
    await backfills.abandonPlan(settings.cursorName, plan.backfillId, new Date().toISOString());
    await backfills.releaseActive(settings.cursorName, plan.backfillId);
    return undefined;
  }
  const ranges = await readRanges(settings, deps, plan);
  return {
    plan: {
      ...plan,
      leaseUntil: now + leaseMs,
      ...(options.holder === undefined ? {} : { leaseHolder: options.holder }),
    },
    ranges,
    resumed: true,
  };
}

/**
 * Claims the cursor's active-plan item for `backfillId` (naming `holder`), taking over a stale claim; refuses when
 * another holds it.
 */
async function claim(
  settings: SyncSettings,
  backfills: BackfillStore,
  backfillId: string,
  leaseMs: number,
  holder: string | undefined,
): Promise<void> {
  const now = Date.now();
  const active = await backfills.readActive(settings.cursorName);
  let replacing: string | undefined;
  if (active !== undefined) {
    const plan = await backfills.readPlan(settings.cursorName, active.backfillId);
    const planning = plan === undefined && active.claimedAt + leaseMs > now;
    if (planning || (plan?.status === BackfillStatus.running && plan.leaseUntil > now))
      throw runningError(settings, active, plan, leaseMs);
    // A claim left behind: its planner died before its plan item (and a lease's time ago), or its plan is over.
    replacing = active.backfillId;
  }
  if (!(await backfills.claimActive(settings.cursorName, backfillId, replacing, now, holder))) {
    // Two planners at once (a double start): the other claimed first, and may not have written its plan yet.
    const winner = await backfills.readActive(settings.cursorName);
    const plan = winner === undefined ? undefined : await backfills.readPlan(settings.cursorName, winner.backfillId);
    throw runningError(settings, winner, plan, leaseMs);
  }
}

/**
 * The refusal naming the plan that holds the cursor, who holds it and until when: its plan's lease, or, while the
 * plan is still being planned, its claim's (the claim holds the cursor for a lease's time from when it was made).
 */
function runningError(
  settings: SyncSettings,
  active: ActivePlanClaim | undefined,
  plan: BackfillPlan | undefined,
  leaseMs: number,
): BackfillRunningError {
  const planning = plan === undefined;
  const until = plan?.leaseUntil ?? (active === undefined ? undefined : active.claimedAt + leaseMs);
  return new BackfillRunningError(
    active?.backfillId ?? '(unknown)',
    settings.cursorName,
    until,
    plan?.leaseHolder ?? active?.holder,
    planning,
  );
}

async function planAnew(
  settings: SyncSettings,
  deps: BackfillDeps,
  backfillId: string,
  options: PlanOptions,
  leaseMs: number,
): Promise<PlannedBackfill> {
  const backfills = storeOf(deps, 'planBackfill');
  const stored = await deps.cursors.read(settings.cursorName);
  const start = stored?.value ?? settings.startCursor;
  const bounds = {
    ...(deps.deadline === undefined ? {} : { deadline: deps.deadline }),
    ...(deps.signal === undefined ? {} : { signal: deps.signal }),
  };
  const index = await deps.catalog.getIndex(bounds);
  deps.onIndex?.(index.commitTicks);
  let bound = index.commitTicks;
  if (options.until !== undefined && options.until < bound) bound = options.until;
  for (const dependency of settings.dependsOn) {
    const value = (await deps.cursors.read(dependency))?.value ?? MIN_TICKS;
    if (value < bound) bound = value;
  }
  const rangeLeaves = options.rangeLeaves ?? DEFAULT_RANGE_LEAVES;
  const ranges = cutRanges(index, start, bound, rangeLeaves, backfillId);
  for (const range of ranges) {
    const bytes = Buffer.byteLength(JSON.stringify(range));
    if (bytes > MAX_RANGE_ITEM_BYTES) {
      throw new BackfillPlanError(
        `backfill of cursor ${settings.cursorName}: range ${range.n} (${range.pages.length} pages) takes ${bytes} bytes, more than a batch may hold (${MAX_RANGE_ITEM_BYTES}); no plan was made`,
      );
    }
  }
  const plan: BackfillPlan = {
    backfillId,
    cursorName: settings.cursorName,
    source: settings.source,
    prefix: settings.prefix,
    start: formatTimestamp(start),
    bound: formatTimestamp(bound > start ? bound : start),
    ranges: ranges.length,
    leaves: ranges.reduce((sum, range) => sum + range.leaves, 0),
    createdAt: new Date().toISOString(),
    status: BackfillStatus.running,
    leaseUntil: Date.now() + leaseMs,
    ...(options.holder === undefined ? {} : { leaseHolder: options.holder }),
    ...(options.until === undefined ? {} : { until: formatTimestamp(options.until) }),
    rangeLeaves,
  };
  await deps.snapshots.putJson(backfillRangesKey(settings.prefix, backfillId), ranges);
  if (!(await backfills.createPlan(plan)))
    throw new BackfillPlanError(`backfill ${backfillId} of cursor ${settings.cursorName} exists already`);
  if (ranges.length === 0) {
    await finishBackfill(settings, deps, backfillId);
    const finished = await backfills.readPlan(settings.cursorName, backfillId);
    return { plan: finished ?? plan, ranges, resumed: false };
  }
  return { plan, ranges, resumed: false };
}

function storeOf(deps: BackfillDeps, what: string): BackfillStore {
  if (deps.backfills === undefined) throw new BackfillPlanError(`${what} needs a backfill store (deps.backfills)`);
  return deps.backfills;
}

/** A plan's ranges, from its ranges file. */
export async function readRanges(
  settings: SyncSettings,
  deps: BackfillDeps,
  plan: BackfillPlan,
): Promise<BackfillRange[]> {
  const key = backfillRangesKey(plan.prefix, plan.backfillId);
  let ranges: unknown;
  try {
    ranges = await deps.snapshots.getJson(key);
  } catch (cause) {
    throw new BackfillPlanError(
      `backfill ${plan.backfillId}: cannot read its ranges file ${key}: ${(cause as Error).message}`,
      { cause },
    );
  }
  if (!Array.isArray(ranges) || ranges.length !== plan.ranges) {
    throw new BackfillPlanError(
      `backfill ${plan.backfillId} of cursor ${settings.cursorName}: its ranges file ${key} is missing or does not list ${plan.ranges} ranges; abandon the plan to plan anew (\`catalog-sync backfill --abandon\`, or the input {"abandon": true} on AWS)`,
    );
  }
  return ranges as BackfillRange[];
}
