import { backfillRangesKey, BackfillStatus, type BackfillPlan, type BackfillRange } from '../../contract/backfill.js';
import { DEFAULT_BACKFILL_LEASE_SECONDS, DEFAULT_RANGE_LEAVES, type SyncSettings } from '../../contract/settings.js';
import { formatTimestamp, MIN_TICKS, type Ticks } from '../../contract/time.js';
import { id as newId } from '../../ids/kuuid.js';
import type { BackfillDeps } from '../engine-deps.js';
import { cutRanges } from './cut-ranges.js';
import { BackfillPlanError } from './errors.js';
import { finishBackfill } from './finish.js';

/** Options of {@link planBackfill}. */
export interface PlanOptions {
  /** The bound B when it is before the index head (`--until`). */
  readonly until?: Ticks;
  /** Target leaves per range (default {@link DEFAULT_RANGE_LEAVES}). */
  readonly rangeLeaves?: number;
  /** Seconds the lease holds off the follower (default {@link DEFAULT_BACKFILL_LEASE_SECONDS}). */
  readonly leaseSeconds?: number;
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
 * renewed). A new plan reads the catalog index once, bounds it at B (the index head, `until`, or a dependency
 * cursor, whichever is first), cuts the pages after the stored cursor (or `settings.startCursor`) into ranges,
 * writes the ranges file, then the plan item (the plan's commit point). With B at or before the cursor the plan
 * has no range and is finished at once.
 */
export async function planBackfill(settings: SyncSettings, deps: BackfillDeps, options: PlanOptions = {}): Promise<PlannedBackfill> {
  const { backfills, snapshots } = deps;
  if (backfills === undefined) throw new BackfillPlanError('planBackfill needs a backfill store (deps.backfills)');
  const leaseMs = (options.leaseSeconds ?? DEFAULT_BACKFILL_LEASE_SECONDS) * 1000;
  const newest = await backfills.newestPlan(settings.cursorName);
  if (newest !== undefined && newest.status === BackfillStatus.running) {
    const ranges = await readRanges(settings, deps, newest);
    const leaseUntil = Date.now() + leaseMs;
    await backfills.renewLease(settings.cursorName, newest.backfillId, leaseUntil);
    return { plan: { ...newest, leaseUntil: Math.max(leaseUntil, newest.leaseUntil) }, ranges, resumed: true };
  }

  const stored = await deps.cursors.read(settings.cursorName);
  const start = stored?.value ?? settings.startCursor;
  const bounds = { ...(deps.deadline === undefined ? {} : { deadline: deps.deadline }), ...(deps.signal === undefined ? {} : { signal: deps.signal }) };
  const index = await deps.catalog.getIndex(bounds);
  deps.onIndex?.(index.commitTicks);
  let bound = index.commitTicks;
  if (options.until !== undefined && options.until < bound) bound = options.until;
  for (const dependency of settings.dependsOn) {
    const value = (await deps.cursors.read(dependency))?.value ?? MIN_TICKS;
    if (value < bound) bound = value;
  }
  const backfillId = deps.runId ?? newId();
  const ranges = cutRanges(index, start, bound, options.rangeLeaves ?? DEFAULT_RANGE_LEAVES, backfillId);
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
  };
  await snapshots.putJson(backfillRangesKey(settings.prefix, backfillId), ranges);
  if (!(await backfills.createPlan(plan))) throw new BackfillPlanError(`backfill ${backfillId} of cursor ${settings.cursorName} exists already`);
  if (ranges.length === 0) {
    await finishBackfill(settings, deps, backfillId);
    const finished = await backfills.readPlan(settings.cursorName, backfillId);
    return { plan: finished ?? plan, ranges, resumed: false };
  }
  return { plan, ranges, resumed: false };
}

/** A plan's ranges, from its ranges file. */
export async function readRanges(settings: SyncSettings, deps: BackfillDeps, plan: BackfillPlan): Promise<BackfillRange[]> {
  const key = backfillRangesKey(plan.prefix, plan.backfillId);
  let ranges: unknown;
  try {
    ranges = await deps.snapshots.getJson(key);
  } catch (cause) {
    throw new BackfillPlanError(`backfill ${plan.backfillId}: cannot read its ranges file ${key}: ${(cause as Error).message}`, { cause });
  }
  if (!Array.isArray(ranges) || ranges.length !== plan.ranges) {
    throw new BackfillPlanError(`backfill ${plan.backfillId} of cursor ${settings.cursorName}: its ranges file ${key} is missing or does not list ${plan.ranges} ranges`);
  }
  return ranges as BackfillRange[];
}
