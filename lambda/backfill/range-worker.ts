import type { CatalogIndex, CatalogIndexEntry } from '../catalog/index.js';
import { FetchAbortedError } from '../catalog/index.js';
import {
  addTotals,
  BackfillStatus,
  ZERO_TOTALS,
  type BackfillRange,
  type BackfillTotals,
} from '../contract/backfill.js';
import { StoppedBy } from '../contract/run-summary.js';
import { DEFAULT_BACKFILL_LEASE_SECONDS, type SyncSettings } from '../contract/settings.js';
import { formatTimestamp, parseTimestamp, type Ticks } from '../contract/time.js';
import { id as newId } from '../ids/kuuid.js';
import { Checkpointer } from '../sync/checkpointer.js';
import type { BackfillDeps, EngineLogger } from '../sync/engine-deps.js';
import { runPipeline, type PipelineOutcome } from '../sync/leaf-pipeline.js';
import { startRunBudget } from '../sync/run-budget.js';
import { decideStop } from '../sync/stop-reason.js';
import { BackfillPlanError, BackfillRangeError } from './errors.js';
import { LeaseRenewer } from '../stores/lease-renewer.js';
import { RangeCursor, rangeCursorState, totalsOf } from './range-cursor.js';

/** What one call of {@link runRange} did. */
export interface RangeOutcome {
  readonly n: number;
  /** The range is done (by this call or before it). */
  readonly done: boolean;
  /** It was done before this call: nothing was fetched. */
  readonly skipped: boolean;
  /** What this call completed (zero when skipped). */
  readonly totals: BackfillTotals;
  /**
   * Why this call stopped: `caught-up` when the range is done; `time-budget` (the deadline), `interrupted` (the
   * caller's signal: the CLI's workers on Ctrl-C or SIGTERM) or `lost-race` (a duplicate worker is ahead) when it is
   * not, its progress checkpointed for the next call.
   */
  readonly stoppedBy: StoppedBy;
}

/** Options of {@link runRange}. */
export interface RangeOptions {
  /** Seconds the plan's lease is renewed for (default {@link DEFAULT_BACKFILL_LEASE_SECONDS}). */
  readonly leaseSeconds?: number;
  /**
   * The clock of the lease (epoch ms; default `Date.now`): when a renewal is due and until when it holds. Tests
   * inject it to make time pass without waiting.
   */
  readonly now?: () => number;
  /**
   * Who holds the plan's lease (on AWS the execution's ARN, from the map's BatchInput; the CLI's `<pid>@<host>`): the
   * range renews the lease only while it is still theirs, so a lease given back stays given back. Without it, only a
   * lease still live is renewed.
   */
  readonly holder?: string;
}

const NOOP_LOGGER: EngineLogger = { info() {}, warn() {}, error() {} };

/**
 * Runs one range of a backfill: the follower's leaf pipeline over the range's own pages (never the catalog index),
 * taking every commit in (progress ?? lo, hi] with no commit or leaf limit, checkpointing the range's progress as
 * commits complete, and marking the range done once every commit up to `hi` is stored. A done range is skipped.
 * The deadline and signal of `deps` stop it like a follower run (not done, progress kept). Renews the plan's lease
 * at its start and end, and in between as its progress is checkpointed (see {@link LeaseRenewer}).
 *
 * @throws {@link BackfillRangeError} when a document, fetch or store failed (after checkpointing every commit
 *   completed before it); the range is not done.
 * @throws {@link BackfillPlanError} when its plan was abandoned.
 */
