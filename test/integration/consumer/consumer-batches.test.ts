/**
 * Batches as deep as the stream (`consumeBatches` with `batchSize: { max }`, issue 32; the latest view's upkeep): the
 * first commit is handed over at once, the next batch is everything read while one is handled (never more than
 * `max`), in order and checkpointed as any batch; a failing batch stops the read and is named.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumeBatches, ConsumerHandlerError, type Mirror } from '../../../lambda/consumer/index.js';
import { formatTimestamp, parseTimestamp } from '../../../lambda/contract/time.js';
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
