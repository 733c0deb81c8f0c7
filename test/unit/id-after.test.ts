/**
 * `idAfter` (lambda/ids/id-after.ts): a plan's id sorts after the plan before it. Checked against a second reading of
 * the id that shares none of its code: the 128 random bits as one number, through BigInt and the alphabet's ASCII
 * order, for random and edge ids.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { idAfter } from '../../lambda/ids/id-after.js';
import { id, isId } from '../../lambda/ids/kuuid.js';

const DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** The random part of an id as one number: four groups of six base-62 digits, each a 32-bit word. */
function randomBits(kuuid: string): bigint {
  let value = 0n;
  for (let group = 0; group < 4; group++) {
    let word = 0n;
    for (const digit of kuuid.slice(8 + group * 6, 14 + group * 6)) word = word * 62n + BigInt(DIGITS.indexOf(digit));
    value = value * 2n ** 32n + word;
  }
  return value;
}

const word = fc.integer({ min: 0, max: 2 ** 32 - 1 });
const kuuidOf = (second: string, words: readonly number[]): string => second + words.map(encode).join('');

function encode(value: number): string {
  let out = '';
  for (let rest = value; rest > 0; rest = Math.floor(rest / 62)) out = DIGITS[rest % 62] + out;
  return out.padStart(6, '0');
}

describe('idAfter', () => {
  it('keeps a fresh id that sorts after the previous one, and ids it cannot order', () => {
    const previous = id(new Date('2026-11-27T10:00:00Z'));
    const fresh = id(new Date('2026-11-27T10:00:01Z'));
    expect(idAfter(previous, fresh)).toBe(fresh);
    expect(idAfter(undefined, fresh)).toBe(fresh);
    expect(idAfter('rebuild-1', fresh)).toBe(fresh);
    expect(idAfter(fresh, 'rebuild-0')).toBe('rebuild-0');
  });

  it('gives the id right after the previous one when the fresh one would sort before it: a valid kuuid id, one more', () => {
    fc.assert(
      fc.property(
        fc.array(word, { minLength: 4, maxLength: 4 }),
        fc.array(word, { minLength: 4, maxLength: 4 }),
        (a, b) => {
          const second = '00dKq8Zr';
          // The fresh id sorts before the newest plan's, or is equal to it.
          const [fresh, newest] = [kuuidOf(second, a), kuuidOf(second, b)].sort() as [string, string];
          const after = idAfter(newest, fresh);
          expect(isId(after)).toBe(true);
          expect(after > newest).toBe(true);
          expect(after.slice(0, 8)).toBe(second);
          expect(randomBits(after)).toBe(randomBits(newest) + 1n);
        },
      ),
    );
  });

  it('carries across the 32-bit words', () => {
    const second = '00dKq8Zr';
    const max = encode(2 ** 32 - 1);
    expect(max).toBe('4gfFC3');
    expect(idAfter(`${second}000000${max}${max}${max}`, `${second}000000000000000000000000`)).toBe(
      `${second}000001000000000000000000`,
    );
  });
});
