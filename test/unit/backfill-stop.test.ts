/**
 * The follower gate's stop reason: a live backfill of the cursor is `backfill` (not caught up), below a failure
 * and above everything else; a run without the fact decides as before.
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

describe('decideStop: backfill', () => {
  it('a live backfill stops the run as backfill, not caught up', () => {
    expect(decideStop({ ...quiet, backfillActive: true })).toEqual({ stoppedBy: StoppedBy.backfill, caughtUp: false });
    expect(decideStop({ ...quiet, backfillActive: true, lostRace: true, staleIndex: true })).toEqual({
      stoppedBy: StoppedBy.backfill,
      caughtUp: false,
    });
  });

  it('a failure still wins, and without a live backfill nothing changes', () => {
    expect(decideStop({ ...quiet, backfillActive: true, failed: true })).toEqual({
      stoppedBy: StoppedBy.error,
      caughtUp: false,
    });
    expect(decideStop({ ...quiet, backfillActive: false })).toEqual({ stoppedBy: StoppedBy.caughtUp, caughtUp: true });
  });
});
