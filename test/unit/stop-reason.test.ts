/**
 * Why a run stopped: `decideStop` is the one place that turns a run's facts into `stoppedBy` and `caughtUp`.
 * These tests pin its order of precedence.
 */
import { describe, expect, it } from 'vitest';
import { StoppedBy } from '../../lambda/contract/run-summary.js';
import { decideStop, type StopFacts } from '../../lambda/sync/stop-reason.js';

const quiet: StopFacts = {
  staleIndex: false,
  boundByDependency: false,
  aborted: false,
  lostRace: false,
  failed: false,
};

describe('decideStop', () => {
  it('a failure wins over everything, and a failed run never caught up', () => {
    const facts: StopFacts = {
      ...quiet,
      failed: true,
      lostRace: true,
      aborted: true,
      pipeline: { halt: StoppedBy.maxCommits, exhausted: true },
    };
    expect(decideStop(facts)).toEqual({ stoppedBy: StoppedBy.error, caughtUp: false });
  });

  it('a lost race wins over the budget and the pipeline', () => {
    expect(decideStop({ ...quiet, lostRace: true, aborted: true })).toEqual({
      stoppedBy: StoppedBy.lostRace,
      caughtUp: false,
    });
    expect(decideStop({ ...quiet, lostRace: true, pipeline: { halt: undefined, exhausted: true } })).toEqual({
      stoppedBy: StoppedBy.lostRace,
      caughtUp: false,
    });
  });

  it('a ceiling below the head (run --until, --delay): everything up to it taken is until, not caught up', () => {
    expect(decideStop({ ...quiet, boundByCeiling: true, pipeline: { halt: undefined, exhausted: true } })).toEqual({
      stoppedBy: StoppedBy.until,
      caughtUp: false,
    });
    expect(decideStop({ ...quiet, boundByCeiling: true })).toEqual({ stoppedBy: StoppedBy.until, caughtUp: false });
    expect(
      decideStop({ ...quiet, boundByCeiling: true, pipeline: { halt: StoppedBy.maxCommits, exhausted: false } }),
    ).toEqual({ stoppedBy: StoppedBy.maxCommits, caughtUp: false });
    // Stopped by a signal before the ceiling: interrupted, not until.
    expect(
      decideStop({
        ...quiet,
        boundByCeiling: true,
        interrupted: true,
        pipeline: { halt: StoppedBy.timeBudget, exhausted: false },
      }),
    ).toEqual({
      stoppedBy: StoppedBy.interrupted,
      caughtUp: false,
    });
  });

  it("an aborted index read is a time-budget stop, or interrupted when the caller's signal stopped it", () => {
    expect(decideStop({ ...quiet, aborted: true })).toEqual({ stoppedBy: StoppedBy.timeBudget, caughtUp: false });
    expect(decideStop({ ...quiet, aborted: true, interrupted: true })).toEqual({
      stoppedBy: StoppedBy.interrupted,
      caughtUp: false,
    });
  });

  it('a signal after every commit was taken changes nothing: caught up is caught up', () => {
    expect(decideStop({ ...quiet, interrupted: true, pipeline: { halt: undefined, exhausted: true } })).toEqual({
      stoppedBy: StoppedBy.caughtUp,
      caughtUp: true,
    });
  });

  it('a stale index has caught up, whatever bounds the dependencies set', () => {
    expect(decideStop({ ...quiet, staleIndex: true, boundByDependency: true })).toEqual({
      stoppedBy: StoppedBy.caughtUp,
      caughtUp: true,
    });
  });

  it('nothing to take, or every commit taken, is caught up: dependency when a dependency was the bound', () => {
    expect(decideStop(quiet)).toEqual({ stoppedBy: StoppedBy.caughtUp, caughtUp: true });
    expect(decideStop({ ...quiet, boundByDependency: true })).toEqual({
      stoppedBy: StoppedBy.dependency,
      caughtUp: true,
    });
    expect(decideStop({ ...quiet, boundByDependency: true, pipeline: { halt: undefined, exhausted: true } })).toEqual({
      stoppedBy: StoppedBy.dependency,
      caughtUp: true,
    });
  });

  it("otherwise the pipeline's halt is the reason", () => {
    for (const halt of [StoppedBy.maxCommits, StoppedBy.maxLeaves, StoppedBy.timeBudget]) {
      expect(decideStop({ ...quiet, boundByDependency: true, pipeline: { halt, exhausted: false } })).toEqual({
        stoppedBy: halt,
        caughtUp: false,
      });
    }
    // The pipeline sees one stop signal: the caller's signal, not the deadline, makes its stop interrupted.
    expect(
      decideStop({ ...quiet, interrupted: true, pipeline: { halt: StoppedBy.timeBudget, exhausted: false } }),
    ).toEqual({ stoppedBy: StoppedBy.interrupted, caughtUp: false });
    expect(
      decideStop({ ...quiet, interrupted: true, pipeline: { halt: StoppedBy.maxCommits, exhausted: false } }),
    ).toEqual({ stoppedBy: StoppedBy.maxCommits, caughtUp: false });
  });
});
