/**
 * What the kuuid tests share: the vectors file (made from the real kuuid package), the real package itself,
 * a replaying random source, and the arbitraries and comparators of the property tests.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import fc from 'fast-check';

export interface PrefixVector {
  input: string | number;
  epoch_ms: number;
  epoch_s: number;
  prefix: string;
  prefixms: string;
  prefixReverse: string;
  prefixReverseMs: string;
}
export interface Vectors {
  prefix_vectors: PrefixVector[];
  random_group_vectors: { bytes_hex: string; uint32: number; group: string }[];
  deterministic_id_vectors: {
    fn: string;
    timestamp: string;
    randomBytes_calls_hex: string[];
    id: string;
    length: number;
  }[];
  random_samples: Record<string, string[] | string>;
  validation_regex: { id: string; ids: string };
}

export const vectors = JSON.parse(
  readFileSync(new URL('../fixtures/kuuid-vectors.json', import.meta.url), 'utf8'),
) as Vectors;

/** The real npm package, CommonJS; its typings omit prefixReverse/prefixReverseMs. */
export interface RealKuuid {
  id(t?: string | number): string;
  idms(t?: string | number): string;
  prefix(t?: unknown): string;
  prefixms(t?: string | number): string;
  prefixReverse(t?: string | number): string;
  prefixReverseMs(t?: string | number): string;
}
export const kuuid = createRequire(import.meta.url)('kuuid') as RealKuuid;

/** A random source that replays fixed 4-byte answers and records the sizes asked for. */
export function replay(hexes: readonly string[]): { randomBytes: (size: number) => Uint8Array; sizes: number[] } {
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

export const MS_1970 = 0;
export const MS_2100 = Date.UTC(2100, 0, 1);
export const msArb = fc.integer({ min: MS_1970, max: MS_2100 });
export const dateArb = fc.date({ min: new Date(MS_1970), max: new Date(MS_2100), noInvalidDate: true });

export const sign = (n: number | bigint): number => (n > 0 ? 1 : n < 0 ? -1 : 0);
/** Byte-order comparison; never localeCompare, whose collation does not follow ASCII. */
export const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
