/**
 * The feed's package runs (lambda/feed/package-runs.ts), which let a batch's packages start as their commits are read:
 * a package has one run at a time in the process; a run not begun yet serves a commit read since (it will read the
 * view after that commit), a run under way does not (a new one is queued after it); a batch takes the runs its
 * commits started, once; a run with options of its own (a rebuild's) serves no other start; idle waits for them all.
 */
import { describe, expect, it } from 'vitest';
import type { MirrorCommit } from '../../lambda/consumer/index.js';
import { PackageRuns } from '../../lambda/feed/package-runs.js';
import type { PackageOutcome } from '../../lambda/feed/package-sync.js';

/** A sync that resolves when told to, recording when it began. */
function gate(log: string[], name: string): { sync: () => Promise<PackageOutcome>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return {
    sync: async () => {
      log.push(`begin ${name}`);
      await opened;
      log.push(`end ${name}`);
      return { outcome: 'written' };
    },
    open,
  };
}

const commit = (commitKey: string): MirrorCommit =>
  ({ commitKey, commitId: commitKey, commitTimeStamp: '', leaves: [] }) as unknown as MirrorCommit;
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('PackageRuns', () => {
  it('reuses a run not begun yet, and queues a new one after a run under way', async () => {
    const runs = new PackageRuns(1);
    const log: string[] = [];
    const blocker = gate(log, 'other');
    const first = gate(log, 'a1');
    const second = gate(log, 'a2');
    const third = gate(log, 'a3');
    const other = runs.start('Other', blocker.sync);
    const a1 = runs.start('A', first.sync);
    // A1 waits for the only slot: a second start of A is served by it.
    expect(runs.start('a', second.sync)).toBe(a1);
    await tick();
    blocker.open();
    await other;
    await tick();
    expect(log).toEqual(['begin other', 'end other', 'begin a1']);
    // A1 is under way: a new start is a run of its own, begun only after A1 ends (one writer per package).
    const a3 = runs.start('A', third.sync);
    expect(a3).not.toBe(a1);
    await tick();
    expect(log).not.toContain('begin a3');
    first.open();
    await a1;
    await tick();
    expect(log.slice(-2)).toEqual(['end a1', 'begin a3']);
    third.open();
    await a3;
    expect(log).not.toContain('begin a2');
  });

  it('gives a batch the runs its commits started when read, once', async () => {
    const runs = new PackageRuns(4);
    const done = (): Promise<PackageOutcome> => Promise.resolve({ outcome: 'current' });
    const c1 = commit('c1');
    runs.read(c1, new Map([['b', 'B']]), done);
    const taken = runs.take(c1);
    expect([...(taken?.keys() ?? [])]).toEqual(['b']);
    await expect(taken?.get('b')).resolves.toEqual({ outcome: 'current' });
    expect(runs.take(c1)).toBeUndefined();
    expect(runs.take(commit('never read'))).toBeUndefined();
  });

  it('a run with options of its own is never shared, and idle waits for every run, taken or not', async () => {
    const runs = new PackageRuns(1);
    const log: string[] = [];
    const blocker = gate(log, 'blocker');
    const plain = gate(log, 'plain');
    const forced = gate(log, 'forced');
    void runs.start('Blocker', blocker.sync);
    const a = runs.start('D', plain.sync);
    const b = runs.start('D', forced.sync, false);
    expect(b).not.toBe(a);
    let idle = false;
    const waiting = runs.idle().then(() => {
      idle = true;
    });
    blocker.open();
    plain.open();
    await a;
    await tick();
    expect(idle).toBe(false);
    forced.open();
    await waiting;
    expect(log.filter((line) => line.startsWith('end'))).toEqual(['end blocker', 'end plain', 'end forced']);
  });

  it('a failed run fails the batch that awaits it, and the next run of the package still begins', async () => {
    const runs = new PackageRuns(2);
    const failed = runs.start('C', () => Promise.reject(new Error('S3 said no')));
    await tick();
    const next = runs.start('C', () => Promise.resolve({ outcome: 'written' }));
    await expect(failed).rejects.toThrow('S3 said no');
    await expect(next).resolves.toEqual({ outcome: 'written' });
  });

  it('abandonReadAhead: runs read ahead and not begun never begin, their commits are forgotten, a new start begins', async () => {
    const runs = new PackageRuns(1);
    const log: string[] = [];
    const blocker = gate(log, 'other');
    const other = runs.start('Other', blocker.sync);
    const ahead = gate(log, 'a ahead');
    runs.read(commit('c1'), new Map([['a', undefined]]), () => ahead.sync());
    const aheadOutcome = runs.take(commit('c1'))!.get('a')!;
    runs.read(commit('c2'), new Map([['b', undefined]]), () => gate(log, 'b ahead').sync());
    runs.abandonReadAhead();
    expect(runs.take(commit('c2'))).toBeUndefined();
    // A start of A after it is a run of its own, not the abandoned one waiting for its slot.
    const after = gate(log, 'a after');
    const a = runs.start('a', after.sync);
    expect(a).not.toBe(aheadOutcome);
    blocker.open();
    after.open();
    await Promise.all([other, a]);
    await runs.idle();
    expect(log).toEqual(['begin other', 'end other', 'begin a after', 'end a after']);
    expect(await aheadOutcome).toEqual({ outcome: 'skipped' });
  });
});
