import { StoppedBy } from '../contract/run-summary.js';

/** What happened in a run, as facts; {@link decideStop} turns them into the run's stop reason. */
export interface StopFacts {
  /**
   * What the leaf pipeline reported, when it ran: `halt` is why it stopped taking commits (a limit, the time
   * budget, a lost race, an error), `exhausted` that it took and completed every commit up to the bound.
   * Absent when it did not run: the index was stale, the cursor was already at the bound, or the run failed or
   * was aborted before it.
   */
  readonly pipeline?: { readonly halt: StoppedBy | undefined; readonly exhausted: boolean };
  /** The catalog index was older than the stored cursor: nothing to do. */
  readonly staleIndex: boolean;
  /** A dependency cursor, not the catalog head, bounded the run. */
  readonly boundByDependency: boolean;
  /** The index read was aborted by the time budget or the run's signal. */
  readonly aborted: boolean;
  /**
   * The caller's signal (SIGINT/SIGTERM in the CLI), not the deadline, stopped the run: a stop the pipeline or an
   * aborted read reports as `time-budget` is `interrupted`.
   */
  readonly interrupted?: boolean;
  /** Another run moved the cursor first: this run's conditional write lost. */
  readonly lostRace: boolean;
  /**
   * A ceiling the caller set (`run --until`, `--delay`), below the catalog head, bounded the run: taking everything
   * up to it is `until` with `caughtUp` false (the catalog has more).
   */
  readonly boundByCeiling?: boolean;
  /** Something failed: the pipeline, a read before it, the checkpoint or the watermark. */
  readonly failed: boolean;
  /** A backfill of the cursor holds a live lease: the run left the work to it and did nothing. */
  readonly backfillActive?: boolean;
}

/** Why a run stopped, and whether it reached its bound. */
export interface StopDecision {
  readonly stoppedBy: StoppedBy;
  readonly caughtUp: boolean;
}

/**
 * Decides why a run stopped (`stoppedBy`) and whether it caught up (`caughtUp`) from the facts of the run. This is
 * the only place that decides them: the pipeline and the engine only report facts. In order of precedence: a
 * failure (`error`), a live backfill of the cursor (`backfill`), a lost race (`lost-race`), an aborted index read
 * (`time-budget`, or `interrupted` when the caller's signal stopped it), a stale index (caught up), the pipeline took
 * every commit up to the bound or there was none to take (`until` when the caller's ceiling below the head was the
 * bound, else caught up: `dependency` when a dependency cursor was the bound, else `caught-up`), and otherwise the
 * pipeline's own halt (`max-commits`, `max-leaves`, `time-budget` or `interrupted`).
 */
export function decideStop(facts: StopFacts): StopDecision {
  // The pipeline and the reads see one stop signal for the deadline and the caller's signal: the facts tell which.
  const stopped = facts.interrupted ? StoppedBy.interrupted : StoppedBy.timeBudget;
  if (facts.failed) return { stoppedBy: StoppedBy.error, caughtUp: false };
  if (facts.backfillActive) return { stoppedBy: StoppedBy.backfill, caughtUp: false };
  if (facts.lostRace) return { stoppedBy: StoppedBy.lostRace, caughtUp: false };
  if (facts.aborted) return { stoppedBy: stopped, caughtUp: false };
  if (facts.staleIndex) return { stoppedBy: StoppedBy.caughtUp, caughtUp: true };
  if (facts.pipeline === undefined || facts.pipeline.exhausted) {
    if (facts.boundByCeiling) return { stoppedBy: StoppedBy.until, caughtUp: false };
    return { stoppedBy: facts.boundByDependency ? StoppedBy.dependency : StoppedBy.caughtUp, caughtUp: true };
  }
  const halt = facts.pipeline.halt === StoppedBy.timeBudget ? stopped : facts.pipeline.halt;
  return { stoppedBy: halt ?? StoppedBy.caughtUp, caughtUp: false };
}
