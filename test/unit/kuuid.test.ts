import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { ALPHABET, decodeBase62 } from '../../lambda/contract/base62.js';
import {
  createKuuid,
  decode,
  id,
  idms,
  ID_PATTERN,
  isId,
  KuuidError,
  prefix,
  prefixms,
  prefixReverse,
  prefixReverseMs,
  type KuuidTime,
} from '../../lambda/ids/kuuid.js';

interface PrefixVector {
  input: string | number;
  epoch_ms: number;
  epoch_s: number;
  prefix: string;
  prefixms: string;
  prefixReverse: string;
  prefixReverseMs: string;
}
interface Vectors {
  prefix_vectors: PrefixVector[];
  random_group_vectors: { bytes_hex: string; uint32: number; group: string }[];
  deterministic_id_vectors: { fn: string; timestamp: string; randomBytes_calls_hex: string[]; id: string; length: number }[];
  random_samples: Record<string, string[] | string>;
  validation_regex: { id: string; ids: string };
}

const vectors = JSON.parse(
  readFileSync(new URL('../fixtures/kuuid-vectors.json', import.meta.url), 'utf8'),
) as Vectors;

/** The real npm package, CommonJS; its typings omit prefixReverse/prefixReverseMs. */
interface RealKuuid {
  id(t?: string | number): string;
  idms(t?: string | number): string;
  prefix(t?: unknown): string;
  prefixms(t?: string | number): string;
  prefixReverse(t?: string | number): string;
  prefixReverseMs(t?: string | number): string;
}
const kuuid = createRequire(import.meta.url)('kuuid') as RealKuuid;

/** A random source that replays fixed 4-byte answers and records the sizes asked for. */
function replay(hexes: readonly string[]): { randomBytes: (size: number) => Uint8Array; sizes: number[] } {
  const queue = [...hexes];
  const sizes: number[] = [];
  return {
    sizes,
    randomBytes: (size) => {
      sizes.push(size);
      const hex = queue.shift();
      if (hex === undefined) throw new Error('random source exhausted');
      return Uint8Array.from(Buffer.from(hex, 'hex'));
    },
  };
}

const MS_1970 = 0;
const MS_2100 = Date.UTC(2100, 0, 1);
const msArb = fc.integer({ min: MS_1970, max: MS_2100 });
const dateArb = fc.date({ min: new Date(MS_1970), max: new Date(MS_2100), noInvalidDate: true });

const sign = (n: number | bigint): number => (n > 0 ? 1 : n < 0 ? -1 : 0);
/** Byte-order comparison; never localeCompare, whose collation does not follow ASCII. */
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

describe('prefix vectors', () => {
  it.each(vectors.prefix_vectors)('$input → prefix $prefix, prefixms $prefixms', (v) => {
    expect(prefix(v.input)).toBe(v.prefix);
    expect(prefixms(v.input)).toBe(v.prefixms);
    expect(prefixReverse(v.input)).toBe(v.prefixReverse);
  });

  it.each(vectors.prefix_vectors.filter((v) => v.epoch_ms <= 62 ** 8 - 1))('$input → prefixReverseMs $prefixReverseMs', (v) => {
    expect(prefixReverseMs(v.input)).toBe(v.prefixReverseMs);
  });

  it('throws where kuuid clamps a negative reverse to 00000000 (ms after 8888-12-02)', () => {
    const late = vectors.prefix_vectors.filter((v) => v.epoch_ms > 62 ** 8 - 1);
    expect(late.map((v) => v.prefixReverseMs)).toEqual(['00000000']);
    for (const v of late) expect(() => prefixReverseMs(v.input)).toThrow(KuuidError);
  });

  it.each(vectors.prefix_vectors)('$input as epoch ms and as a Date gives the same prefixes', (v) => {
    for (const t of [v.epoch_ms, new Date(v.epoch_ms)]) {
      expect(prefix(t)).toBe(v.prefix);
      expect(prefixms(t)).toBe(v.prefixms);
    }
  });

  it('reproduces kuuid’s 9-character prefixms after 62⁸ ms, for byte compatibility', () => {
    expect(prefixms('9999-12-31T23:59:59.999Z')).toBe('19xHxFvyx');
    expect(prefixms(62 ** 8 - 1)).toBe('zzzzzzzz');
    expect(prefixms(62 ** 8)).toBe('100000000');
  });
});

