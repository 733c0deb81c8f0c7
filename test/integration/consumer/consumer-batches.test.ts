/**
 * Batches as deep as the stream (`consumeBatches` with `batchSize: { max }`, issue 32; the latest view's upkeep): the
 * first commit is handed over at once, the next batch is everything read while one is handled (never more than
 * `max`), in order and checkpointed as any batch; a failing batch stops the read and is named.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumeBatches, consumerKey, ConsumerHandlerError, type Mirror } from '../../../lambda/consumer/index.js';
import { commitKeyOf, manifestKey, watermarkKeyOf } from '../../../lambda/contract/keys.js';
import { formatTimestamp, parseTimestamp } from '../../../lambda/contract/time.js';
import { VIEW_CONSUMER } from '../../../lambda/contract/view.js';
import type { SnapshotReader } from '../../../lambda/consumer/index.js';
import { generateCatalog } from '../../../testkit/catalog-generator.js';
import { openViewTarget, type ViewTestTarget } from '../../../testkit/view-harness.js';
import { cursorOf, keysOf, writeManifests } from './consumer-kit.js';

describe('batches as deep as the stream', () => {
  let target: ViewTestTarget;
  let mirror: Mirror;
  let keys: string[];
  /** Each commit's timestamp as a cursor stores it. */
  let stamps: string[];
  beforeAll(async () => {
    const catalog = generateCatalog({ commits: 30, seed: 3232, leavesPerCommit: [1, 4] });
    target = await openViewTarget('local folder');
    mirror = target.mirror;
    keys = keysOf(catalog.commits);
    stamps = catalog.commits.map((commit) => formatTimestamp(parseTimestamp(commit.timestamp)));
    await writeManifests(target.store, '', catalog.commits);
  });
  afterAll(() => target.close());

  it('one commit at once, then what was read meanwhile, at most max; in order; checkpointed', async () => {
    const batches: string[][] = [];
    let read = 0;
    let nineRead!: () => void;
    const nine = new Promise<void>((resolve) => (nineRead = resolve));
    const result = await consumeBatches(
      'deep',
      async (commits) => {
        batches.push(commits.map((commit) => commit.commitKey));
        // The first batch is held until the read has gone as far as it may meanwhile: 8 commits past it.
        if (batches.length === 1) await nine;
      },
      {
        mirror,
        cursors: target.cursors,
        batchSize: {
          max: 8,
          onRead: () => {
            if (++read === 9) nineRead();
          },
        },
      },
    );
    expect(batches[0]).toEqual(keys.slice(0, 1));
    expect(batches[1]).toEqual(keys.slice(1, 9));
    expect(batches.every((batch) => batch.length >= 1 && batch.length <= 8)).toBe(true);
    expect(batches.flat()).toEqual(keys);
    expect(read).toBe(keys.length);
    expect(result).toMatchObject({ commits: keys.length, stoppedBy: 'caught-up' });
    expect(await cursorOf(target.cursors, mirror, 'deep')).toBe(stamps.at(-1));
  });

  it('onFetched: a slow manifest holds up the commits after it for no work that needs no order; onRead and batches stay in order', async () => {
    const held = manifestKey('', keys[2]!);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const fetched: string[] = [];
    const read: string[] = [];
    const batches: string[][] = [];
    let handedOverWhileHeld = -1;
    const slow = withSlowRead(mirror.store, held, released);
    const result = await consumeBatches(
      'fetched',
      (commits) => {
        batches.push(commits.map((commit) => commit.commitKey));
      },
      {
        mirror: { ...mirror, store: slow },
        cursors: target.cursors,
        batchSize: {
          max: 8,
          onRead: (commit) => read.push(commit.commitKey),
          onFetched: (commit) => {
            fetched.push(commit.commitKey);
            // Every other manifest is told of while the third one's read is still held.
            if (fetched.length === keys.length - 1) {
              handedOverWhileHeld = batches.flat().length;
              release();
            }
          },
        },
      },
    );
    expect(fetched.slice(0, keys.length - 1)).not.toContain(keys[2]);
    expect(fetched.at(-1)).toBe(keys[2]);
    expect([...fetched].sort()).toEqual(keys);
    expect(handedOverWhileHeld).toBeLessThanOrEqual(2);
    expect(read).toEqual(keys);
    expect(batches.flat()).toEqual(keys);
    expect(result).toMatchObject({ commits: keys.length, stoppedBy: 'caught-up' });
  }, 20_000);

  it('onFetched: commits listed ahead for a built-in bound past the watermark are not told of', async () => {
    // The gate's mirror: 30 manifests, its watermark at the 20th; the latest view's cursor (a bound whose manifests
    // are stored, listed beside the watermark's read) at the 30th.
    const catalog = generateCatalog({ commits: 30, seed: 3232, leavesPerCommit: [1, 4] });
    const gate: Mirror = { ...mirror, prefix: 'gate/' };
    await writeManifests(target.store, 'gate/', catalog.commits);
    const twentieth = catalog.commits[19]!;
    await target.store.putJson(watermarkKeyOf('gate/'), {
      cursor: formatTimestamp(parseTimestamp(twentieth.timestamp)),
      commitId: twentieth.commitId,
      commitKey: commitKeyOf(twentieth.timestamp),
      updatedAt: new Date(0).toISOString(),
    });
    const last = catalog.commits.at(-1)!;
    await target.cursors.compareAndSet(consumerKey(gate, VIEW_CONSUMER), undefined, {
      value: parseTimestamp(last.timestamp),
      commitId: last.commitId,
      runId: 'test',
    });
    const fetched: string[] = [];
    const result = await consumeBatches('gated', () => undefined, {
      mirror: gate,
      cursors: target.cursors,
      dependsOn: [VIEW_CONSUMER],
      batchSize: { max: 8, onFetched: (commit) => fetched.push(commit.commitKey) },
    });
    expect(result).toMatchObject({ commits: 20 });
    expect([...fetched].sort()).toEqual(keys.slice(0, 20));
  });

  it('onFetched: nothing is told of once the read has stopped, even a manifest that arrives after it', async () => {
    // The tenth manifest's read is held while the first batch's handler stops the read (a signal); it is let go only
    // once the pass has returned.
    const held = manifestKey('', keys[9]!);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let heldRead: Promise<unknown> | undefined;
    const slow = new Proxy(mirror.store, {
      get(target, property, receiver) {
        if (property === 'getBytes')
          return (asked: string) => {
            const read = (asked === held ? released : Promise.resolve()).then(() => target.getBytes(asked));
            if (asked === held) heldRead = read;
            return read;
          };
        const value = Reflect.get(target, property, receiver) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    }) as SnapshotReader;
    const stop = new AbortController();
    const fetched: string[] = [];
    const result = await consumeBatches(
      'stopped',
      () => {
        stop.abort();
      },
      {
        mirror: { ...mirror, store: slow },
        cursors: target.cursors,
        signal: stop.signal,
        batchSize: { max: 8, onFetched: (commit) => fetched.push(commit.commitKey) },
      },
    );
    expect(result).toMatchObject({ stoppedBy: 'aborted' });
    expect(heldRead).toBeDefined();
    const before = [...fetched];
    expect(before).not.toContain(keys[9]);
    release();
    await heldRead;
    // The reader's own continuation of the held read (its parse, then the hook) runs within these turns.
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(fetched).toEqual(before);
  });

  it('a failing batch stops the read, is named, and the cursor stays after the batch before it', async () => {
    let calls = 0;
    const failing = consumeBatches(
      'failing',
      () => {
        if (++calls === 2) throw new Error('index write failed');
      },
      { mirror, cursors: target.cursors, batchSize: { max: 4 } },
    );
    const error = await failing.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConsumerHandlerError);
    // The first batch was the first commit alone: the failing one begins at the second.
    expect((error as ConsumerHandlerError).commitKey).toBe(keys[1]);
    expect(calls).toBe(2);
    expect(await cursorOf(target.cursors, mirror, 'failing')).toBe(stamps[0]);
  });

  it('refuses a max that is not a whole number >= 1', async () => {
    await expect(
      consumeBatches('bad', () => undefined, { mirror, cursors: target.cursors, batchSize: { max: 0 } }),
    ).rejects.toThrow(/batchSize\.max 0 must be a whole number >= 1/);
  });
});

/** `store` with the read of `key` held until `released`. */
function withSlowRead(store: SnapshotReader, key: string, released: Promise<void>): SnapshotReader {
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'getBytes')
        return async (asked: string) => {
          if (asked === key) await released;
          return target.getBytes(asked);
        };
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
