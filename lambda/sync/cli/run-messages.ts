import { formatTimestamp, parseTimestamp, SettingsError, type Ticks } from '../../contract/index.js';
import type { CursorState } from '../../stores/types.js';
import { AWS_SERVICE, awsSetupErrorOf } from '../../stores/aws-setup-error.js';
import { S3PutError } from '../../stores/s3-put-error.js';
import type { SyncError } from '../index.js';
import type { SyncSettings } from '../../contract/settings.js';
import { ExitCode } from '../../runtime/cli/exit-code.js';
import { printSummary, type StopCause } from './format.js';

/** `--start` given while a cursor is stored: the stored cursor wins, and the user is told so before the run. */
export function noteIgnoredStart(settings: SyncSettings, stored: CursorState | undefined): void {
  if (stored === undefined || stored.value === settings.startCursor) return;
  process.stderr.write(
    `catalog-sync: --start ${formatTimestamp(settings.startCursor)} ignored: cursor ${settings.cursorName} is stored at ${formatTimestamp(stored.value)}, ` +
      `and a run always goes on from its stored cursor (--start applies to a new cursor only; for another starting point use a new --cursor-name, or backfill --until)\n`,
  );
}

/**
 * The settings error a failed run stands for, when its cause is one (an AWS set-up error from the SDK clients, or a
 * lean S3 PUT that found no server at the endpoint); undefined when the run failed on its own.
 */
function setupProblemOf(error: SyncError): SettingsError | undefined {
  const cause = error.cause;
  if (cause instanceof SettingsError) return cause;
  if (cause instanceof S3PutError && cause.status === undefined) return awsSetupErrorOf(cause.cause, AWS_SERVICE.s3);
  return undefined;
}

/**
 * A run that stopped on an error: its summary, then its cause as the last line (what the user reads first is at
 * the bottom of the terminal). Returns the exit code: 2 for a set-up problem (it needs the user, not a retry), 1
 * otherwise.
 */
export function printFailure(
  error: SyncError,
  options: { json?: boolean },
  head: Ticks | undefined,
  cause: StopCause,
): number {
  printSummary(error.summary, options.json === true, head, cause);
  const setup = setupProblemOf(error);
  if (setup !== undefined) {
    process.stderr.write(`catalog-sync: ${setup.message}\n`);
    return ExitCode.usage;
  }
  const stoppedAt = parseTimestamp(error.summary.cursorAfter);
  const kept =
    error.summary.commits > 0
      ? ` (the ${error.summary.commits} commits before it are stored; the cursor is at ${formatTimestamp(stoppedAt)}, where the next run goes on)`
      : '';
  process.stderr.write(`catalog-sync: run failed${kept}: ${(error.cause as Error)?.message ?? error.message}\n`);
  return ExitCode.runFailed;
}

/** The first failed slice of an outage under `--follow`: said once; the follower goes on. */
export function printOutage(error: SyncError, waitMs: number): void {
  process.stderr.write(
    `catalog-sync: slice failed: ${(error.cause as Error)?.message ?? error.message}\n` +
      `catalog-sync: still following: retrying in ${(waitMs / 1000).toFixed(1)} s, then less often (up to every 5 min) until it works; ` +
      `one line when it recovers (Ctrl-C to stop)\n`,
  );
}