describe('random groups and deterministic ids', () => {
  it.each(vectors.random_group_vectors)('bytes $bytes_hex → group $group', (v) => {
    const source = replay([v.bytes_hex, v.bytes_hex, v.bytes_hex, v.bytes_hex]);
    const made = createKuuid(source).id('1970-01-01T00:00:00Z');
    expect(made).toBe('00000000' + v.group.repeat(4));
    expect(decodeBase62(v.group)).toBe(BigInt(v.uint32));
  });

  const supported = vectors.deterministic_id_vectors.filter((v) => v.fn === 'id' || v.fn === 'idms');

  it('has id and idms vectors', () => {
    expect(supported.length).toBeGreaterThanOrEqual(12);
  });

  it.each(supported)('$fn($timestamp) with $randomBytes_calls_hex → $id', (v) => {
    const source = replay(v.randomBytes_calls_hex);
    const k = createKuuid(source);
    const made = v.fn === 'id' ? k.id(v.timestamp) : k.idms(v.timestamp);
    expect(made).toBe(v.id);
    expect(made).toHaveLength(v.length);
    // Four calls of randomBytes(4), in order, exactly as kuuid draws them.
    expect(source.sizes).toEqual([4, 4, 4, 4]);
    expect(isId(made)).toBe(true);
  });

  it('draws no random bytes when the time is invalid', () => {
    const source = replay([]);
    expect(() => createKuuid(source).id('')).toThrow(KuuidError);
    expect(source.sizes).toEqual([]);
  });

  it('rejects a random source that returns fewer than 4 bytes', () => {
    expect(() => createKuuid({ randomBytes: () => new Uint8Array(3) }).id(0)).toThrow(KuuidError);
  });

  it('uses the injected clock when the time is omitted', () => {
    const k = createKuuid({ randomBytes: replay(['00000000', '00000000', '00000000', '00000000']).randomBytes, now: () => 1509492632419 });
    expect(k.id()).toBe('001e9fzM' + '0'.repeat(24));
    const k2 = createKuuid({ randomBytes: replay(['00000000', '00000000', '00000000', '00000000']).randomBytes, now: () => 1509492632419 });
    expect(k2.idms(null)).toBe('0QZg5Fhb' + '0'.repeat(24));
  });
});

describe('ID_PATTERN and isId', () => {
  it('is the regex of the vectors file', () => {
    expect(ID_PATTERN.source).toBe(vectors.validation_regex.id.split(/\s+/)[0]);
  });

  it('accepts kuuid’s own random samples of id and idms', () => {
    const samples = [
      ...(vectors.random_samples['id()'] as string[]),
      ...(vectors.random_samples['id("2017-10-31T23:30:32.4197849Z")'] as string[]),
      ...(vectors.random_samples['idms("2017-10-31T23:30:32.4197849Z")'] as string[]),
    ];
    expect(samples.length).toBeGreaterThan(0);
    for (const s of samples) {
      expect(s).toMatch(ID_PATTERN);
      expect(isId(s)).toBe(true);
    }
  });

  it('rejects groups above 4gfFC3, wrong lengths and foreign characters', () => {
    expect(isId('001e9fzM4gfFC34gfFC34gfFC34gfFC3')).toBe(true);
    expect(isId('001e9fzM4gfFC44gfFC34gfFC34gfFC3')).toBe(false);
    expect(isId('001e9fzM4gfFC34gfFC34gfFC34gfFC4')).toBe(false);
    expect(isId('001e9fzM5000000000000000000000000'.slice(0, 32))).toBe(false);
    expect(isId('001e9fzM00000000000000000000000')).toBe(false);
    expect(isId('001e9fzM0000000000000000000000000')).toBe(false);
    expect(isId('001e9fzM-00000000000000000000000')).toBe(false);
    expect(isId('001e9fzM')).toBe(false);
  });
});

