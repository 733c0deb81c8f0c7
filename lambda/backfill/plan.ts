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
import { formatTimestamp, MIN_TICKS, type Ticks } from '../contract/time.js';
import { id as newId } from '../ids/kuuid.js';
import type { BackfillDeps } from '../sync/engine-deps.js';
import { cutRanges } from './cut-ranges.js';
import { takePlan, type PlanDifference } from '../stores/plan-lease.js';
import type { BackfillStore } from '../stores/types.js';
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
  const taken = await takePlan(backfills, settings.cursorName, {
    newId: deps.runId ?? newId(),
    leaseMs,
    ...(options.holder === undefined ? {} : { holder: options.holder }),
    ...(options.holderGone === undefined ? {} : { holderGone: options.holderGone }),
    differences: (plan) => differencesOf(plan, options),
    // A plan whose ranges file is gone is abandoned, and a new one is made.
    usable: async (plan) =>
      (await deps.snapshots.getJson(backfillRangesKey(plan.prefix, plan.backfillId)).catch(() => null)) !== undefined,
    onAbandoned: (plan) =>
      deps.logger?.warn('backfill abandoned: its ranges file is gone; planning anew', {
        backfillId: plan.backfillId,
        key: backfillRangesKey(plan.prefix, plan.backfillId),
      }),
  });
  if (taken.taken === 'mismatch') throw new BackfillMismatchError(taken.planId, taken.differences);
  if (taken.taken === 'running')
    throw new BackfillRunningError(taken.planId, settings.cursorName, taken.leaseUntil, taken.holder, taken.planning);
  if (taken.taken === 'resumed')
    return { plan: taken.plan, ranges: await readRanges(settings, deps, taken.plan), resumed: true };
  const backfillId = taken.id;
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

/** What a rerun asks that differs from the unfinished plan: `until` or `rangeLeaves`. */
function differencesOf(plan: BackfillPlan, options: PlanOptions): PlanDifference[] {
  const differences: PlanDifference[] = [];
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
  return differences;
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
