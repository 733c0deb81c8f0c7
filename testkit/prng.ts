/**
 * A small seeded pseudo-random number generator for test data.
 *
 * Test catalogs must be identical on every run and every machine, so nothing here touches
 * `Math.random` or the clock: the same seed always yields the same sequence.
 */

/** A seeded source of pseudo-random values. */
export interface Prng {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  /** True with probability `p`. */
  chance(p: number): boolean;
  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T;
  /** A lower-case, version-4-shaped UUID. */
  uuid(): string;
  /** `length` pseudo-random bytes. */
  bytes(length: number): Buffer;
  /** A copy of `items` in a pseudo-random order (Fisher–Yates). */
  shuffle<T>(items: readonly T[]): T[];
}

/**
 * mulberry32: 32 bits of state, fast, and good enough for test data (not for cryptography).
 *
 * @param seed any integer; only its low 32 bits matter.
 */
export function mulberry32(seed: number): Prng {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  const bytes = (length: number): Buffer => {
    const out = Buffer.alloc(length);
    for (let i = 0; i < length; i++) out[i] = int(0, 255);
    return out;
  };
  return {
    next,
    int,
    chance: (p) => next() < p,
    pick: <T>(items: readonly T[]): T => {
      if (items.length === 0) throw new Error('pick from an empty array');
      return items[int(0, items.length - 1)]!;
    },
    uuid: () => {
      const b = bytes(16);
      b[6] = (b[6]! & 0x0f) | 0x40;
      b[8] = (b[8]! & 0x3f) | 0x80;
      const hex = b.toString('hex');
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    },
    bytes,
    shuffle: <T>(items: readonly T[]): T[] => {
      const out = [...items];
      for (let i = out.length - 1; i > 0; i--) {
        const j = int(0, i);
        [out[i], out[j]] = [out[j]!, out[i]!];
      }
      return out;
    },
  };
}

/**
 * A 32-bit FNV-1a hash of a string, used to derive a seed from content (so a document rendered
 * twice from the same data comes out byte-identical).
 */
export function hashSeed(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
