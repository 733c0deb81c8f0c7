/**
 * Properties of kuuid ids and prefixes: order follows time, decode inverts prefix, ids match the pattern.
 */
import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { decodeBase62 } from '../../lambda/contract/base62.js';
import {
  createKuuid,
  decode,
  id,
  idms,
  ID_PATTERN,
  isId,
  prefix,
  prefixms,
  prefixReverse,
} from '../../lambda/ids/kuuid.js';
import { cmp, dateArb, msArb, replay, sign } from './kuuid-kit.js';

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
      fc.property(
        dateArb,
        fc.array(fc.integer({ min: 0, max: 0xffffffff }), { minLength: 4, maxLength: 4 }),
        (d, words) => {
          const hexes = words.map((w) => w.toString(16).padStart(8, '0'));
          for (const make of [createKuuid(replay(hexes)).id, createKuuid(replay(hexes)).idms]) {
            const made = make(d);
            expect(made).toMatch(ID_PATTERN);
            expect(isId(made)).toBe(true);
            words.forEach((w, i) => expect(decodeBase62(made.slice(8 + 6 * i, 14 + 6 * i))).toBe(BigInt(w)));
          }
        },
      ),
    );
  });

  it('ids from the crypto source match ID_PATTERN', () => {
    for (let i = 0; i < 1000; i++) {
      expect(isId(id())).toBe(true);
      expect(isId(idms())).toBe(true);
    }
  });
});
