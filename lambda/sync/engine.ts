import { FetchAbortedError } from '../catalog/http-errors.js';
import { formatTimestamp, MIN_TICKS, ticksToEpochMs, type Ticks } from '../contract/time.js';
import type { EngineDeps, EngineLogger } from './engine-deps.js';
import { id as newId } from '../ids/kuuid.js';
import { Checkpointer } from './checkpointer.js';
import { WatermarkWriter } from './watermark.js';
import { runPipeline, type PipelineOutcome, type RunTotals } from './leaf-pipeline.js';
import { decideStop } from './stop-reason.js';
import { startClosingWindow, startRunBudget } from './run-budget.js';
import { runErrorOf, StoppedBy, type RunSummary } from '../contract/run-summary.js';
import { DEFAULT_RUN_LOG_DAYS, type SyncSettings } from '../contract/settings.js';
import { CatalogSyncError, ErrorCode } from '../contract/errors.js';
import { startOpeningReads } from './opening-reads.js';
import { futureBound, type CommitBehind } from './commit-stream.js';
import { commitsAppendedBehind } from './behind-cursor.js';
import { redactUrl } from '../contract/redact.js';
import type { CursorState, PutRetryEvent } from '../stores/types.js';

/** A run that stopped on an error: carries the summary of what it completed before the error. */
export class SyncError extends CatalogSyncError {
  override readonly name = 'SyncError';
  override get code(): ErrorCode {
    return ErrorCode.sync;
  }
  constructor(
    readonly summary: RunSummary,
    cause: unknown,
  ) {
    super(`run ${summary.runId} stopped at ${summary.cursorAfter}: ${(cause as Error)?.message ?? String(cause)}`, {
      cause,
    });
  }
}

const NOOP_LOGGER: EngineLogger = { info() {}, warn() {}, error() {} };

/**
 * Runs one bounded slice: reads the cursor, takes whole commits after it in commit order (bounded by the
 * limits, the time budget and every dependency cursor), stores each leaf and each commit's manifest, and moves
 * the cursor with conditional writes as commits complete. Returns the run summary; throws {@link SyncError}
 * (with the summary) when a document or fetch failed, after checkpointing every commit completed before it.
 */
