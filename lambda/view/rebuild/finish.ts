/**
 * The end of a rebuild: its finish (the view consumer's cursor moved up to the bound only once every range and
 * shard is done; idempotent), the lease given back at once after a failure (release), and abandon.
 */
import { addTotals, BackfillStatus, ZERO_TOTALS, type BackfillTotals } from '../../contract/backfill.js';
import type { RunSummary } from '../../contract/run-summary.js';
import { formatTimestamp, MIN_TIMESTAMP, parseTimestamp } from '../../contract/time.js';
import type { ViewRebuildPlan } from '../../contract/view-rebuild.js';
import { id as kuuidId } from '../../ids/kuuid.js';
import type { CursorStore } from '../../stores/types.js';
import { ViewRebuildIncompleteError, ViewRebuildPlanError } from '../errors.js';
import type { ViewCounts } from '../view-consumer.js';
import { VIEW_CONSUMER } from '../view-keys.js';
import { shardCounts } from './shard.js';
import { readRebuildPlan, rebuildPlanName, type RebuildStores } from './stores.js';

/** Items named in a {@link ViewRebuildIncompleteError}. */
const NOT_DONE_SHOWN = 20;

/** What a finished rebuild did (plain JSON): the same whenever its finish is asked again. */
export interface RebuildSummary extends ViewCounts {
  readonly rebuildId: string;
  /** Manifests read. */
  readonly commits: number;
  readonly leaves: number;
  readonly packages: number;
  /** Leaf bodies read: one per identity whose latest leaf is a details leaf (deletes and quarantined leaves have none). */
  readonly bodiesRead: number;
  /** The bound: the last commit folded in, or null for a mirror with no commit. */
  readonly commitKey: string | null;
  /** The view consumer's cursor before and after the finish (7 digits). */
  readonly cursorBefore: string;
  readonly cursorAfter: string;
  /** Whether the finish moved the cursor (false when it was at the bound or past it already). */
  readonly cursorMoved: boolean;
  readonly ranges: number;
  readonly shards: number;
  readonly durationMs: number;
}

/** Which plan: its id, and the view consumer's name (default `view-latest`). */
export interface RebuildRef {
  readonly rebuildId: string;
  readonly name?: string;
  /**
   * Leave the view consumer's cursor where it is (a rebuild of some packages only, `view --rebuild --added`: the
   * other packages' later commits are upkeep's to apply).
   */
  readonly keepCursor?: boolean;
}

/**
 * Finishes a rebuild once every range and shard is done: moves the view consumer's cursor up to the bound (a
 * compare-and-set, only forward), removes the records and items files, marks the plan finished and clears its claim.
 * Idempotent: a finished plan's summary is given again and nothing moves.
 *
 * @throws {@link ViewRebuildIncompleteError} while an item is not done (the cursor does not move).
 * @throws {@link ViewRebuildPlanError} when there is no such plan, or it was abandoned.
 */
export async function finishRebuild(stores: RebuildStores, ref: RebuildRef): Promise<RebuildSummary> {
  const planName = rebuildPlanName(stores.mirror, ref.name ?? VIEW_CONSUMER);
  const plan = await readRebuildPlan(stores.plans, planName, ref.rebuildId);
  if (plan.status === BackfillStatus.abandoned)
    throw new ViewRebuildPlanError(
      `view rebuild ${ref.rebuildId} was abandoned at ${plan.abandonedAt}: it never finishes`,
    );
  const states = await stores.plans.listRanges(planName, ref.rebuildId);
  const done = new Map(states.filter((state) => state.done).map((state) => [state.n, state]));
  if (plan.status === BackfillStatus.finished && plan.summary !== undefined) {
    await stores.plans.releaseActive(planName, ref.rebuildId);
    return summaryOf(plan, done, plan.summary);
  }
  const notDone: number[] = [];
  for (let n = 0; n < plan.ranges + plan.shards; n++) if (!done.has(n)) notDone.push(n);
  if (notDone.length > 0)
    throw new ViewRebuildIncompleteError(ref.rebuildId, notDone.slice(0, NOT_DONE_SHOWN), notDone.length);
  const before = await stores.cursors.read(planName);
  const moved =
    plan.boundKey === null || plan.boundCommitId === null || ref.keepCursor === true
      ? false
      : await moveCursorUp(stores.cursors, planName, { commitId: plan.boundCommitId, commitTimeStamp: plan.bound });
  const after = moved ? parseTimestamp(plan.bound) : before?.value;
  let totals: BackfillTotals = ZERO_TOTALS;
  for (let n = 0; n < plan.ranges; n++) totals = addTotals(totals, done.get(n)!);
  const run: RunSummary = {
    runId: plan.backfillId,
    cursorName: planName,
    cursorBefore: before === undefined ? MIN_TIMESTAMP : formatTimestamp(before.value),
    cursorAfter: after === undefined ? MIN_TIMESTAMP : formatTimestamp(after),
    ...totals,
    caughtUp: true,
    stoppedBy: 'caught-up',
    durationMs: Math.max(0, Date.now() - Date.parse(plan.createdAt)),
    putRetries: 0,
  };
  // The records first: a finish that fails after them is asked again, and finds nothing left to remove.
  await stores.records.remove(ref.rebuildId);
  const finished = await stores.plans.finishPlan(planName, ref.rebuildId, new Date().toISOString(), run);
  await stores.plans.releaseActive(planName, ref.rebuildId);
  return summaryOf(plan, done, finished.summary ?? run);
}

