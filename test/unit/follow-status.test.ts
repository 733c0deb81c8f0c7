/**
 * What `run --follow` tells a person between slices (lambda/sync/cli/follow-status.ts, issue 34): once caught up, that it
 * waits and how often it checks (once a follow); on a terminal, a line redrawn with the time of the next check and
 * erased when a slice moves. The CLI's own output is tested in test/integration/cli/cli-local-follow.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { FollowTotals, FollowWaitNotice } from '../../lambda/sync/cli/follow-status.js';
import type { RunSummary } from '../../lambda/contract/run-summary.js';

function stream(tty: boolean, columns?: number): { written: string[] } & NodeJS.WriteStream {
  const written: string[] = [];
  return { written, isTTY: tty, columns, write: (chunk: string) => written.push(chunk) > 0 } as unknown as {
    written: string[];
  } & NodeJS.WriteStream;
}

const slice = (over: Partial<RunSummary> = {}): RunSummary => ({
  runId: 'r',
  cursorName: 'catalog-to-s3',
  cursorBefore: '2024-01-01T00:00:00.0000000Z',
  cursorAfter: '2024-01-02T00:00:00.0000000Z',
  commits: 0,
  leaves: 0,
  deletes: 0,
  quarantined: 0,
  bytes: 0,
  caughtUp: true,
  stoppedBy: 'caught-up',
  durationMs: 10,
  putRetries: 0,
  ...over,
});

describe('FollowWaitNotice', () => {
  it('not on a terminal: one line the first time it waits, whatever follows; nothing with --json', () => {
    const out = stream(false);
    const notice = new FollowWaitNotice(out, { enabled: true, inPlace: false, pollSeconds: 60 });
    for (let i = 0; i < 3; i++) {
      notice.waiting(slice(), {}, Date.now() + 60_000);
      notice.done();
    }
    notice.waiting(slice({ stoppedBy: 'until', caughtUp: false }), { ceiling: '--delay 10m' }, Date.now());
    expect(out.written).toEqual([
      'catalog-sync: caught up at 2024-01-02T00:00:00.0000000Z; waiting for new commits; checking every 1 min, one line per slice that finds new commits (Ctrl-C to stop)\n',
    ]);
    const json = stream(false);
    new FollowWaitNotice(json, { enabled: false, inPlace: false, pollSeconds: 60 }).waiting(slice(), {}, 0);
    expect(json.written).toEqual([]);
  });

  it('on a terminal: a line redrawn in place with the next check, cut to the width, erased when the wait ends', () => {
    const out = stream(true, 60);
    const notice = new FollowWaitNotice(out, { enabled: true, inPlace: true, pollSeconds: 5 });
    const next = new Date(2024, 0, 1, 14, 3, 5).getTime();
    notice.waiting(slice({ stoppedBy: 'backfill', caughtUp: false }), {}, next);
    notice.done();
    notice.done();
    const wide = stream(true, 200);
    new FollowWaitNotice(wide, { enabled: true, inPlace: true, pollSeconds: 5 }).waiting(slice(), {}, next);
    expect(out.written).toEqual([
      `\r${'catalog-sync: a backfill of cursor catalog-to-s3 is running; waiting for it to finish'.slice(0, 59)}\u001b[K`,
      '\r\u001b[K',
    ]);
    expect(wide.written).toEqual([
      '\rcatalog-sync: caught up at 2024-01-02T00:00:00.0000000Z; waiting for new commits; next check at 14:03:05 (every 5 s; Ctrl-C to stop)\u001b[K',
    ]);
  });
});

describe('FollowTotals', () => {
  it('adds up the slices, failed ones too, into one run summary: the cursor from the first slice to the last, why it stopped', () => {
    const totals = new FollowTotals();
    expect(totals.summary()).toBeUndefined();
    totals.add(
      slice({
        cursorBefore: '2024-01-01T00:00:00.0000000Z',
        cursorAfter: '2024-01-01T00:00:01.0000000Z',
        commits: 2,
        leaves: 5,
        deletes: 1,
        bytes: 2048,
        putRetries: 1,
      }),
    );
    totals.add(slice({ cursorBefore: '2024-01-01T00:00:01.0000000Z', cursorAfter: '2024-01-01T00:00:01.0000000Z' }));
    const error = { message: 'HTTP 503', code: 'CS_ERR_HTTP_STATUS' } as RunSummary['error'];
    totals.add(
      slice({
        cursorBefore: '2024-01-01T00:00:01.0000000Z',
        cursorAfter: '2024-01-01T00:00:02.0000000Z',
        commits: 1,
        leaves: 1,
        quarantined: 1,
        bytes: 1024,
        stoppedBy: 'error',
        caughtUp: false,
        error,
      }),
    );
    const { durationMs, ...total } = totals.summary('interrupted')!;
    expect(total).toEqual({
      ...slice(),
      cursorBefore: '2024-01-01T00:00:00.0000000Z',
      cursorAfter: '2024-01-01T00:00:02.0000000Z',
      commits: 3,
      leaves: 6,
      deletes: 1,
      quarantined: 1,
      bytes: 3072,
      putRetries: 1,
      stoppedBy: 'interrupted',
      caughtUp: false,
      durationMs: undefined,
    });
    expect(durationMs).toBeGreaterThanOrEqual(0);
    // Without a better reason, the last slice's.
    expect(totals.summary()).toMatchObject({ stoppedBy: 'error' });
  });
});
