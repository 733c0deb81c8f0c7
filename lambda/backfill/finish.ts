import { addTotals, BackfillStatus, ZERO_TOTALS, type BackfillTotals, type RangeState } from '../contract/backfill.js';
import { watermarkKeyOf } from '../contract/keys.js';
import type { RunSummary } from '../contract/run-summary.js';
import { DEFAULT_RUN_LOG_DAYS, type SyncSettings } from '../contract/settings.js';
import { formatTimestamp, parseTimestamp, type Ticks } from '../contract/time.js';
import { Checkpointer } from '../sync/checkpointer.js';
import type { BackfillDeps } from '../sync/engine-deps.js';
import { writeWatermarkForward } from '../sync/watermark.js';
import { markRefilled } from '../sync/filter-record.js';
import { decideStop } from '../sync/stop-reason.js';
import { BackfillIncompleteError, BackfillPlanError } from './errors.js';
import { totalsOf } from './range-cursor.js';

/** Ranges named in a {@link BackfillIncompleteError}. */
const NOT_DONE_SHOWN = 20;

/** Options of {@link finishBackfill}. */
export interface FinishOptions {
  /**
   * The catalog head now, when the caller read it: a bound B before it (`backfill --until`) is logged as
   * `stoppedBy: "until"` with `caughtUp: false`, since lag remains. When absent and the plan has an `until`, the
   * finisher reads the catalog index for it (the Step Functions finalizer); a plan without one was bounded by the
   * head it read (or a dependency cursor), and is `caught-up`.
   */
  readonly head?: Ticks;
}

/**
 * Finishes a backfill once every range is done: moves the cursor (the usual conditional write, only forward) to
 * the newest commit the ranges stored (B when B is the index head), writes `watermark.json` (unless the stored one
 * is already at or past it: the watermark never moves back), appends the backfill
 * to the run log (run id = backfill id, totals summed over the ranges) and marks the plan finished. Idempotent: a
 * finished plan's summary is returned again and nothing moves.
 *
 * @throws {@link BackfillIncompleteError} while a range is not done (the cursor does not move).
 * @throws {@link BackfillPlanError} when there is no such plan.
 */
export async function finishBackfill(
  settings: SyncSettings,
  deps: BackfillDeps,
  backfillId: string,
  options: FinishOptions = {},
): Promise<RunSummary> {
  const { backfills } = deps;
  if (backfills === undefined) throw new BackfillPlanError('finishBackfill needs a backfill store (deps.backfills)');
  const plan = await backfills.readPlan(settings.cursorName, backfillId);
  if (plan === undefined)
    throw new BackfillPlanError(`backfill ${backfillId} of cursor ${settings.cursorName}: no such plan`);
  if (plan.status === BackfillStatus.finished && plan.summary !== undefined) {
    await backfills.releaseActive(settings.cursorName, backfillId);
    return plan.summary;
  }
  if (plan.status === BackfillStatus.abandoned)
    throw new BackfillPlanError(
      `backfill ${backfillId} of cursor ${settings.cursorName} was abandoned at ${plan.abandonedAt}: it never finishes`,
    );

  const states = await backfills.listRanges(settings.cursorName, backfillId);
  const byN = new Map<number, RangeState>(states.map((state) => [state.n, state]));
  const notDone: number[] = [];
  let totals: BackfillTotals = ZERO_TOTALS;
  let newest: { value: Ticks; commitId: string } | undefined;
  for (let n = 0; n < plan.ranges; n++) {
    const state = byN.get(n);
    if (!state?.done) {
      notDone.push(n);
      continue;
    }
    totals = addTotals(totals, totalsOf(state));
    if (state.progress !== undefined) {
      const value = parseTimestamp(state.progress);
      if (newest === undefined || value > newest.value) newest = { value, commitId: state.progressCommitId ?? '' };
    }
  }
  if (notDone.length > 0)
    throw new BackfillIncompleteError(backfillId, notDone.slice(0, NOT_DONE_SHOWN), notDone.length);

  const stored = await deps.cursors.read(settings.cursorName);
  const checkpointer = new Checkpointer(deps.cursors, settings.cursorName, stored, backfillId);
  if (newest !== undefined) checkpointer.advance(newest.value, newest.commitId);
  await checkpointer.flush();
  const cursor = checkpointer.current;
  // After the cursor, never before it: the watermark may lag the stored cursor, never lead it. Never backward
  // either: a refill backfill's cursor ends at its --until, behind the follower's watermark.
  if (cursor !== undefined) await writeWatermarkForward(deps.snapshots, watermarkKeyOf(settings.prefix), cursor);
  // B short of the head (`--until`): everything up to it is stored, and the catalog has more.
  const head =
    options.head ??
    (plan.until === undefined
      ? undefined
      : await catalogHeadOrUnknown(deps.catalog, (message, error) =>
          deps.logger?.warn(message, { error: error.message }),
        ));
  const short = head !== undefined && parseTimestamp(plan.bound) < head;
  // Every range done: the stop is decided as a run's that took everything up to its bound (`until` when it is short).
  const stop = decideStop({
    staleIndex: false,
    boundByDependency: false,
    aborted: false,
    lostRace: false,
    failed: false,
    boundByCeiling: short,
  });
  const summary: RunSummary = {
    runId: backfillId,
    cursorName: settings.cursorName,
    cursorBefore: plan.start,
    cursorAfter: formatTimestamp(cursor?.value ?? parseTimestamp(plan.start)),
    ...totals,
    caughtUp: stop.caughtUp,
    stoppedBy: stop.stoppedBy,
    durationMs: Math.max(0, Date.now() - Date.parse(plan.createdAt)),
    // The range workers' retries are in their own logs and metrics; the finisher itself retries nothing it counts.
    putRetries: 0,
  };
  if (deps.runLog) {
    const days = deps.runLogDays ?? DEFAULT_RUN_LOG_DAYS;
    try {
      await deps.runLog.appendRun(summary, Math.floor(Date.now() / 1000) + days * 86_400);
    } catch (error) {
      deps.logger?.warn('could not store the backfill in the run log', { error: (error as Error).message });
    }
  }
  // A refill (from the catalog's beginning, under a filter wider than an earlier one) says so in filter.json, before
  // the plan is marked finished: a finish retried after a failure here marks it then (a mark is made once).
  const refilled = await markRefilled(deps.snapshots, settings.prefix, {
    backfillId,
    filter: settings.idFilter,
    start: parseTimestamp(plan.start),
    bound: parseTimestamp(plan.bound),
  });
  if (refilled.length > 0) deps.logger?.info('backfill refilled id filter changes', { changes: refilled });
  const finished = await backfills.finishPlan(settings.cursorName, backfillId, new Date().toISOString(), summary);
  // The next planner may plan anew (the claim is cleared only if it is still this plan's).
  await backfills.releaseActive(settings.cursorName, backfillId);
  deps.logger?.info('backfill finished', { summary });
  return finished.summary ?? summary;
}

/**
 * The catalog head now, or undefined when the index cannot be read (told to `warn`): a finished backfill is not
 * failed over it. The CLI's `backfill` reads it the same way, to print the lag left past `--until`.
 */
export async function catalogHeadOrUnknown(
  catalog: BackfillDeps['catalog'],
  warn?: (message: string, error: Error) => void,
): Promise<Ticks | undefined> {
  try {
    return (await catalog.getIndex()).commitTicks;
  } catch (error) {
    warn?.("could not read the catalog head to tell the lag past the backfill's --until", error as Error);
    return undefined;
  }
}
