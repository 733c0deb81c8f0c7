import { formatTimestamp, type Ticks } from '../contract/time.js';
import type { CursorState, CursorStore } from '../stores/types.js';

/** The outcome of moving a consumer's cursor. */
export type CheckpointOutcome =
  /** Stored: `state` is the cursor as now stored. */
  | { readonly outcome: 'written'; readonly state: CursorState }
  /** Another instance of the same consumer holds the cursor at or past the target: `state` is what it stored. */
  | { readonly outcome: 'lost-race'; readonly state: CursorState };

/**
 * Moves a consumer's cursor (stored under `key`) from `expected` to `target` with a conditional write, as the
 * follower's checkpoints do. Each successful write moves the stored cursor from the value it held to a later one,
 * and writes are serialized by the condition, so the ranges two instances advance past never overlap. When another
 * instance moved the cursor: at or past `target`, this one lost (and writes nothing); behind it, the write is retried
 * from there. A failed condition that finds this very write stored (same value, same run id: a retried request whose
 * first attempt went through) is this write's success, not a lost race.
 */
export async function checkpoint(
  store: CursorStore,
  key: string,
  expected: CursorState | undefined,
  target: { readonly value: Ticks; readonly commitId: string; readonly runId: string },
): Promise<CheckpointOutcome> {
  let from = expected;
  for (;;) {
    const result = await store.compareAndSet(key, from, target);
    if (result.outcome === 'written') {
      return {
        outcome: 'written',
        state: {
          value: target.value,
          stored: formatTimestamp(target.value),
          commitId: target.commitId,
          runId: target.runId,
        },
      };
    }
    const current = result.current;
    if (current !== undefined && current.value === target.value && current.runId === target.runId)
      return { outcome: 'written', state: current };
    if (current !== undefined && current.value >= target.value) return { outcome: 'lost-race', state: current };
    from = current;
  }
}