export async function runSlice(settings: SyncSettings, deps: EngineDeps): Promise<RunSummary> {
  const started = Date.now();
  const runId = deps.runId ?? newId();
  const logger = deps.logger ?? NOOP_LOGGER;
  const deadline = deps.deadline;
  const budget = startRunBudget(deadline, deps.signal);
  // The writes after the stop (the last checkpoints, the watermark, the run-log record) end within the margin.
  const closing = startClosingWindow(deadline, deps.closeBy, deps.signal);
  const bounds = {
    ...(deadline === undefined ? {} : { deadline }),
    ...(budget.signal === undefined ? {} : { signal: budget.signal }),
  };
  // The cursor, the lease, the dependencies and the index at once; each awaited below where it is needed.
  const reads = startOpeningReads(settings.cursorName, settings.dependsOn, deps, budget.signal, bounds);
  let stored: CursorState | undefined;
  try {
    // A check the run must pass first (the Lambda's id filter), made while the reads are in flight.
    await deps.admission;
    stored = await reads.cursor;
  } catch (error) {
    reads.cancel();
    budget.release();
    closing.release();
    throw error;
  }
  const cursorBefore = stored?.value ?? settings.startCursor;
  let putRetries = 0;
  const onPutRetry = (event: PutRetryEvent): void => {
    putRetries++;
    logger.debug?.('retry', { ...event });
    deps.onPutRetry?.(event);
  };
  const closingWrites = closing.writes === undefined ? {} : { signal: closing.writes };
  const watermark = new WatermarkWriter(deps.snapshots, settings.prefix, logger, deps.watermarkIntervalMs, Date.now, {
    onRetry: onPutRetry,
    ...closingWrites,
  });
  const checkpointer = new Checkpointer(
    deps.cursors,
    settings.cursorName,
    stored,
    runId,
    (state) => watermark.cursorStored(state),
    closingWrites,
  );
  // A commit from the future is refused; those at or before the cursor are checked against the mirror at the end.
  const behind: CommitBehind[] = [];
  const watch = {
    notAfter: () => futureBound(Date.now()),
    onBehindCursor: (commit: CommitBehind) => behind.push(commit),
  };
  let totals: RunTotals = { commits: 0, leaves: 0, deletes: 0, quarantined: 0, bytes: 0 };
  let failure: unknown;
  let pipeline: PipelineOutcome | undefined;
  let staleIndex = false;
  let boundByDependency = false;
  let boundByCeiling = false;
  let aborted = false;
  let backfillActive = false;
  let upper: Ticks = MIN_TICKS;

  try {
    backfillActive = await reads.backfillActive;
    if (backfillActive)
      logger.info('a backfill of this cursor is running: leaving the work to it', {
        cursor: formatTimestamp(cursorBefore),
      });
    const dependencyBound = await reads.dependencyBound;
    // A live backfill: no index read, nothing taken.
    const index = await reads.index;
    if (index !== undefined) deps.onIndex?.(index.commitTicks);
    if (index === undefined) {
      upper = cursorBefore;
    } else if (index.commitTicks < cursorBefore) {
      logger.warn('stale catalog index: it is older than the stored cursor; nothing to do', {
        indexCommitTimeStamp: formatTimestamp(index.commitTicks),
        cursor: formatTimestamp(cursorBefore),
      });
      upper = cursorBefore;
      staleIndex = true;
    } else {
      boundByDependency = dependencyBound !== undefined && dependencyBound < index.commitTicks;
      upper = boundByDependency ? dependencyBound! : index.commitTicks;
      if (deps.ceiling !== undefined && deps.ceiling < upper) {
        upper = deps.ceiling;
        boundByDependency = false;
        boundByCeiling = true;
      }
      // Already at the bound: no page needs reading.
      if (upper > cursorBefore) {
        pipeline = await runPipeline({
          settings,
          deps: { ...deps, ...bounds, onPutRetry },
          logger,
          checkpointer,
          cursor: cursorBefore,
          upper,
          index,
          watch,
        });
        totals = pipeline.totals;
        failure = pipeline.failure;
      }
    }
  } catch (error) {
    // The index was not read whole before the budget ran out: a stop, not a failure.
    if (
      error instanceof FetchAbortedError ||
      (budget.signal?.aborted === true && (error as Error | undefined)?.name === 'AbortError')
    )
      aborted = true;
    else failure = error;
  } finally {
    // A read not awaited (the index after a dependency's read failed) is stopped and dropped.
    reads.cancel();
    budget.release();
  }
  try {
    await checkpointer.flush();
  } catch (error) {
    failure ??= error;
  }
  // After the cursor, never before it: the watermark may lag the stored cursor, never lead it. Every run, moved or
  // not, brings a watermark left behind up to the cursor stored now.
  let watermarkFailure: unknown;
  // Beside it, the commits found behind the cursor are checked against the mirror (a read; it never fails the run).
  const checkingBehind = appendedBehind(behind, settings, deps, logger, cursorBefore, closingWrites);
  if (checkpointer.current !== undefined) {
    try {
      await watermark.finish(checkpointer.current);
    } catch (error) {
      watermarkFailure = error;
    }
  }
  const behindCursor = await checkingBehind;
  const facts = {
    ...(pipeline === undefined ? {} : { pipeline }),
    staleIndex,
    boundByDependency,
    boundByCeiling,
    aborted,
    interrupted: budget.interrupted(),
    lostRace: checkpointer.lostRace,
    backfillActive,
  };
  let { stoppedBy, caughtUp } = decideStop({ ...facts, failed: failure !== undefined });
  if (watermarkFailure !== undefined) {
    // A stopped run, or one whose closing writes ran out of time, reports its stop: the watermark may lag (by
    // contract) and the next run catches it up. Otherwise the store's failure is the run's.
    if (stoppedBy === StoppedBy.timeBudget || stoppedBy === StoppedBy.interrupted || closing.writes?.aborted === true) {
      logger.warn('could not write watermark.json: it lags the cursor until the next run', {
        error: (watermarkFailure as Error)?.message ?? String(watermarkFailure),
      });
    } else {
      failure ??= watermarkFailure;
      ({ stoppedBy, caughtUp } = decideStop({ ...facts, failed: true }));
    }
  }
  const cursorAfter = checkpointer.current?.value ?? cursorBefore;
  const summary: RunSummary = {
    runId,
    cursorName: settings.cursorName,
    cursorBefore: formatTimestamp(cursorBefore),
    cursorAfter: formatTimestamp(cursorAfter),
    ...totals,
    caughtUp,
    stoppedBy,
    durationMs: Date.now() - started,
    putRetries,
    ...(behindCursor > 0 ? { behindCursor } : {}),
    ...(failure === undefined ? {} : { error: runErrorOf(failure) }),
  };
  if (deps.runLog) {
    const days = deps.runLogDays ?? DEFAULT_RUN_LOG_DAYS;
    try {
      await deps.runLog.appendRun(
        summary,
        Math.floor(Date.now() / 1000) + days * 86_400,
        closing.runLog === undefined ? undefined : { signal: closing.runLog },
      );
    } catch (error) {
      logger.warn('could not store the run in the run log', { error: (error as Error).message });
    }
  }
  closing.release();
  if (failure !== undefined) {
    logger.error('run stopped on an error', { summary, error: (failure as Error)?.message ?? String(failure) });
    throw new SyncError(summary, failure);
  }
  logger.info('run finished', { summary, lagSeconds: lagSeconds(upper, cursorAfter) });
  return summary;
}

/** How many of the commits found behind the cursor the mirror lacks (the catalog appended them behind it), each logged. */
async function appendedBehind(
  seen: readonly CommitBehind[],
  settings: SyncSettings,
  deps: EngineDeps,
  logger: EngineLogger,
  cursor: Ticks,
  options: { signal?: AbortSignal },
): Promise<number> {
  if (seen.length === 0) return 0;
  try {
    const appended = await commitsAppendedBehind(deps.snapshots, settings.prefix, seen, settings.startCursor, options);
    for (const commit of appended) {
      logger.warn(
        "a commit appeared behind the cursor: the catalog's times went back, and the follower does not take it (verify --repair stores it)",
        {
          commitTimeStamp: formatTimestamp(commit.ticks),
          commitId: commit.commitId,
          page: redactUrl(commit.pageUrl),
          cursor: formatTimestamp(cursor),
        },
      );
    }
    return appended.length;
  } catch (error) {
    logger.warn('could not check the commits behind the cursor against the mirror', {
      error: (error as Error)?.message ?? String(error),
    });
    return 0;
  }
}

/** Seconds between a commit time and the cursor. */
export function lagSeconds(head: Ticks, cursor: Ticks): number {
  return Math.max(0, (ticksToEpochMs(head) - ticksToEpochMs(cursor)) / 1000);
}
