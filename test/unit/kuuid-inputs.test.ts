/**
 * kuuid's inputs: the weaknesses of the npm package are errors here, and decoding prefixes and ids back to time.
 */
import { describe, it, expect } from 'vitest';
import { decodeBase62 } from '../../lambda/contract/base62.js';
import {
  decode,
  id,
  idms,
  isId,
  KuuidError,
  prefix,
  prefixms,
  prefixReverse,
  prefixReverseMs,
  type KuuidTime,
} from '../../lambda/ids/kuuid.js';
import { kuuid } from './kuuid-kit.js';

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
