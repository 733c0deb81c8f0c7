import { readFileSync } from 'node:fs';
import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { ALPHABET, Base62Error, decodeBase62, encodeBase62 } from '../../lambda/contract/base62.js';

interface Vectors {
  alphabet: string;
  base62_vectors: { n: number; base62: string }[];
}

// Real kuuid outputs, copied into test/fixtures (see its SOURCES.md).
const vectors = JSON.parse(readFileSync(new URL('../fixtures/kuuid-vectors.json', import.meta.url), 'utf8')) as Vectors;

describe('ALPHABET', () => {
  it('is kuuid’s alphabet, in ascending ASCII order', () => {
    expect(ALPHABET).toBe(vectors.alphabet);
    expect(ALPHABET).toHaveLength(62);
    expect([...ALPHABET].sort().join('')).toBe(ALPHABET);
  });
});

describe('encodeBase62', () => {
  it.each(vectors.base62_vectors)('encodes $n as $base62 (kuuid vector)', ({ n, base62 }) => {
    expect(encodeBase62(n)).toBe(base62);
    expect(encodeBase62(BigInt(n))).toBe(base62);
  });

  it('encodes 0 as "0", without padding', () => {
    expect(encodeBase62(0)).toBe('0');
    expect(encodeBase62(0n)).toBe('0');
    expect(encodeBase62(62)).toBe('10');
  });

  it('encodes integers beyond Number.MAX_SAFE_INTEGER exactly', () => {
    expect(encodeBase62(2n ** 64n - 1n)).toBe('LygHa16AHYF');
    expect(decodeBase62(encodeBase62(2 ** 60))).toBe(2n ** 60n);
  });

  it.each([-1, -1n, 1.5, Number.NaN, Number.POSITIVE_INFINITY, -0.5])('throws Base62Error for %s', (n) => {
    expect(() => encodeBase62(n)).toThrow(Base62Error);
  });

  it('names the bad input in the error', () => {
    expect(() => encodeBase62(-1)).toThrow(/-1.*negative/);
  });
});

describe('decodeBase62', () => {
  it.each(vectors.base62_vectors)('decodes $base62 as $n (kuuid vector)', ({ n, base62 }) => {
    expect(decodeBase62(base62)).toBe(BigInt(n));
  });

  it('accepts leading zeros (padded prefixes)', () => {
    expect(decodeBase62('001e9fzM')).toBe(1509492632n);
    expect(decodeBase62('0000')).toBe(0n);
  });

  it.each(['', '-1', 'a b', '001e9fzM/', 'é', '+', '\u0000'])('throws Base62Error for %j', (s) => {
    expect(() => decodeBase62(s)).toThrow(Base62Error);
  });
});

describe('properties', () => {
  it('decode inverts encode', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 128n }), (n) => {
        expect(decodeBase62(encodeBase62(n))).toBe(n);
      }),
    );
  });

  it('encode inverts decode up to leading zeros', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...ALPHABET), minLength: 1, maxLength: 20 }), (s) => {
        expect(encodeBase62(decodeBase62(s))).toBe(s.replace(/^0+(?=.)/, ''));
      }),
    );
  });

  it('padded to one width, byte order equals numeric order', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 62n ** 8n - 1n }), fc.bigInt({ min: 0n, max: 62n ** 8n - 1n }), (a, b) => {
        const ea = encodeBase62(a).padStart(8, '0');
        const eb = encodeBase62(b).padStart(8, '0');
        expect(ea < eb).toBe(a < b);
        expect(ea === eb).toBe(a === b);
      }),
    );
  });

  it('number and bigint agree on safe integers', () => {
    fc.assert(
      fc.property(fc.maxSafeNat(), (n) => {
        expect(encodeBase62(n)).toBe(encodeBase62(BigInt(n)));
      }),
    );
  });
});
