import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import {
  CommitKeyError,
  COMMIT_KEY_LENGTH,
  commitKey,
  commitKeyOf,
  decodeCommitKey,
} from '../../lambda/contract/keys.js';
import { startAfterKey } from '../../lambda/ids/start-after.js';
import { KuuidError, prefix, prefixms } from '../../lambda/ids/kuuid.js';
import {
  formatTimestamp,
  parseTimestamp,
  TICKS_PER_SECOND,
  UNIX_EPOCH_TICKS,
  type Ticks,
} from '../../lambda/contract/time.js';

interface CatalogPage {
  commitTimeStamp: string;
  items: { commitTimeStamp: string; 'nuget:id': string; 'nuget:version': string }[];
}
const page = JSON.parse(
  readFileSync(new URL('../fixtures/docs.microsoft.com-nuget/catalog-page.json', import.meta.url), 'utf8'),
) as CatalogPage;

const kuuid = createRequire(import.meta.url)('kuuid') as { prefix(t: string): string };

const TICKS_2100 = parseTimestamp('2100-01-01T00:00:00Z');
const ticksArb = fc.bigInt({ min: UNIX_EPOCH_TICKS, max: TICKS_2100 });
const sign = (n: bigint | number): number => (n > 0 ? 1 : n < 0 ? -1 : 0);
/** Byte-order comparison; never localeCompare. */
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

describe('commitKey', () => {
  it('matches the spec example', () => {
    expect(commitKeyOf('2017-10-31T23:30:32.4197849Z')).toBe('001e9fzMHc3F');
    expect(commitKey(parseTimestamp('2017-10-31T23:30:32.4197849Z'))).toBe('001e9fzMHc3F');
  });

  it('spans 0000…fxSJ within a second', () => {
    expect(commitKeyOf('2017-10-31T23:30:32Z')).toBe('001e9fzM0000');
    expect(commitKeyOf('2017-10-31T23:30:32.0000001Z')).toBe('001e9fzM0001');
    expect(commitKeyOf('2017-10-31T23:30:32.9999999Z')).toBe('001e9fzMfxSJ');
    expect(commitKeyOf('2017-10-31T23:30:33Z')).toBe('001e9fzN0000');
    expect(commitKeyOf('1970-01-01T00:00:00Z')).toBe('000000000000');
  });

  it('applies offsets', () => {
    expect(commitKeyOf('2017-11-01T01:30:32.4197849+02:00')).toBe('001e9fzMHc3F');
  });

  it('gives two commits inside one millisecond distinct keys in order', () => {
    const a = '2017-10-31T23:30:32.4190001Z';
    const b = '2017-10-31T23:30:32.4197849Z';
    expect(prefixms(a)).toBe(prefixms(b));
    const ka = commitKeyOf(a);
    const kb = commitKeyOf(b);
    expect(ka).not.toBe(kb);
    expect(ka < kb).toBe(true);
  });

  it('keys every timestamp of the catalog page fixture', () => {
    const stamps = [page.commitTimeStamp, ...page.items.map((i) => i.commitTimeStamp)];
    const expected: Record<string, string> = {
      '2017-10-31T23:30:32.4197849Z': '001e9fzMHc3F',
      '2017-10-31T23:28:02.788239Z': '001e9fwwX4ZK',
      '2017-10-31T22:31:22.5169519Z': '001e9f46LgpL',
    };
    for (const stamp of stamps) {
      const key = commitKeyOf(stamp);
      expect(key).toBe(expected[stamp]);
      expect(key).toHaveLength(COMMIT_KEY_LENGTH);
      expect(key.slice(0, 8)).toBe(kuuid.prefix(stamp));
      expect(decodeCommitKey(key)).toBe(parseTimestamp(stamp));
    }
    const byTime = [...new Set(stamps)].sort((x, y) => sign(parseTimestamp(x) - parseTimestamp(y)));
    const byKey = [...new Set(stamps)].sort((x, y) => cmp(commitKeyOf(x), commitKeyOf(y)));
    expect(byKey).toEqual(byTime);
  });

  it.each<[string, Ticks]>([
    ['one tick before 1970', UNIX_EPOCH_TICKS - 1n],
    ['year 1', 0n],
    ['past zzzzzzzz seconds', UNIX_EPOCH_TICKS + 62n ** 8n * TICKS_PER_SECOND],
  ])('throws CommitKeyError for %s', (_, ticks) => {
    expect(() => commitKey(ticks)).toThrow(CommitKeyError);
  });

  it('reaches zzzzzzzzfxSJ at the last representable tick', () => {
    const last = UNIX_EPOCH_TICKS + 62n ** 8n * TICKS_PER_SECOND - 1n;
    expect(commitKey(last)).toBe('zzzzzzzzfxSJ');
    expect(decodeCommitKey('zzzzzzzzfxSJ')).toBe(last);
  });

  it('commitKeyOf throws CommitKeyError for bad text, keeping the cause', () => {
    for (const text of ['', 'garbage', '2017-10-31T23:30:32', '1969-12-31T23:59:59.9999999Z']) {
      expect(() => commitKeyOf(text)).toThrow(CommitKeyError);
    }
    try {
      commitKeyOf('garbage');
      expect.unreachable();
    } catch (error) {
      expect((error as CommitKeyError).cause).toBeInstanceOf(Error);
      expect((error as Error).message).toContain('"garbage"');
    }
  });
});

