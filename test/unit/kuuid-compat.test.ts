/**
 * Compatibility with the real kuuid package: same prefixes, same id shape.
 */
import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { ALPHABET } from '../../lambda/contract/base62.js';
import { id, idms, isId, prefix, prefixms, prefixReverse, prefixReverseMs } from '../../lambda/ids/kuuid.js';
import { dateArb, kuuid, MS_2100 } from './kuuid-kit.js';

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
      fc.property(
        fc.integer({ min: Date.UTC(1970, 0, 2), max: MS_2100 }),
        fc.integer({ min: 0, max: 9999 }),
        offsetArb,
        (ms, sub, offset) => {
          const local = new Date(ms + offset * 60_000).toISOString().slice(0, 23);
          const zone = `${offset < 0 ? '-' : '+'}${String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0')}:${String(Math.abs(offset) % 60).padStart(2, '0')}`;
          const text = `${local}${String(sub).padStart(4, '0')}${zone}`;
          expect(prefix(text)).toBe(kuuid.prefix(text));
          expect(prefixms(text)).toBe(kuuid.prefixms(text));
        },
      ),
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
