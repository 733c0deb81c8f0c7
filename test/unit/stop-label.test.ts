/** How the CLI words a run's stop: the summary's `stoppedBy`, with the user's own bound named for `until`. */
import { describe, expect, it } from 'vitest';
import type { RunSummary } from '../../lambda/contract/run-summary.js';
import { describeRun, isEmptyPoll, stopLabel } from '../../lambda/sync/cli/format.js';

const run: RunSummary = {
  runId: '001xUuNa3ciOHY2y9RGq1Z1xOt0vroCd',
  cursorName: 'catalog-to-s3',
  cursorBefore: '0001-01-01T00:00:00.0000000Z',
  cursorAfter: '2017-11-01T01:09:45.0077488Z',
  commits: 40,
  leaves: 99,
  deletes: 13,
  quarantined: 0,
  bytes: 267316,
  caughtUp: false,
  stoppedBy: 'until',
  durationMs: 1875,
  putRetries: 0,
};

describe('stop words', () => {
  it('until names the bound the user set; interrupted and time-budget say themselves; error is "failed"', () => {
    expect(stopLabel(run, { ceiling: '--until 2017-11-01T01:09:45.0077488Z' })).toBe(
      'reached --until 2017-11-01T01:09:45.0077488Z',
    );
    expect(stopLabel(run, { ceiling: '--delay 10m' })).toBe('reached --delay 10m');
    expect(stopLabel(run)).toBe('reached its --until');
    expect(stopLabel({ ...run, stoppedBy: 'interrupted' }, { ceiling: '--until x' })).toBe('interrupted');
    expect(stopLabel({ ...run, stoppedBy: 'time-budget' })).toBe('time-budget');
    expect(stopLabel({ ...run, stoppedBy: 'error' })).toBe('failed');
  });

  it('runs and status: until as it is, and a run logged before until existed (caught-up short of the head) reads the same', () => {
    expect(describeRun(run)).toMatch(/^001xUuNa3ciOHY2y9RGq1Z1xOt0vroCd {2}until {7}/);
    expect(describeRun({ ...run, stoppedBy: 'caught-up' })).toMatch(/^001xUuNa3ciOHY2y9RGq1Z1xOt0vroCd {2}until {7}/);
    expect(describeRun({ ...run, stoppedBy: 'caught-up', caughtUp: true })).toMatch(/ {2}caught-up {3}/);
    expect(describeRun({ ...run, stoppedBy: 'interrupted' })).toMatch(/ {2}interrupted {2}/);
  });

  it('a --delay follower with nothing new behind its bound polls quietly: an empty poll', () => {
    expect(isEmptyPoll({ ...run, commits: 0 })).toBe(true);
    expect(isEmptyPoll({ ...run, commits: 0, stoppedBy: 'interrupted' })).toBe(false);
    expect(isEmptyPoll({ ...run, commits: 0, stoppedBy: 'time-budget' })).toBe(false);
  });
});
