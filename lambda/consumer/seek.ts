/**
 * Moving a named consumer's cursor on purpose (issue 29): to the watermark ("now": a new consumer that wants only
 * what comes next), to the beginning, after a commit key, or to a time (the commit at that time is delivered next).
 * Backwards as well as forwards; done by the instance holding the consumer's lease, before it reads.
 */
import { decodeCommitKey } from '../contract/keys.js';
import { formatTimestamp, MIN_TICKS, type Ticks } from '../contract/time.js';
import type { CursorState, CursorStore } from '../stores/types.js';
import { ConsumerError } from './errors.js';
import { readWatermark, type Mirror } from './mirror.js';
import { ticksOfTime } from './reader.js';

/** Where {@link seekCursor} moves a cursor: `now` (the watermark), `beginning`, after a commit key, or to a time (inclusive). */
export type SeekTo = 'now' | 'beginning' | { readonly after: string } | { readonly since: Date | string };

/** The cursor value a seek stores, and the commit id it names (empty when it names no commit). */
export async function seekTarget(
  mirror: Mirror,
  to: SeekTo,
): Promise<{ readonly value: Ticks; readonly commitId: string }> {
  if (to === 'beginning') return { value: MIN_TICKS, commitId: '' };
  if (to === 'now') {
    const watermark = await readWatermark(mirror);
    return watermark === undefined
      ? { value: MIN_TICKS, commitId: '' }
      : { value: watermark.ticks, commitId: watermark.commitId ?? '' };
  }
  if ('after' in to) {
    try {
      return { value: decodeCommitKey(to.after), commitId: '' };
    } catch (cause) {
      throw new ConsumerError(`seek after ${JSON.stringify(to.after)}: not a commit key: ${(cause as Error).message}`, {
        cause,
      });
    }
  }
  // The cursor just before the time: the commit at exactly that time comes next.
  const ticks = ticksOfTime(to.since);
  return { value: ticks > MIN_TICKS ? ticks - 1n : MIN_TICKS, commitId: '' };
}

/** How many times a seek writes again when the cursor changed under it (a stale instance still writing). */
const SEEK_ATTEMPTS = 5;

/** Stores the seek's target under `key` with a conditional write on the cursor as read; returns the cursor stored. */
export async function seekCursor(
  cursors: CursorStore,
  key: string,
  state: CursorState | undefined,
  target: { value: Ticks; commitId: string; runId: string },
): Promise<CursorState> {
  let from = state;
  for (let attempt = 0; attempt < SEEK_ATTEMPTS; attempt++) {
    const result = await cursors.compareAndSet(key, from, target);
    if (result.outcome === 'written')
      return {
        value: target.value,
        stored: formatTimestamp(target.value),
        commitId: target.commitId,
        runId: target.runId,
      };
    if (result.current !== undefined && result.current.value === target.value && result.current.runId === target.runId)
      return result.current;
    from = result.current;
  }
  throw new ConsumerError(`the cursor ${key} kept changing while it was moved: another instance is writing it`);
}
