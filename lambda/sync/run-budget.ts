import { setMaxListeners } from 'node:events';
import { CatalogSyncError, ErrorCode } from '../contract/errors.js';

/**
 * The run's time budget as an `AbortSignal`: a deadline only stops new work, but a request in flight (a
 * server sending a byte every few seconds) would hold the run past it. The signal reaches every request, so
 * the run stops at its budget, checkpoints and returns `time-budget` (`interrupted` when the caller's signal, not
 * the deadline, stopped it).
 */

/** Longest delay `setTimeout` takes (2³¹−1 ms, about 24.8 days); a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A run's stop signal, and the means to release its timer when the run ends. */
export interface RunBudget {
  /** Aborted at the deadline, or when the caller's signal aborts (Ctrl-C); undefined when there is neither. */
  readonly signal: AbortSignal | undefined;
  /** Clears the deadline timer: a warm Lambda or a following CLI must not keep one per past run. */
  release(): void;
  /**
   * Whether the caller's signal (Ctrl-C, SIGTERM), not the deadline, stopped the run: the signal fired first for
   * it. A run stopped this way says `interrupted`, one stopped at its deadline `time-budget`.
   */
  interrupted(): boolean;
}

/** Why a run's signal fired at its deadline. */
export class TimeBudgetReached extends CatalogSyncError {
  override readonly name = 'TimeBudgetReached';
  override get code(): ErrorCode {
    return ErrorCode.timeBudget;
  }
  constructor(deadline: number, options?: ErrorOptions) {
    super(`the run's time budget ended at ${new Date(deadline).toISOString()}`, options);
  }
}

/**
 * A signal that aborts at `deadline` (epoch ms) or when `stop` aborts, whichever comes first.
 *
 * @param deadline - the run's deadline; in the past, the signal is aborted already.
 * @param stop - the caller's own stop signal (the CLI's Ctrl-C).
 */
export function startRunBudget(deadline: number | undefined, stop: AbortSignal | undefined): RunBudget {
  if (deadline === undefined)
    return { signal: listenedByEveryRequest(stop), release() {}, interrupted: () => stop?.aborted === true };
  const atDeadline = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    const left = deadline - Date.now();
    if (left <= 0) {
      atDeadline.abort(new TimeBudgetReached(deadline));
      return;
    }
    // A budget beyond the timer's range is reached in steps.
    timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
  };
  arm();
  const signal = listenedByEveryRequest(
    stop === undefined ? atDeadline.signal : AbortSignal.any([stop, atDeadline.signal]),
  )!;
  return {
    signal,
    release: () => clearTimeout(timer),
    // The combined signal keeps the reason of whichever aborted first.
    interrupted: () => stop?.aborted === true && signal.aborted && !(signal.reason instanceof TimeBudgetReached),
  };
}

/**
 * How long past the run's stop a manifest PUT may still finish: a commit whose leaves are all stored is
 * finalized if its manifest lands within this, so a stop loses no completed work to a PUT of a few ms, and a
 * manifest PUT that hangs still ends (the run then ends at its budget plus this).
 */
export const MANIFEST_GRACE_MS = 2_000;

/** A signal that aborts `graceMs` after `signal` does, and the means to drop its listener when the work ends. */
export function afterGrace(
  signal: AbortSignal | undefined,
  graceMs: number,
): { signal: AbortSignal | undefined; release(): void } {
  if (signal === undefined) return { signal: undefined, release() {} };
  const grace = new AbortController();
  const start = (): void => {
    // Unref'd: a run that ended does not wait for it.
    setTimeout(() => grace.abort(signal.reason), graceMs).unref();
  };
  if (signal.aborted) start();
  else signal.addEventListener('abort', start, { once: true });
  return { signal: listenedByEveryRequest(grace.signal), release: () => signal.removeEventListener('abort', start) };
}

/**
 * Every request in flight listens on the run's signal (`CONCURRENCY` of them, 64 by default): that many
 * listeners are the design, not a leak, so Node's warning past 10 is turned off for it.
 */
function listenedByEveryRequest(signal: AbortSignal | undefined): AbortSignal | undefined {
  if (signal !== undefined) setMaxListeners(0, signal);
  return signal;
}

/**
 * How long past the run's stop (its deadline, or the caller's signal) its closing writes may take when the caller
 * sets no end of its own (`EngineDeps.closeBy`): the cursor's last checkpoint, `watermark.json` and the run-log
 * record. The Lambda's margin is at least 5 s, and it passes its own end.
 */
export const CLOSING_MS = 5_000;
/** Kept back from the end of the closing writes for the run-log record, which is written last. */
export const RUN_LOG_RESERVE_MS = 1_000;

/** What ends the writes a run makes after it stopped taking work. */
export interface ClosingWindow {
  /** Ends the cursor's and the watermark's writes in flight: {@link RUN_LOG_RESERVE_MS} before the end. */
  readonly writes: AbortSignal | undefined;
  /** Ends the run-log write in flight: at the end. */
  readonly runLog: AbortSignal | undefined;
  /** Clears the timers (a run whose writes all ended). */
  release(): void;
}

/**
 * The end of a run's closing writes: `closeBy` when the caller gives one (the Lambda: its time less a second),
 * else {@link CLOSING_MS} after the deadline; and at most {@link CLOSING_MS} after the caller's `stop` fires. No
 * deadline, no `closeBy` and no stop: no end (a CLI run without a budget waits for its clients' own timeouts).
 */
export function startClosingWindow(
  deadline: number | undefined,
  closeBy: number | undefined,
  stop: AbortSignal | undefined,
): ClosingWindow {
  const writes = new AbortController();
  const runLog = new AbortController();
  const timers: NodeJS.Timeout[] = [];
  let end = closeBy ?? (deadline === undefined ? undefined : deadline + CLOSING_MS);
  const arm = (at: number): void => {
    for (const timer of timers.splice(0)) clearTimeout(timer);
    end = at;
    const reason = new TimeBudgetReached(at);
    const after = (ms: number): number => Math.min(Math.max(0, ms), MAX_TIMER_MS);
    timers.push(setTimeout(() => writes.abort(reason), after(at - RUN_LOG_RESERVE_MS - Date.now())));
    timers.push(setTimeout(() => runLog.abort(reason), after(at - Date.now())));
  };
  if (end !== undefined) arm(end);
  const stopped = (): void => {
    const at = Date.now() + CLOSING_MS;
    if (end === undefined || at < end) arm(at);
  };
  if (stop?.aborted) stopped();
  else stop?.addEventListener('abort', stopped, { once: true });
  const bounded = end !== undefined || stop !== undefined;
  return {
    writes: bounded ? writes.signal : undefined,
    runLog: bounded ? runLog.signal : undefined,
    release: () => {
      for (const timer of timers.splice(0)) clearTimeout(timer);
      stop?.removeEventListener('abort', stopped);
    },
  };
}
