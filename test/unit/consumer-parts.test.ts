/**
 * The consumer's parts without a store: the watermark and manifest checks, listing starts, the ordered read-ahead
 * and the wake-up of follow mode.
 */
import { describe, expect, it } from 'vitest';
import { commitKeyOfManifestKey, parseManifest, parseWatermark } from '../../lambda/consumer/documents.js';
import { bufferAhead, mapInOrder } from '../../lambda/consumer/read-ahead.js';
import { startAfterOf } from '../../lambda/consumer/reader.js';
import { nextInterval, WakeUp } from '../../lambda/consumer/wake.js';

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));
const STAMP = '2017-10-31T23:30:32.4197849Z';
const KEY = '001e9fzMHc3F';

describe('watermark and manifest checks', () => {
  it("reads a watermark and refuses one whose commitKey is not its cursor's, naming the key", () => {
    expect(parseWatermark(json({ cursor: STAMP, commitId: 'c', commitKey: KEY, updatedAt: 'now' }), 'w')).toMatchObject(
      { commitKey: KEY, cursor: STAMP },
    );
    expect(() =>
      parseWatermark(json({ cursor: STAMP, commitId: 'c', commitKey: '001e9fzMHc3G' }), 'bucket watermark.json'),
    ).toThrow(
      expect.objectContaining({
        code: 'CS_ERR_MIRROR_DOCUMENT',
        message: expect.stringMatching(
          /^bucket watermark\.json: "commitKey" "001e9fzMHc3G" is not the key of "cursor"/,
        ),
      }),
    );
    expect(() => parseWatermark(Buffer.from('{'), 'w')).toThrow(/w: not valid JSON/);
    expect(() => parseWatermark(json({ cursor: 'yesterday', commitKey: KEY }), 'w')).toThrow(
      /"cursor" "yesterday" is not a timestamp/,
    );
  });

  it("reads a manifest and refuses one stored under another commit's key, or with a bad leaf", () => {
    const leaf = { key: `leaves/${KEY}/a/1.0.0.json`, id: 'A', version: '1.0.0', type: 'PackageDetails' };
    expect(
      parseManifest(
        json({ commitId: 'c', commitTimeStamp: STAMP, leaves: [leaf, { ...leaf, quarantined: true }] }),
        KEY,
        'm',
      ),
    ).toEqual({
      commitKey: KEY,
      commitId: 'c',
      commitTimeStamp: STAMP,
      leaves: [leaf, { ...leaf, quarantined: true }],
    });
    expect(() =>
      parseManifest(json({ commitId: 'c', commitTimeStamp: STAMP, leaves: [] }), '001e9fzMHc3G', 'm'),
    ).toThrow(/has the key 001e9fzMHc3F, not the manifest's 001e9fzMHc3G/);
    expect(() =>
      parseManifest(json({ commitId: 'c', commitTimeStamp: STAMP, leaves: [{ ...leaf, type: 'Other' }] }), KEY, 'm'),
    ).toThrow(/m leaves\[0\]: "type" "Other"/);
    expect(() => parseManifest(json({ commitId: 'c', commitTimeStamp: STAMP }), KEY, 'm')).toThrow(
      /"leaves" is missing/,
    );
    expect(
      parseManifest(json({ commitId: 'c', commitTimeStamp: STAMP, filtered: 2, leaves: [] }), KEY, 'm'),
    ).toMatchObject({ filtered: 2, leaves: [] });
    expect(() =>
      parseManifest(json({ commitId: 'c', commitTimeStamp: STAMP, filtered: -1, leaves: [] }), KEY, 'm'),
    ).toThrow(/m: "filtered" is not a whole number >= 0/);
  });

  it('takes only manifest keys of the prefix', () => {
    expect(commitKeyOfManifestKey('p/', `p/commits/${KEY}.json`)).toBe(KEY);
    for (const key of [
      `p/commits/${KEY}.txt`,
      'p/commits/readme.json',
      `p/commits/${KEY}x.json`,
      `p/commits/001e9fzMHc3_.json`,
    ])
      expect(commitKeyOfManifestKey('p/', key)).toBeUndefined();
  });
});

describe('listing starts', () => {
  it('after a key is exclusive; since a time is inclusive of a commit at exactly that time', () => {
    const after = startAfterOf('p/', { after: KEY })!;
    const since = startAfterOf('p/', { since: STAMP })!;
    const manifest = `p/commits/${KEY}.json`;
    expect(manifest > after).toBe(false);
    expect(manifest > since).toBe(true);
    expect(`p/commits/001e9fzMHc3E.json` > since).toBe(false);
    expect(startAfterOf('p/', { since: new Date(Date.UTC(2017, 9, 31, 23, 30, 32, 419)) })! < since).toBe(true);
    expect(startAfterOf('', { since: '1969-12-31' })).toBeUndefined();
    expect(startAfterOf('', {})).toBeUndefined();
  });

  it('refuses a bad key, a bad time, or both at once', () => {
    expect(() => startAfterOf('', { after: 'nope' })).toThrow(
      expect.objectContaining({
        code: 'CS_ERR_CONSUMER',
        message: expect.stringContaining('after "nope" is not a commit key'),
      }),
    );
    expect(() => startAfterOf('', { since: 'soon' })).toThrow(/since "soon" is not a time/);
    expect(() => startAfterOf('', { since: new Date(Number.NaN) })).toThrow(/is not a time/);
    expect(() => startAfterOf('', { after: KEY, since: STAMP })).toThrow(/not both/);
  });
});

describe('mapInOrder', () => {
  it('yields in the order of the source however the fetches finish, with at most `limit` in flight', async () => {
    async function* numbers(): AsyncGenerator<number> {
      for (let i = 0; i < 50; i++) yield i;
    }
    let inFlight = 0;
    let most = 0;
    const out: number[] = [];
    for await (const n of mapInOrder(numbers(), 4, async (i) => {
      inFlight++;
      most = Math.max(most, inFlight);
      // Later items finish first within each group.
      for (let k = 0; k < 10 - (i % 10); k++) await Promise.resolve();
      inFlight--;
      return i * 2;
    }))
      out.push(n);
    expect(out).toEqual(Array.from({ length: 50 }, (_, i) => i * 2));
    expect(most).toBeLessThanOrEqual(4);
    expect(most).toBeGreaterThan(1);
  });

  it('surfaces a fetch failure in its turn', async () => {
    async function* three(): AsyncGenerator<number> {
      yield 1;
      yield 2;
      yield 3;
    }
    const out: number[] = [];
    await expect(
      (async () => {
        for await (const n of mapInOrder(three(), 3, async (i) => (i === 2 ? Promise.reject(new Error('two')) : i)))
          out.push(n);
      })(),
    ).rejects.toThrow('two');
    expect(out).toEqual([1]);
  });
});

describe('bufferAhead', () => {
  it('yields every item in order, pulls at most `size` ahead, and surfaces a failure after the items before it', async () => {
    let pulled = 0;
    async function* source(fail: boolean): AsyncGenerator<number> {
      for (let i = 0; i < 20; i++) {
        await Promise.resolve();
        pulled++;
        yield i;
      }
      if (fail) throw new Error('listing failed');
    }
    const out: number[] = [];
    let mostAhead = 0;
    for await (const n of bufferAhead(source(false), 5)) {
      mostAhead = Math.max(mostAhead, pulled - out.length);
      out.push(n);
      for (let k = 0; k < 20; k++) await Promise.resolve();
    }
    expect(out).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(mostAhead).toBeLessThanOrEqual(6);
    expect(mostAhead).toBeGreaterThan(1);
    pulled = 0;
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const n of bufferAhead(source(true), 3)) seen.push(n);
      })(),
    ).rejects.toThrow('listing failed');
    expect(seen).toHaveLength(20);
  });
});

describe('WakeUp', () => {
  it('a wake before the wait ends it at once; abort ends it unwoken', async () => {
    const wake = new WakeUp();
    wake.wake();
    expect(await wake.wait(60_000)).toBe(true);
    const stop = new AbortController();
    const waiting = wake.wait(60_000, stop.signal);
    stop.abort();
    expect(await waiting).toBe(false);
    const woken = wake.wait(60_000);
    wake.wake();
    expect(await woken).toBe(true);
  });

  it('backs off by doubling to the maximum, and back to the minimum once something moved', () => {
    const poll = { minMs: 100, maxMs: 350 };
    expect(nextInterval(100, false, poll)).toBe(200);
    expect(nextInterval(200, false, poll)).toBe(350);
    expect(nextInterval(350, true, poll)).toBe(100);
  });
});
