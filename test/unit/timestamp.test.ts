import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compareTicks,
  formatTimestamp,
  MIN_TICKS,
  normalizeTimestamp,
  parseTimestamp,
  TimestampError,
  ticksFromEpochMs,
  ticksToEpochMs,
  ticksToEpochSeconds,
  ticksWithinSecond,
  UNIX_EPOCH_TICKS,
} from '../../lambda/contract/time.js';

/** A random instant from year 1 to 9999, as its parts, and its text with 0–7 fractional digits. */
const instant = fc
  .record({
    year: fc.integer({ min: 1, max: 9999 }),
    month: fc.integer({ min: 1, max: 12 }),
    day: fc.integer({ min: 1, max: 28 }),
    hour: fc.integer({ min: 0, max: 23 }),
    minute: fc.integer({ min: 0, max: 59 }),
    second: fc.integer({ min: 0, max: 59 }),
    ticks: fc.integer({ min: 0, max: 9_999_999 }),
  })
  .map((p) => {
    const pad = (n: number, w: number) => String(n).padStart(w, '0');
    const fraction = pad(p.ticks, 7).replace(/0+$/, '');
    const text = `${pad(p.year, 4)}-${pad(p.month, 2)}-${pad(p.day, 2)}T${pad(p.hour, 2)}:${pad(p.minute, 2)}:${pad(p.second, 2)}${fraction ? `.${fraction}` : ''}Z`;
    return { ...p, text };
  });

describe('exact catalog timestamps', () => {
  it('parses the catalog traps exactly', () => {
    expect(parseTimestamp('2017-10-31T23:30:32.4197849Z')).toBe(636_450_894_324_197_849n);
    // Six digits: trailing zero dropped by the writer.
    expect(formatTimestamp(parseTimestamp('2017-10-31T23:28:02.788239Z'))).toBe('2017-10-31T23:28:02.7882390Z');
    expect(formatTimestamp(parseTimestamp('2017-10-31T23:28:02Z'))).toBe('2017-10-31T23:28:02.0000000Z');
    expect(parseTimestamp('0001-01-01T00:00:00Z')).toBe(MIN_TICKS);
    expect(parseTimestamp('1970-01-01T00:00:00Z')).toBe(UNIX_EPOCH_TICKS);
    expect(formatTimestamp(parseTimestamp('1900-01-01T01:00:00+00:00'))).toBe('1900-01-01T01:00:00.0000000Z');
    expect(formatTimestamp(parseTimestamp('2000-02-29T12:00:00.5+01:30'))).toBe('2000-02-29T10:30:00.5000000Z');
    expect(formatTimestamp(parseTimestamp('9999-12-31T23:59:59.9999999Z'))).toBe('9999-12-31T23:59:59.9999999Z');
  });

  it('keeps two commits inside one millisecond distinct, where Date cannot', () => {
    const a = '2017-10-31T23:30:32.4197849Z';
    const b = '2017-10-31T23:30:32.4197850Z';
    expect(new Date(a).getTime()).toBe(new Date(b).getTime());
    expect(parseTimestamp(a) < parseTimestamp(b)).toBe(true);
    expect(parseTimestamp(b) - parseTimestamp(a)).toBe(1n);
    // Raw strings compare wrongly when digits are dropped: '…02.78' > '…02.7882' as text, but not as time.
    expect('2017-10-31T23:28:02.78Z' > '2017-10-31T23:28:02.7882Z').toBe(true);
    expect(parseTimestamp('2017-10-31T23:28:02.78Z') < parseTimestamp('2017-10-31T23:28:02.7882Z')).toBe(true);
  });

  it('rejects what is not an exact UTC timestamp, naming it', () => {
    for (const bad of [
      '',
      '2017-10-31',
      '2017-10-31T23:30:32',
      '2017-10-31 23:30:32Z',
      '2017-10-31T23:30:32.41978491Z',
      '2017-13-01T00:00:00Z',
      '2017-02-29T00:00:00Z',
      '2017-04-31T00:00:00Z',
      '2017-10-31T24:00:00Z',
      '2017-10-31T23:60:00Z',
      '2017-10-31T23:59:60Z',
      '0000-01-01T00:00:00Z',
      '0001-01-01T00:00:00+01:00',
      '2017-10-31T23:30:32.Z',
      ' 2017-10-31T23:30:32Z',
    ]) {
      expect(() => parseTimestamp(bad), bad).toThrow(TimestampError);
      expect(() => parseTimestamp(bad), bad).toThrow(JSON.stringify(bad));
    }
    expect(() => parseTimestamp(1 as unknown as string)).toThrow(/not a string/);
  });

  it('property: parsed order equals time order', () => {
    fc.assert(
      fc.property(instant, instant, (a, b) => {
        const byParts =
          [
            a.year - b.year,
            a.month - b.month,
            a.day - b.day,
            a.hour - b.hour,
            a.minute - b.minute,
            a.second - b.second,
            a.ticks - b.ticks,
          ].find((d) => d !== 0) ?? 0;
        expect(Math.sign(compareTicks(parseTimestamp(a.text), parseTimestamp(b.text)))).toBe(Math.sign(byParts));
      }),
      { numRuns: 2_000 },
    );
  });

  it('property: the round trip through seven digits is exact, and seven-digit strings sort as time', () => {
    fc.assert(
      fc.property(instant, instant, (a, b) => {
        const ta = parseTimestamp(a.text);
        const tb = parseTimestamp(b.text);
        const fa = formatTimestamp(ta);
        expect(fa).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z$/);
        expect(parseTimestamp(fa)).toBe(ta);
        expect(normalizeTimestamp(a.text)).toBe(fa);
        expect(Math.sign(compareTicks(ta, tb))).toBe(fa < formatTimestamp(tb) ? -1 : fa > formatTimestamp(tb) ? 1 : 0);
      }),
      { numRuns: 2_000 },
    );
  });

  it('property: agrees with Date to the millisecond, from 1970 on', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 253_402_300_799_999 }), (ms) => {
        const iso = new Date(ms).toISOString();
        expect(ticksToEpochMs(parseTimestamp(iso))).toBe(ms);
        expect(ticksFromEpochMs(ms)).toBe(parseTimestamp(iso));
        expect(ticksToEpochSeconds(parseTimestamp(iso))).toBe(BigInt(Math.floor(ms / 1000)));
        expect(ticksWithinSecond(parseTimestamp(iso))).toBe((ms % 1000) * 10_000);
      }),
      { numRuns: 2_000 },
    );
  });
});
