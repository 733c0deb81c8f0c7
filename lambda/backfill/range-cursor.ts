import { addTotals, ZERO_TOTALS, type BackfillTotals, type RangeState } from '../contract/backfill.js';
import { formatTimestamp, parseTimestamp } from '../contract/time.js';
import type { BackfillStore, CompareAndSetResult, CursorState, CursorStore, CursorTarget } from '../stores/types.js';

/**
 * A range's progress seen as a cursor, so the follower's {@link Checkpointer} checkpoints a range worker: each
 * write is the range store's compare-and-set on the range item, carrying the range's totals up to the commit
 * (those stored when the run started, plus what this run completed). Totals at a commit depend only on the
 * commit, so a run that takes over from a behind duplicate still stores the right ones.
 */
export class RangeCursor implements CursorStore {
  constructor(
    private readonly store: BackfillStore,
    private readonly cursorName: string,
    private readonly backfillId: string,
    private readonly n: number,
    /** The range's totals when the run started (at its stored progress). */
    private readonly base: BackfillTotals,
    /** The range's `hi`: a done range reads as a cursor there, so a duplicate worker finds it lost the race. */
    private readonly hi: string,
    /** Told after each progress write that succeeded (the range worker renews the plan's lease there). */
    private readonly onWritten?: () => Promise<void>,
  ) {}

  async read(): Promise<CursorState | undefined> {
    return rangeCursorState(await this.store.readRange(this.cursorName, this.backfillId, this.n));
  }

  async compareAndSet(
    _name: string,
    expected: CursorState | undefined,
    next: CursorTarget,
  ): Promise<CompareAndSetResult> {
    const progress = {
      progress: formatTimestamp(next.value),
      progressCommitId: next.commitId,
      totals: addTotals(this.base, next.totals ?? ZERO_TOTALS),
      runId: next.runId,
    };
    const result = await this.store.advanceRange(this.cursorName, this.backfillId, this.n, expected?.stored, progress);
    if (result.outcome === 'written') {
      await this.onWritten?.();
      return result;
    }
    // A done range takes no more progress: at its end, so the checkpointer sees it lost and stops.
    const current = result.current?.done ? { ...result.current, progress: this.hi } : result.current;
    return { outcome: 'conflict', current: rangeCursorState(current) };
  }
}

/** A range's stored progress as a cursor state (undefined when it has none). */
export function rangeCursorState(state: RangeState | undefined): CursorState | undefined {
  if (state?.progress === undefined) return undefined;
  return {
    value: parseTimestamp(state.progress),
    stored: state.progress,
    ...(state.progressCommitId === undefined ? {} : { commitId: state.progressCommitId }),
    updatedAt: state.updatedAt,
  };
}

/** The totals part of a range state. */
export function totalsOf(state: BackfillTotals | undefined): BackfillTotals {
  if (state === undefined) return ZERO_TOTALS;
  return {
    commits: state.commits,
    leaves: state.leaves,
    deletes: state.deletes,
    quarantined: state.quarantined,
    bytes: state.bytes,
  };
}
