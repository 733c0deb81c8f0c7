import { formatTimestamp, type Ticks } from '../contract/time.js';
import type { BackfillTotals } from '../contract/backfill.js';
import type { CursorState, CursorStore, ReadOptions } from '../stores/types.js';

/**
 * Moves one cursor forward with conditional writes, as commits complete.
 *
 * Writes are coalesced: while one is in flight, only the newest target is remembered, so a run that completes
 * commits faster than the store answers still checkpoints at the pace of the store, never behind by more than
 * one write. A write is conditional on the value last seen; when another run moved the cursor, the stored
 * value decides: at or past our target, we lost the race and stop; behind it, we advance from there.
 */
export class Checkpointer {
  private expected: CursorState | undefined;
  private target: { value: Ticks; commitId: string; totals?: BackfillTotals } | undefined;
  private writing: Promise<void> | undefined;
  private failure: unknown;
  /** Set when another run holds the cursor at or past this run's target. */
  lostRace = false;
  /** Conditional writes that succeeded. */
  writes = 0;
  /** The newest target asked for, written or not (after a lost race, asking writes nothing). */
  requested: { readonly value: Ticks; readonly commitId: string } | undefined;

  constructor(
    private readonly store: CursorStore,
    private readonly name: string,
    expected: CursorState | undefined,
    private readonly runId: string,
    /** Told each cursor this run stored, just after the write succeeded (the follower writes `watermark.json` from it). */
    private readonly onStored?: (state: CursorState) => void,
    /** Passed to every write: `signal` ends one in flight (the run's closing deadline); it then fails the flush. */
    private readonly writeOptions: ReadOptions = {},
  ) {
    this.expected = expected;
  }

  /** The cursor as this run last knew it stored (its own write, or a newer one it found). */
  get current(): CursorState | undefined {
    return this.expected;
  }

  /**
   * Asks for the cursor to move to `value`; returns at once, the write happens in the background. `totals` (what
   * the run completed up to `value`) goes to the store with the write: a backfill range's progress keeps it.
   */
  advance(value: Ticks, commitId: string, totals?: BackfillTotals): void {
    this.requested = { value, commitId };
    if (this.lostRace || this.failure !== undefined) return;
    this.target = { value, commitId, ...(totals === undefined ? {} : { totals }) };
    this.writing ??= this.drain().finally(() => {
      this.writing = undefined;
    });
  }

  /** Waits for every requested write; rethrows a store failure. */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
    if (this.failure !== undefined) throw this.failure;
  }

  private async drain(): Promise<void> {
    try {
      while (
        this.target &&
        !this.lostRace &&
        (this.expected === undefined || this.target.value > this.expected.value)
      ) {
        const target = this.target;
        await this.write(target.value, target.commitId, target.totals);
      }
    } catch (error) {
      this.failure = error;
    }
  }

  private async write(value: Ticks, commitId: string, totals: BackfillTotals | undefined): Promise<void> {
    for (;;) {
      const next = { value, commitId, runId: this.runId, ...(totals === undefined ? {} : { totals }) };
      const result = await this.store.compareAndSet(this.name, this.expected, next, this.writeOptions);
      if (result.outcome === 'written') {
        this.writes++;
        this.expected = { value, stored: formatTimestamp(value), commitId, runId: this.runId };
        this.onStored?.(this.expected);
        return;
      }
      const current = result.current;
      if (current && current.value >= value) {
        this.expected = current;
        this.lostRace = true;
        return;
      }
      // Behind our target (or deleted by hand): advance from what is there now.
      this.expected = current;
    }
  }
}
