/**
 * Named consumers a team can run (issue 29, parts 2 and 5), on S3 + DynamoDB Local and on the local folder: a cursor
 * keyed by its mirror and name (two prefixes of one store never share one), an earlier version's cursor adopted once,
 * built-in names reserved, a seek, checkpoints by count and by time, one active instance per name with a standby that
 * takes over, and checkpoints only of acknowledged commits.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Acknowledgements,
  consume,
  consumerKey,
  ConsumeStop,
  describeConsumers,
  type LeaseRecord,
  type Mirror,
} from '../../../lambda/consumer/index.js';
import { formatTimestamp, parseTimestamp } from '../../../lambda/contract/time.js';
import type { ConsumerStateStore } from '../../../lambda/stores/types.js';
import { generateCatalog, type GeneratedCatalog } from '../../../testkit/catalog-generator.js';
import { waitFor } from '../../../testkit/cli-process.js';
import { openViewTarget, VIEW_KINDS, type ViewTestTarget } from '../../../testkit/view-harness.js';
import { cursorOf, keysOf, logWrites, writeManifests } from './consumer-kit.js';

describe.each(VIEW_KINDS)('named consumers: %s', (kind) => {
  let catalog: GeneratedCatalog;
  let other: GeneratedCatalog;
  let target: ViewTestTarget;
  let a: Mirror;
  let b: Mirror;
  let keys: string[];
  const stamp = (i: number): string => formatTimestamp(parseTimestamp(catalog.commits.at(i)!.timestamp));

  beforeAll(async () => {
    catalog = generateCatalog({ commits: 30, seed: 2929, leavesPerCommit: [1, 4] });
    other = generateCatalog({ commits: 12, seed: 3030, leavesPerCommit: [1, 4], start: '2019-01-01T00:00:00Z' });
    target = await openViewTarget(kind);
    a = { ...target.mirror, prefix: 'a/' };
    b = { ...target.mirror, prefix: 'b/' };
    keys = keysOf(catalog.commits);
    // The same catalog under two prefixes of one store (two mirrors of nuget.org in one bucket or folder).
    await Promise.all([
      writeManifests(target.store, 'a/', catalog.commits),
      writeManifests(target.store, 'b/', catalog.commits),
    ]);
  });
  afterAll(() => target.close());

  const collect = async (
    mirror: Mirror,
    name: string,
    options: Partial<Parameters<typeof consume>[2]> = {},
  ): Promise<string[]> => {
    const seen: string[] = [];
    await consume(name, (commit) => void seen.push(commit.commitKey), { mirror, cursors: target.cursors, ...options });
    return seen;
  };

  it('keys a consumer by its mirror: one name on two prefixes of one store keeps two cursors, each mirror read whole', async () => {
    expect(await collect(a, 'shared')).toEqual(keys);
    // Before: the name alone was the key, so b/ found a/'s cursor and skipped every commit.
    expect(await collect(b, 'shared')).toEqual(keys);
    expect(consumerKey(a, 'shared')).not.toBe(consumerKey(b, 'shared'));
    expect(await cursorOf(target.cursors, a, 'shared')).toBe(stamp(-1));
    expect(await cursorOf(target.cursors, b, 'shared')).toBe(stamp(-1));
    expect(await target.cursors.read('shared')).toBeUndefined();
  });

  it('adopts a cursor stored under the name alone once, for the first mirror that holds its commit', async () => {
    const state = target.cursors as unknown as ConsumerStateStore;
    const c: Mirror = { ...target.mirror, prefix: 'c/' };
    await writeManifests(target.store, 'c/', other.commits);
    await target.cursors.compareAndSet('legacy', undefined, {
      value: parseTimestamp(catalog.commits[9]!.timestamp),
      commitId: catalog.commits[9]!.commitId,
      runId: 'earlier-version',
    });
    // c/ does not hold that commit: it starts afresh and leaves the cursor to a mirror that does.
    expect(await collect(c, 'legacy')).toEqual(keysOf(other.commits));
    expect((await state.readLegacy('legacy'))?.adoptedBy).toBeUndefined();
    // a/ holds it: it goes on after it, and the item is marked as a/'s.
    expect(await collect(a, 'legacy')).toEqual(keys.slice(10));
    expect((await state.readLegacy('legacy'))?.adoptedBy).toBe(consumerKey(a, 'legacy'));
    // b/ holds the same commit, but the cursor is a/'s now: b/ starts afresh.
    expect(await collect(b, 'legacy')).toEqual(keys);
  });

  it("reserves the built-in consumers' names, and the follower's", async () => {
    await expect(collect(a, 'view-latest')).rejects.toMatchObject({
      code: 'CS_ERR_CONSUMER',
      message: expect.stringContaining('built-in'),
    });
    await expect(collect(a, 'catalog-to-s3')).rejects.toMatchObject({
      code: 'CS_ERR_CONSUMER',
      message: expect.stringContaining('follower'),
    });
  });

  it('seeks: to now (the watermark), to a time (inclusive), after a key, and back to the beginning', async () => {
    expect(await collect(a, 'seeker', { seek: 'now' })).toEqual([]);
    expect(await cursorOf(target.cursors, a, 'seeker')).toBe(stamp(-1));
    expect(await collect(a, 'seeker', { seek: { since: catalog.commits[20]!.timestamp } })).toEqual(keys.slice(20));
    expect(await collect(a, 'seeker', { seek: { after: keys[25]! } })).toEqual(keys.slice(26));
    expect(await collect(a, 'seeker', { seek: 'beginning' })).toEqual(keys);
  });

  it('checkpoints every 64 commits or every second by default, every N when asked, and once caught up', async () => {
    const logged = logWrites(target.cursors);
    await consume('counted', () => undefined, { mirror: a, cursors: logged.store });
    // 30 commits: the checkpoint at the end (before: one a commit), and one more only if reading took over a second.
    expect(logged.writes.length).toBeLessThanOrEqual(2);
    expect(logged.writes.at(-1)![2]).toBe(stamp(-1));
    logged.writes.length = 0;
    await consume('every1', () => undefined, { mirror: a, cursors: logged.store, checkpointEvery: 1 });
    expect(logged.writes.map(([, , to]) => to)).toEqual(catalog.commits.map((_, i) => stamp(i)));
    // Every 8: written beside the handling, so one write may cover more, but never more than 4 × 8 behind.
    logged.writes.length = 0;
    await consume('every8', () => undefined, {
      mirror: a,
      cursors: logged.store,
      checkpointEvery: 8,
      checkpointIntervalMs: 60_000,
    });
    const at = logged.writes.map(([, , to]) => catalog.commits.findIndex((_, i) => stamp(i) === to));
    expect(at.at(-1)).toBe(29);
    at.forEach((index, i) => expect(index - (i === 0 ? -1 : at[i - 1]!)).toBeLessThanOrEqual(32));
    expect(logged.writes.map(([, from]) => from)).toEqual([null, ...logged.writes.slice(0, -1).map(([, , to]) => to)]);
  });

  it('checkpoints a handled commit within the interval while the next one is still being handled', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const running = consume(
      'timed',
      async (commit) => {
        if (commit.commitKey === keys[3]) await gate;
      },
      { mirror: a, cursors: target.cursors, checkpointEvery: 1_000, checkpointIntervalMs: 20 },
    );
    await waitFor(
      async () => (await cursorOf(target.cursors, a, 'timed')) === stamp(2),
      'the checkpoint of commit 2 while commit 3 is handled',
    );
    release();
    expect((await running).cursorAfter).toBe(stamp(-1));
  });

  it('runs one instance of a name: another stands by, takes over when it stops, and no commit is handled twice', async () => {
    const more = generateCatalog({ commits: 8, seed: 3131, leavesPerCommit: [1, 2], start: '2020-01-01T00:00:00Z' });
    const d: Mirror = { ...target.mirror, prefix: 'd/' };
    await writeManifests(target.store, 'd/', catalog.commits);
    const handled: [string, string][] = [];
    const events: string[] = [];
    const start = (who: string, signal: AbortSignal) =>
      consume('single', (commit) => void handled.push([who, commit.commitKey]), {
        mirror: d,
        cursors: target.cursors,
        follow: true,
        poll: { minMs: 10, maxMs: 20 },
        signal,
        lease: {
          pollMs: 10,
          onStandby: () => void events.push(`${who} standing by`),
          onTakeOver: (held: LeaseRecord) => void events.push(`${who} took over from ${held.holder}`),
        },
      });
    const stopA = new AbortController();
    const stopB = new AbortController();
    const first = start('A', stopA.signal);
    await waitFor(async () => (await cursorOf(target.cursors, d, 'single')) === stamp(-1), 'A to read everything');
    const second = start('B', stopB.signal);
    await waitFor(() => events.includes('B standing by'), 'B to stand by');
    // A non-following instance does not wait: it says who holds the name.
    const held = await consume('single', () => undefined, { mirror: d, cursors: target.cursors });
    expect(held).toMatchObject({
      stoppedBy: ConsumeStop.held,
      commits: 0,
      heldBy: { holder: expect.stringMatching(/^\d+@.+#/) },
    });
    stopA.abort();
    expect(await first).toMatchObject({ stoppedBy: ConsumeStop.aborted, commits: 30 });
    await waitFor(() => events.some((event) => event.startsWith('B took over')), 'B to take over');
    await writeManifests(target.store, 'd/', more.commits);
    await waitFor(
      async () =>
        (await cursorOf(target.cursors, d, 'single')) ===
        formatTimestamp(parseTimestamp(more.commits.at(-1)!.timestamp)),
      'B to read the new commits',
    );
    stopB.abort();
    expect(await second).toMatchObject({ stoppedBy: ConsumeStop.aborted, commits: 8 });
    expect(handled.filter(([who]) => who === 'A').map(([, key]) => key)).toEqual(keys);
    expect(handled.filter(([who]) => who === 'B').map(([, key]) => key)).toEqual(keysOf(more.commits));
  });

  it('a run after one that ended cleanly takes the name without a word of take-over', async () => {
    const g: Mirror = { ...target.mirror, prefix: 'g/' };
    await writeManifests(target.store, 'g/', catalog.commits);
    const takeOvers: string[] = [];
    const once = () =>
      consume('after-clean', () => undefined, {
        mirror: g,
        cursors: target.cursors,
        lease: { onTakeOver: (held: LeaseRecord) => void takeOvers.push(held.holder) },
      });
    expect(await once()).toMatchObject({ commits: 30 });
    expect(await once()).toMatchObject({ commits: 0 });
    expect(takeOvers).toEqual([]);
  });

  it('stops once another instance has taken its lease (found at the renewal), and leaves the lease to it', async () => {
    const state = target.cursors as unknown as ConsumerStateStore;
    const key = consumerKey(a, 'robbed');
    const stop = new AbortController();
    const running = consume('robbed', () => undefined, {
      mirror: a,
      cursors: target.cursors,
      follow: true,
      signal: stop.signal,
      poll: { minMs: 10, maxMs: 20 },
      lease: { durationMs: 300, standby: false },
    });
    await waitFor(async () => (await cursorOf(target.cursors, a, 'robbed')) === stamp(-1), 'the consumer to catch up');
    // Taken as another instance would take it: by a compare-and-set on the lease read (again when a renewal came first).
    await waitFor(
      async () =>
        state.swapLease(key, (await state.readLease(key))!, { holder: 'another-instance', until: Date.now() + 60_000 }),
      'the lease taken',
      100,
      0,
    );
    const result = await Promise.race([
      running,
      new Promise((resolve) => setTimeout(resolve, 10_000, 'still running')),
    ]);
    stop.abort();
    expect(result).toMatchObject({ stoppedBy: ConsumeStop.lostLease, commits: 30 });
    expect((await state.readLease(key))?.holder).toBe('another-instance');
  });

  it("lists a mirror's consumers alone, with their lag behind the watermark in commits and time and the instance holding one", async () => {
    const e: Mirror = { ...target.mirror, prefix: 'e/' };
    const f: Mirror = { ...target.mirror, prefix: 'f/' };
    await Promise.all([
      writeManifests(target.store, 'e/', catalog.commits),
      writeManifests(target.store, 'f/', catalog.commits),
    ]);
    // Seeks back, and its handler fails on the first commit after: the cursor stays 10 commits behind.
    const failing = consume('behind', () => Promise.reject(new Error('not now')), {
      mirror: e,
      cursors: target.cursors,
      seek: { after: keys[19]! },
    });
    await expect(failing).rejects.toMatchObject({ code: 'CS_ERR_CONSUMER_HANDLER' });
    await consume('elsewhere', () => undefined, { mirror: f, cursors: target.cursors });
    const stop = new AbortController();
    const running = consume('running', () => undefined, {
      mirror: e,
      cursors: target.cursors,
      follow: true,
      signal: stop.signal,
      poll: { minMs: 10, maxMs: 20 },
    });
    await waitFor(
      async () => (await cursorOf(target.cursors, e, 'running')) === stamp(-1),
      'the running consumer to catch up',
    );
    const view = await describeConsumers(e, target.cursors);
    stop.abort();
    await running;
    expect(view.watermark).toEqual({ cursor: stamp(-1), commitKey: keys.at(-1) });
    expect(view.consumers.map((consumer) => consumer.name)).toEqual(['behind', 'running']);
    expect(view.consumers[0]).toMatchObject({
      commitKey: keys[19],
      lagCommits: 10,
      lagCommitsAtLeast: false,
      heldBy: null,
    });
    expect(view.consumers[0]!.lagSeconds).toBeCloseTo(
      Number(
        (parseTimestamp(catalog.commits.at(-1)!.timestamp) - parseTimestamp(catalog.commits[19]!.timestamp)) / 10_000n,
      ) / 1000,
      3,
    );
    expect(view.consumers[1]).toMatchObject({
      commitKey: keys.at(-1),
      lagCommits: 0,
      lagSeconds: 0,
      heldBy: expect.stringMatching(/^\d+@/),
    });
    // One named directly: its cursor read, not listed.
    expect(
      (await describeConsumers(e, target.cursors, ['behind', 'never'])).consumers.map((consumer) => [
        consumer.name,
        consumer.lagCommits,
      ]),
    ).toEqual([
      ['behind', 10],
      ['never', 30],
    ]);
  });

  it('with acknowledgements, checkpoints only what was acknowledged, and refuses an acknowledgement of nothing delivered', async () => {
    const acks = new Acknowledgements(5);
    const delivered: string[] = [];
    const stop = new AbortController();
    const running = consume('acked', (commit) => void delivered.push(commit.commitKey), {
      mirror: a,
      cursors: target.cursors,
      follow: true,
      signal: stop.signal,
      poll: { minMs: 10, maxMs: 20 },
      acknowledgements: acks,
    });
    // Five delivered, then the window is full: nothing more until they are acknowledged.
    await waitFor(() => delivered.length === 5, 'five commits delivered');
    expect(acks.waiting).toBe(5);
    await acks.ack(keys[2]!);
    await waitFor(() => delivered.length === 8, 'three more delivered');
    await waitFor(
      async () => (await cursorOf(target.cursors, a, 'acked')) === stamp(2),
      'the checkpoint of the acknowledged commit on the idle-or-interval flush',
    );
    await expect(acks.ack('001zzzzzzzzz')).rejects.toMatchObject({ name: 'AcknowledgementError' });
    stop.abort();
    await expect(running).rejects.toMatchObject({ code: 'CS_ERR_CONSUMER_HANDLER' });
    expect(await cursorOf(target.cursors, a, 'acked')).toBe(stamp(2));
  });
});