describe('kuuid weaknesses are errors', () => {
  it.each<[string, KuuidTime]>([
    ['a string before 1970', '1969-12-31T23:59:59Z'],
    ['a string one tick before 1970', '1969-12-31T23:59:59.9999999Z'],
    ['an offset that lands before 1970', '1970-01-01T00:30:00+01:00'],
    ['a Date before 1970', new Date(-1)],
    ['negative milliseconds', -1],
    ['a date-time without a zone', '2017-10-31T23:30:32'],
    ['a date-time with fractions but no zone', '2017-10-31T23:30:32.419'],
    ['a date without a zone', '2018-01-01'],
    ['the empty string', ''],
    ['an invalid string', 'not a date'],
    ['an impossible date', '2017-02-30T00:00:00Z'],
    ['an Invalid Date', new Date(Number.NaN)],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['milliseconds beyond the Date range', 8.64e15 + 1],
    ['eight fractional digits', '2017-10-31T23:30:32.41978491Z'],
  ])('%s', (_, t) => {
    for (const f of [prefix, prefixms, prefixReverse, prefixReverseMs, id, idms]) {
      expect(() => f(t)).toThrow(KuuidError);
    }
  });

  it('rejects values of other types (kuuid: id(true) throws, prefix({}) is now)', () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    for (const t of [true, {}, [], 1n, { big: 1n }, circular] as unknown as KuuidTime[]) {
      expect(() => prefix(t)).toThrow(KuuidError);
      expect(() => id(t)).toThrow(KuuidError);
    }
  });

  it('names the bad input and keeps the parse error as cause', () => {
    expect(() => prefix('2017-10-31T23:30:32')).toThrow(/"2017-10-31T23:30:32".*no time zone/);
    expect(() => prefix('')).toThrow(/"".*empty/);
    try {
      prefix('not a date');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(KuuidError);
      expect((error as KuuidError).input).toBe('not a date');
      expect((error as KuuidError).cause).toBeInstanceOf(Error);
    }
  });

  it('numeric 0 is the epoch, not now', () => {
    expect(prefix(0)).toBe('00000000');
    expect(prefixms(0)).toBe('00000000');
    expect(prefix(new Date(0))).toBe('00000000');
    expect(id(0).slice(0, 8)).toBe('00000000');
    expect(idms(0).slice(0, 8)).toBe('00000000');
    // kuuid treats 0 as "now".
    expect(kuuid.prefix(0)).not.toBe('00000000');
  });

  it('undefined and null mean now', () => {
    for (const t of [undefined, null]) {
      const before = Math.floor(Date.now() / 1000);
      const got = Number(decodeBase62(prefix(t)));
      const after = Math.floor(Date.now() / 1000);
      expect(got).toBeGreaterThanOrEqual(before);
      expect(got).toBeLessThanOrEqual(after);
      expect(isId(id(t))).toBe(true);
    }
  });

  it('keeps the seven fractional digits kuuid loses, and floors exactly', () => {
    expect(prefix('2017-10-31T23:30:32.9999999Z')).toBe('001e9fzM');
    expect(prefixms('2017-10-31T23:30:32.4199999Z')).toBe(prefixms('2017-10-31T23:30:32.419Z'));
    expect(prefixms('2017-10-31T23:30:32.4200000Z')).toBe(prefixms('2017-10-31T23:30:32.420Z'));
    expect(prefixms('1970-01-01T00:00:00.0009999Z')).toBe('00000000');
  });

  it('applies offsets', () => {
    expect(prefix('2017-11-01T01:30:32+02:00')).toBe('001e9fzM');
    expect(prefix('2017-10-31T18:00:32-05:30')).toBe('001e9fzM');
    expect(prefix('1970-01-01T01:00:00+01:00')).toBe('00000000');
  });

  it('floors fractional milliseconds as Date does', () => {
    expect(prefixms(1.9)).toBe('00000001');
    expect(prefixms(999.999)).toBe('000000G7');
  });
});

describe('decode', () => {
  it('decodes a prefix to the start of its second', () => {
    expect(decode('001e9fzM').toISOString()).toBe('2017-10-31T23:30:32.000Z');
    expect(decode('00000000').getTime()).toBe(0);
    expect(decode('001e9fzM0KfVfM2pgqAK44pZgF00r4Qw').toISOString()).toBe('2017-10-31T23:30:32.000Z');
  });

  it('decodes a ms prefix or idms id with { ms: true }', () => {
    expect(decode('0QZg5Fhb', { ms: true }).toISOString()).toBe('2017-10-31T23:30:32.419Z');
    expect(decode('0QZg5Fhb4gfFC34gfFC34gfFC34gfFC3', { ms: true }).toISOString()).toBe('2017-10-31T23:30:32.419Z');
  });

  it.each(['', '001e9fz', '001e9fzMH', '001e9fz-', '001e9fzM4gfFC44gfFC34gfFC34gfFC3', '19xHxFvyx'])(
    'rejects %j',
    (s) => {
      expect(() => decode(s)).toThrow(KuuidError);
    },
  );

  it('rejects a seconds prefix beyond the Date range', () => {
    expect(() => decode('zzzzzzzz')).toThrow(KuuidError);
    expect(decode('zzzzzzzz', { ms: true }).toISOString()).toBe('8888-12-02T13:19:44.895Z');
  });
});

