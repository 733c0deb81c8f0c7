import { parseTimestamp, StoppedBy, type RunSummary, type Ticks } from '../../contract/index.js';
import { lagSeconds } from '../index.js';
import { formatBytes, formatDuration } from '../../runtime/cli/units.js';

/**
 * What the CLI knows of a run's stop beyond its summary: `ceiling`, the bound the user set (`--until …`,
 * `--delay …`), named in words when the run stopped there (`stoppedBy: "until"`).
 */
export interface StopCause {
  readonly ceiling?: string;
}

/** Why a run stopped, in words for a person. */
export function stopLabel(summary: RunSummary, cause: StopCause = {}): string {
  if (summary.stoppedBy === StoppedBy.error) return 'failed';
  if (summary.stoppedBy === StoppedBy.until) return `reached ${cause.ceiling ?? 'its --until'}`;
  return summary.stoppedBy;
}

/** Prints a run summary: one JSON line with `json`, else two lines for a person. */
export function printSummary(summary: RunSummary, json: boolean, head: Ticks | undefined, cause?: StopCause): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    return;
  }
  const lag =
    head === undefined ? '' : `, lag ${formatDuration(lagSeconds(head, parseTimestamp(summary.cursorAfter)))}`;
  process.stdout.write(
    `${stopLabel(summary, cause)}: ${summary.commits} commits, ${summary.leaves} leaves (${summary.deletes} deletes, ${summary.quarantined} quarantined), ` +
      `${formatBytes(summary.bytes)} in ${(summary.durationMs / 1000).toFixed(1)} s${retriesOf(summary)}\n` +
      `cursor ${summary.cursorName}: ${summary.cursorBefore} -> ${summary.cursorAfter}${lag}\n`,
  );
}

/** A slice of `run --follow` that found nothing new and did not fail: not printed, not logged as a run. */
export function isEmptyPoll(summary: RunSummary): boolean {
  return (
    summary.commits === 0 &&
    summary.error === undefined &&
    summary.behindCursor === undefined &&
    (summary.caughtUp || isPollingStop(summary))
  );
}

/**
 * A stop after which `run --follow` polls: nothing more to take for now, up to the head (`caught-up`), a `--delay`
 * behind it (`until`), or while a backfill of the cursor runs (`backfill`, which moves the cursor when done).
 */
export function isPollingStop(summary: RunSummary): boolean {
  return (
    summary.stoppedBy === StoppedBy.caughtUp ||
    summary.stoppedBy === StoppedBy.until ||
    summary.stoppedBy === StoppedBy.backfill
  );
}

/** A slice of `run --follow` that moved: one JSON line with `json`, else one line for a person. */
export function printFollowLine(summary: RunSummary, json: boolean, head: Ticks | undefined, cause?: StopCause): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    return;
  }
  const lag =
    head === undefined ? '' : `, lag ${formatDuration(lagSeconds(head, parseTimestamp(summary.cursorAfter)))}`;
  process.stdout.write(
    `${summary.cursorAfter} ${stopLabel(summary, cause)}: ${summary.commits} commits, ${summary.leaves} leaves (${summary.deletes} deletes, ${summary.quarantined} quarantined), ` +
      `${formatBytes(summary.bytes)} in ${(summary.durationMs / 1000).toFixed(1)} s${retriesOf(summary)}${lag}\n`,
  );
}

/**
 * `, N S3 PUT retries` when there were any (a run-log record from before the count has none), and `, N commits
 * behind the cursor (not taken)` when the catalog appended some there.
 */
function retriesOf(summary: RunSummary): string {
  const retries = summary.putRetries ?? 0;
  const behind = summary.behindCursor ?? 0;
  return (
    (retries === 0 ? '' : `, ${retries} S3 PUT ${retries === 1 ? 'retry' : 'retries'}`) +
    (behind === 0
      ? ''
      : `, ${behind} ${behind === 1 ? 'commit' : 'commits'} behind the cursor (not taken: verify --repair stores ${behind === 1 ? 'it' : 'them'})`)
  );
}

/** One line per run, for `status` and `runs`. */
export function describeRun(run: RunSummary): string {
  // `caught-up` short of the head: a run or backfill bounded by --until or --delay, logged before `until` existed.
  const stop = run.stoppedBy === StoppedBy.caughtUp && !run.caughtUp ? StoppedBy.until : run.stoppedBy;
  return `${run.runId}  ${stop.padEnd(11)} ${String(run.commits).padStart(6)} commits ${String(run.leaves).padStart(7)} leaves  ${run.cursorBefore} -> ${run.cursorAfter}  ${(run.durationMs / 1000).toFixed(1)} s${run.error ? `  ${run.error.code}: ${run.error.message}` : ''}`;
}
