import { parseTimestamp, type Ticks } from '../contract/time.js';
import type { RunSummary } from '../contract/run-summary.js';

/** Characters of a kuuid id that hold its second; the rest is random. */
export const RUN_ID_SECOND_LENGTH = 8;

/** The second a run started in, as the first characters of its id. */
export function runSecond(runId: string): string {
  return runId.slice(0, RUN_ID_SECOND_LENGTH);
}

/**
 * Orders runs newest first. A run id gives the second the run started in; past that it is random
 * (kuuid), so two runs of one second would list in a random order. Within a second the run that
 * took the cursor further is the newer: a later run of the same cursor starts where the earlier
 * one stopped. Last, the id, so the order is total.
 */
export function compareRunsNewestFirst(a: RunSummary, b: RunSummary): number {
  return (
    compareDescending(runSecond(a.runId), runSecond(b.runId)) ||
    compareDescending(ticksOf(a.cursorAfter), ticksOf(b.cursorAfter)) ||
    compareDescending(ticksOf(a.cursorBefore), ticksOf(b.cursorBefore)) ||
    compareDescending(a.runId, b.runId)
  );
}

function compareDescending<T extends string | bigint>(a: T, b: T): number {
  return a < b ? 1 : a > b ? -1 : 0;
}

/** A stored cursor's exact time; a value that is not one (a record from elsewhere) sorts as oldest. */
function ticksOf(value: unknown): Ticks {
  if (typeof value !== 'string') return -1n;
  try {
    return parseTimestamp(value);
  } catch {
    return -1n;
  }
}