describe('decodeCommitKey', () => {
  it('inverts the spec example', () => {
    expect(formatTimestamp(decodeCommitKey('001e9fzMHc3F'))).toBe('2017-10-31T23:30:32.4197849Z');
  });

  it.each(['', '001e9fzMHc3', '001e9fzMHc3F0', '001e9fzM-c3F', '001e9fzMHc3\u00e9', '001e9fzMfxSK', '001e9fzMzzzz'])(
    'rejects %j',
    (key) => {
      expect(() => decodeCommitKey(key)).toThrow(CommitKeyError);
    },
  );
});

describe('properties', () => {
  it('key order equals ticks order; length 12; decode inverts', () => {
    fc.assert(
      fc.property(ticksArb, ticksArb, (a, b) => {
        const ka = commitKey(a);
        const kb = commitKey(b);
        expect(ka).toHaveLength(12);
        expect(ka).toMatch(/^[0-9A-Za-z]{12}$/);
        expect(sign(cmp(ka, kb))).toBe(sign(a - b));
        expect(decodeCommitKey(ka)).toBe(a);
        expect(decodeCommitKey(kb)).toBe(b);
      }),
      { numRuns: 1000 },
    );
  });

  it('close ticks (same second, same millisecond) still order correctly', () => {
    fc.assert(
      fc.property(ticksArb, fc.integer({ min: 0, max: 20_000 }), (a, delta) => {
        const b = a + BigInt(delta);
        expect(sign(cmp(commitKey(a), commitKey(b)))).toBe(sign(a - b));
      }),
    );
  });

  it('the first 8 characters are kuuid’s prefix of the commit time', () => {
    fc.assert(
      fc.property(ticksArb, (t) => {
        const text = formatTimestamp(t);
        expect(commitKey(t).slice(0, 8)).toBe(prefix(text));
        expect(commitKey(t).slice(0, 8)).toBe(kuuid.prefix(text));
      }),
      { numRuns: 300 },
    );
  });
});

describe('startAfterKey', () => {
  it('is leaves/ + prefix of the second, after the key prefix', () => {
    expect(startAfterKey('2017-10-31T23:30:32.4197849Z')).toBe('leaves/001e9fzM');
    expect(startAfterKey('2017-10-31T23:30:32.4197849Z', 'mirror/')).toBe('mirror/leaves/001e9fzM');
    expect(startAfterKey(new Date('2017-10-31T23:30:32.419Z'))).toBe('leaves/001e9fzM');
    expect(startAfterKey('2017-10-31T23:30:32Z')).toBe(`leaves/${kuuid.prefix('2017-10-31T23:30:32Z')}`);
  });

  it('throws KuuidError for times kuuid would mishandle', () => {
    for (const t of ['2017-10-31T23:30:32', '', '1969-12-31T23:59:59Z', new Date(Number.NaN)]) {
      expect(() => startAfterKey(t)).toThrow(KuuidError);
    }
  });

  it('sorts before every key of its second and after every key of the previous second', () => {
    const leaf = (t: Ticks, p: string): string => `${p}leaves/${commitKey(t)}/some.package/1.0.0.json`;
    const manifestLike = (t: Ticks, p: string): string => `${p}leaves/${commitKey(t)}`;
    fc.assert(
      fc.property(
        fc.bigInt({ min: UNIX_EPOCH_TICKS + TICKS_PER_SECOND, max: TICKS_2100 }),
        fc.integer({ min: 0, max: 9_999_999 }),
        fc.integer({ min: 0, max: 9_999_999 }),
        fc.constantFrom('', 'mirror/'),
        (t, within, previousWithin, p) => {
          const second = t - ((t - UNIX_EPOCH_TICKS) % TICKS_PER_SECOND);
          const bound = startAfterKey(formatTimestamp(t), p);
          const same = second + BigInt(within);
          const previous = second - TICKS_PER_SECOND + BigInt(previousWithin);
          for (const key of [leaf(same, p), manifestLike(same, p)]) {
            expect(bound < key).toBe(true);
          }
          for (const key of [leaf(previous, p), manifestLike(previous, p)]) {
            expect(key < bound).toBe(true);
          }
        },
      ),
    );
  });
});
