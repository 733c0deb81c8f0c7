/**
 * Base 62 with the kuuid alphabet.
 *
 * The digits are `0-9A-Za-z`, which is ascending ASCII order, so two encodings of equal length
 * compare as bytes exactly as their numbers compare. That is what makes padded kuuid prefixes and
 * commit keys sortable by S3, DynamoDB and CouchDB without any collation.
 */
import { CatalogSyncError, ErrorCode } from './errors.js';

/** The 62 digits in ascending value, which is also ascending ASCII order. */
export const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

const BASE = 62n;

/** Digit value of each ASCII code, or -1; a table because decoding runs once per listed key. */
const DIGIT_VALUES: readonly number[] = (() => {
  const values = new Array<number>(128).fill(-1);
  for (let i = 0; i < ALPHABET.length; i++) values[ALPHABET.charCodeAt(i)] = i;
  return values;
})();

/** A number that cannot be encoded, or a text that is not base 62. */
export class Base62Error extends CatalogSyncError {
  override readonly name = 'Base62Error';
  override get code(): ErrorCode {
    return ErrorCode.base62;
  }
  constructor(
    /** The offending number or text. */
    readonly input: unknown,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`invalid base62 input ${describe(input)}: ${reason}`, options);
  }
}

function describe(input: unknown): string {
  return typeof input === 'bigint' ? `${input}n` : typeof input === 'number' ? String(input) : JSON.stringify(input);
}

/**
 * Encodes a non-negative integer, most significant digit first, without padding (`0` → `'0'`).
 *
 * Matches kuuid's `base62Encode` for every value it handles correctly. kuuid quietly returns `''`
 * for a negative number or NaN, which then pads to `00000000` and collides with the epoch, so this
 * throws instead. Numbers above `Number.MAX_SAFE_INTEGER` are encoded exactly (through `bigint`);
 * they are still integers, just ones a `number` can hold only approximately.
 *
 * @throws {@link Base62Error} for a negative, fractional, infinite or NaN number.
 */
export function encodeBase62(n: number | bigint): string {
  let value: bigint;
  if (typeof n === 'bigint') {
    value = n;
  } else if (typeof n === 'number' && Number.isInteger(n)) {
    value = BigInt(n);
  } else {
    throw new Base62Error(n, 'not an integer');
  }
  if (value < 0n) throw new Base62Error(n, 'negative');
  if (value === 0n) return '0';
  let out = '';
  while (value > 0n) {
    out = ALPHABET[Number(value % BASE)]! + out;
    value /= BASE;
  }
  return out;
}

/**
 * Decodes base 62 text; leading `0`s are allowed, because padded prefixes carry them.
 *
 * @throws {@link Base62Error} for the empty string (no encoding is empty) or a character outside
 * {@link ALPHABET}.
 */
export function decodeBase62(s: string): bigint {
  if (typeof s !== 'string') throw new Base62Error(s, 'not a string');
  if (s.length === 0) throw new Base62Error(s, 'empty');
  let value = 0n;
  for (let i = 0; i < s.length; i++) {
    const digit = DIGIT_VALUES[s.charCodeAt(i)] ?? -1;
    if (digit < 0) throw new Base62Error(s, `character ${JSON.stringify(s[i])} at ${i} is not in 0-9A-Za-z`);
    value = value * BASE + BigInt(digit);
  }
  return value;
}