/** Gives a running rebuild's lease back at once (a failed map on AWS, a stopped CLI): upkeep goes on, a rerun resumes. */
export async function releaseRebuild(stores: RebuildStores, ref: RebuildRef): Promise<{ released: string }> {
  const planName = rebuildPlanName(stores.mirror, ref.name ?? VIEW_CONSUMER);
  await stores.plans.setLease(planName, ref.rebuildId, Date.now(), undefined);
  return { released: ref.rebuildId };
}

/**
 * Abandons the mirror's unfinished rebuild (`view --rebuild --abandon`, the input `{"abandon": true}`): it is never
 * run or finished again, its records are removed, and the next planner plans anew. The indexes it wrote stay (each
 * is a true state of its package as of the plan's bound, or newer). Returns the abandoned plan's id, or undefined.
 */
export async function abandonRebuild(
  stores: RebuildStores,
  options: { readonly name?: string } = {},
): Promise<string | undefined> {
  const planName = rebuildPlanName(stores.mirror, options.name ?? VIEW_CONSUMER);
  const newest = await stores.plans.newestPlan(planName);
  const active = await stores.plans.readActive(planName);
  let abandoned: string | undefined;
  if (
    newest !== undefined &&
    newest.status === BackfillStatus.running &&
    (await stores.plans.abandonPlan(planName, newest.backfillId, new Date().toISOString()))
  ) {
    abandoned = newest.backfillId;
    await stores.records.remove(newest.backfillId);
  }
  if (active !== undefined) await stores.plans.releaseActive(planName, active.backfillId);
  return abandoned;
}

function summaryOf(plan: ViewRebuildPlan, done: ReadonlyMap<number, BackfillTotals>, run: RunSummary): RebuildSummary {
  let packages = 0;
  let written = 0;
  let current = 0;
  let bodiesRead = 0;
  for (let n = plan.ranges; n < plan.ranges + plan.shards; n++) {
    const counts = shardCounts(done.get(n) ?? ZERO_TOTALS);
    packages += counts.packages;
    written += counts.written;
    current += counts.current;
    bodiesRead += counts.bodiesRead;
  }
  return {
    rebuildId: plan.backfillId,
    commits: run.commits,
    leaves: run.leaves,
    packages,
    written,
    current,
    bodiesRead,
    commitKey: plan.boundKey,
    cursorBefore: run.cursorBefore,
    cursorAfter: run.cursorAfter,
    cursorMoved: run.cursorAfter !== run.cursorBefore,
    ranges: plan.ranges,
    shards: plan.shards,
    durationMs: run.durationMs,
  };
}

/** Moves the consumer's cursor (stored under `key`) up to `last` if it is behind it; true when it moved. */
async function moveCursorUp(
  cursors: CursorStore,
  key: string,
  last: { commitId: string; commitTimeStamp: string },
): Promise<boolean> {
  const value = parseTimestamp(last.commitTimeStamp);
  const runId = kuuidId();
  for (let state = await cursors.read(key); state === undefined || state.value < value; ) {
    const outcome = await cursors.compareAndSet(key, state, { value, commitId: last.commitId, runId });
    if (outcome.outcome === 'written') return true;
    state = outcome.current;
  }
  return false;
}