describe('properties', () => {
  it('prefix order equals time order (seconds), prefixms order equals ms order', () => {
    fc.assert(
      fc.property(msArb, msArb, (a, b) => {
        expect(sign(cmp(prefix(a), prefix(b)))).toBe(sign(Math.floor(a / 1000) - Math.floor(b / 1000)));
        expect(sign(cmp(prefixms(a), prefixms(b)))).toBe(sign(a - b));
        expect(sign(cmp(prefixReverse(a), prefixReverse(b)))).toBe(sign(Math.floor(b / 1000) - Math.floor(a / 1000)));
      }),
    );
  });

  it('ids sort by their time second first', () => {
    fc.assert(
      fc.property(msArb, msArb, (a, b) => {
        fc.pre(Math.floor(a / 1000) !== Math.floor(b / 1000));
        expect(sign(cmp(id(a), id(b)))).toBe(sign(a - b));
      }),
    );
  });

  it('decode inverts prefix to the second and prefixms to the millisecond', () => {
    fc.assert(
      fc.property(dateArb, (d) => {
        expect(decode(prefix(d)).getTime()).toBe(Math.floor(d.getTime() / 1000) * 1000);
        expect(decode(prefixms(d), { ms: true }).getTime()).toBe(d.getTime());
        expect(decode(id(d)).getTime()).toBe(Math.floor(d.getTime() / 1000) * 1000);
        expect(decode(idms(d), { ms: true }).getTime()).toBe(d.getTime());
      }),
    );
  });

  it('ids match ID_PATTERN and carry each random uint32 in its group', () => {
    fc.assert(
      fc.property(dateArb, fc.array(fc.integer({ min: 0, max: 0xffffffff }), { minLength: 4, maxLength: 4 }), (d, words) => {
        const hexes = words.map((w) => w.toString(16).padStart(8, '0'));
        for (const make of [createKuuid(replay(hexes)).id, createKuuid(replay(hexes)).idms]) {
          const made = make(d);
          expect(made).toMatch(ID_PATTERN);
          expect(isId(made)).toBe(true);
          words.forEach((w, i) => expect(decodeBase62(made.slice(8 + 6 * i, 14 + 6 * i))).toBe(BigInt(w)));
        }
      }),
    );
  });

  it('ids from the crypto source match ID_PATTERN', () => {
    for (let i = 0; i < 1000; i++) {
      expect(isId(id())).toBe(true);
      expect(isId(idms())).toBe(true);
    }
  });
});

describe('compatibility with the real kuuid package', () => {
  it('same prefix/prefixms/reverse for dates as ISO strings with Z and as Date', () => {
    fc.assert(
      fc.property(dateArb, (d) => {
        const iso = d.toISOString();
        for (const t of [iso, d]) {
          expect(prefix(t)).toBe(kuuid.prefix(iso));
          expect(prefixms(t)).toBe(kuuid.prefixms(iso));
          expect(prefixReverse(t)).toBe(kuuid.prefixReverse(iso));
          expect(prefixReverseMs(t)).toBe(kuuid.prefixReverseMs(iso));
        }
      }),
      { numRuns: 500 },
    );
  });

  it('same prefixes for epoch milliseconds (kuuid treats 0 as now, so from 1 ms)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: MS_2100 }), (ms) => {
        expect(prefix(ms)).toBe(kuuid.prefix(ms));
        expect(prefixms(ms)).toBe(kuuid.prefixms(ms));
      }),
    );
  });

  it('same prefixes for seven fractional digits and offsets', () => {
    const offsetArb = fc.integer({ min: -14 * 60, max: 14 * 60 });
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1970, 0, 2), max: MS_2100 }), fc.integer({ min: 0, max: 9999 }), offsetArb, (ms, sub, offset) => {
        const local = new Date(ms + offset * 60_000).toISOString().slice(0, 23);
        const zone = `${offset < 0 ? '-' : '+'}${String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0')}:${String(Math.abs(offset) % 60).padStart(2, '0')}`;
        const text = `${local}${String(sub).padStart(4, '0')}${zone}`;
        expect(prefix(text)).toBe(kuuid.prefix(text));
        expect(prefixms(text)).toBe(kuuid.prefixms(text));
      }),
    );
  });

  it('our ids have the shape of kuuid ids, and kuuid’s ids pass isId', () => {
    fc.assert(
      fc.property(dateArb, (d) => {
        const iso = d.toISOString();
        const ours = id(d);
        expect(ours).toHaveLength(32);
        expect([...ours].every((c) => ALPHABET.includes(c))).toBe(true);
        expect(ours.slice(0, 8)).toBe(kuuid.prefix(iso));
        expect(idms(iso).slice(0, 8)).toBe(kuuid.prefixms(iso));
        const theirs = kuuid.id(iso);
        expect(isId(theirs)).toBe(true);
        expect(theirs.slice(0, 8)).toBe(prefix(iso));
        expect(isId(kuuid.idms(iso))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('documents that kuuid ignores a Date argument (it reads it as options and uses now)', () => {
    const d = new Date('2017-10-31T23:30:32.419Z');
    expect(prefix(d)).toBe('001e9fzM');
    expect(kuuid.prefix(d)).not.toBe('001e9fzM');
  });
});
