/**
 * A conditional write that the store applied but whose answer was lost (a request timeout, a reset connection)
 * is retried by the SDK, and the retry then fails its condition against the value it wrote itself. Read naively,
 * that looks like another run ahead of us (`lost-race`). What was stored tells the two apart: the same value
 * written by the same run is our own write, not another's. Run ids are unique per run (kuuid), and a run only
 * ever moves its cursor forward, so no other writer can have stored that value with that run id.
 */

/** What a failed condition found stored, and what the write was: a value as stored (7 digits) and a run id. */
export interface WriteMark {
  readonly stored?: string | undefined;
  readonly runId?: string | undefined;
}

/** Whether `found` (read after the condition failed) is the write `wanted` itself, applied by an earlier attempt. */
export function isOwnWrite(
  found: WriteMark | undefined,
  wanted: { readonly stored: string; readonly runId: string },
): boolean {
  return found !== undefined && found.stored === wanted.stored && found.runId === wanted.runId;
}