export async function runRange(
  settings: SyncSettings,
  deps: BackfillDeps,
  range: BackfillRange,
  options: RangeOptions = {},
): Promise<RangeOutcome> {
  const { backfills } = deps;
  if (backfills === undefined) throw new BackfillPlanError('runRange needs a backfill store (deps.backfills)');
  const logger = deps.logger ?? NOOP_LOGGER;
  const { cursorName } = settings;
  const { backfillId, n } = range;
  const state = await backfills.readRange(cursorName, backfillId, n);
  if (state?.done) return { n, done: true, skipped: true, totals: ZERO_TOTALS, stoppedBy: StoppedBy.caughtUp };
  // An abandoned plan's ranges are never run again (a worker of another execution, a CLI worker still running).
  const plan = await backfills.readPlan(cursorName, backfillId);
  if (plan?.status === BackfillStatus.abandoned)
    throw new BackfillPlanError(
      `backfill ${backfillId} of cursor ${cursorName} was abandoned at ${plan.abandonedAt}: range ${n} is not run`,
    );
  const leaseSeconds = options.leaseSeconds ?? DEFAULT_BACKFILL_LEASE_SECONDS;
  const lease = new LeaseRenewer(
    backfills,
    cursorName,
    backfillId,
    leaseSeconds * 1000,
    options.now ?? Date.now,
    logger,
    options.holder,
  );
  await lease.renew();

  const lo = parseTimestamp(range.lo);
  const hi = parseTimestamp(range.hi);
  const stored = rangeCursorState(state);
  const from = stored !== undefined && stored.value > lo ? stored.value : lo;
  const base = totalsOf(state);
  const cursorStore = new RangeCursor(backfills, cursorName, backfillId, n, base, range.hi, () => lease.onCheckpoint());
  const checkpointer = new Checkpointer(cursorStore, cursorName, stored, deps.runId ?? newId());
  const budget = startRunBudget(deps.deadline, deps.signal);
  const bounds = {
    ...(deps.deadline === undefined ? {} : { deadline: deps.deadline }),
    ...(budget.signal === undefined ? {} : { signal: budget.signal }),
  };
  let pipeline: PipelineOutcome | undefined;
  let failure: unknown;
  let aborted = false;
  try {
    if (from < hi) {
      // The catalog's origin is the one pages and leaves may come from: resolved from the source (a service index
      // is small; a warm worker resolves it once), never by reading the catalog index.
      await deps.catalog.resolveIndexUrl(bounds);
      pipeline = await runPipeline({
        settings,
        deps: { ...deps, ...bounds },
        logger,
        checkpointer,
        cursor: from,
        upper: hi,
        index: indexOf(range, hi),
        unlimited: true,
      });
      failure = pipeline.failure;
    }
  } catch (error) {
    if (error instanceof FetchAbortedError) aborted = true;
    else failure = error;
  } finally {
    budget.release();
  }
  try {
    await checkpointer.flush();
  } catch (error) {
    failure ??= error;
  }
  const totals = pipeline?.totals ?? ZERO_TOTALS;
  if (failure !== undefined) {
    logger.error('backfill range stopped on an error', {
      backfillId,
      n,
      error: (failure as Error)?.message ?? String(failure),
    });
    throw new BackfillRangeError(backfillId, n, urlOf(failure), failure);
  }
  const exhausted = !aborted && (pipeline === undefined || pipeline.exhausted);
  if (!exhausted && checkpointer.lostRace) {
    // A duplicate worker is ahead: it finishes the range, or it is done already.
    const now = await backfills.readRange(cursorName, backfillId, n);
    if (now?.done) return { n, done: true, skipped: false, totals: { ...totals }, stoppedBy: StoppedBy.lostRace };
  }
  if (!exhausted) {
    const { stoppedBy } = decideStop({
      ...(pipeline === undefined ? {} : { pipeline }),
      staleIndex: false,
      boundByDependency: false,
      aborted,
      interrupted: budget.interrupted(),
      lostRace: checkpointer.lostRace,
      failed: false,
    });
    return { n, done: false, skipped: false, totals: { ...totals }, stoppedBy };
  }
  // Every commit of the range is stored: its newest is the one this run completed last (after a lost race the
  // checkpointer stopped writing, but the pipeline completed what it had taken), or the stored progress.
  const last =
    checkpointer.requested ?? (stored === undefined ? undefined : { value: stored.value, commitId: stored.commitId });
  await backfills.markRangeDone(cursorName, backfillId, n, {
    ...(last === undefined ? {} : { progress: formatTimestamp(last.value) }),
    ...(last?.commitId === undefined ? {} : { progressCommitId: last.commitId }),
    // The totals up to the range's last commit: those stored when this run started, plus this run's.
    totals: addTotals(base, totals),
  });
  await lease.tryRenew();
  logger.info('backfill range done', { backfillId, n, ...totals });
  return { n, done: true, skipped: false, totals: { ...totals }, stoppedBy: StoppedBy.caughtUp };
}

/** The range's pages as a catalog index: what the commit stream reads, with the pages' stale-copy bounds. */
function indexOf(range: BackfillRange, hi: Ticks): CatalogIndex {
  const items: CatalogIndexEntry[] = range.pages.map((page) => ({
    url: page.url,
    commitId: page.commitId,
    commitTimeStamp: page.commitTimeStamp,
    commitTicks: parseTimestamp(page.commitTimeStamp),
    count: page.count,
  }));
  return { commitId: '', commitTimeStamp: range.hi, commitTicks: hi, items };
}

/** The URL a failure names, when it names one. */
function urlOf(error: unknown): string | undefined {
  const url = (error as { url?: unknown })?.url;
  return typeof url === 'string' ? url : undefined;
}
