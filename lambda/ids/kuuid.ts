/**
 * Time-sortable ids compatible with the npm package `kuuid` (Glynn Bird), see
 * `shared/spec/sortable-ids.md`.
 *
 * Every id, prefix and reverse prefix that kuuid computes correctly is reproduced byte for byte
 * (`shared/fixtures/kuuid-vectors.json`), so a consumer using the real package can build range
 * bounds for keys written here. Where kuuid silently does something surprising, this module throws a
 * {@link KuuidError} instead:
 *
 * - a falsy time (`0`, `''`) means "now" in kuuid; here `0` is the epoch and `''` is an error;
 * - an invalid date, or one before 1970, becomes `00000000` in kuuid (colliding with the epoch);
 * - a string without `Z` or an offset is local time in kuuid (so the id depends on the host's TZ);
 * - kuuid parses through `Date` and loses sub-millisecond digits; strings here go through
 *   {@link parseTimestamp}, so seven fractional digits are exact and flooring is exact too.
 *
 * kuuid also ignores a `Date` argument (it takes it for an options object and uses the current
 * time); a `Date` here means that date. Only `undefined` and `null` mean "now".
 */
import { randomBytes as cryptoRandomBytes } from 'node:crypto';
import { decodeBase62, encodeBase62 } from '../contract/base62.js';
import {
  parseTimestamp,
  ticksFromEpochMs,
  ticksToEpochSeconds,
  TICKS_PER_MILLISECOND,
  UNIX_EPOCH_TICKS,
  type Ticks,
} from '../contract/time.js';
import { CatalogSyncError, ErrorCode } from '../contract/errors.js';

/** A time as kuuid accepts it: a `Date`, epoch milliseconds, or ISO 8601 text; absent means now. */
export type KuuidTime = Date | number | string | null | undefined;

/** A source of cryptographically random bytes, shaped like `crypto.randomBytes`. */
export type RandomBytes = (size: number) => Uint8Array;

/** Characters in a prefix: base 62 of the time, left-padded with `0`. */
export const PREFIX_LENGTH = 8;
/** Characters in an id: the prefix and four random groups of six. */
export const ID_LENGTH = 32;

/** The largest value eight base-62 digits hold (`zzzzzzzz`), kuuid's `maxTS`, used for reversing. */
const MAX_PREFIX_VALUE = 62n ** 8n - 1n;
/** The largest value of four random bytes in base 62; groups above it cannot come from kuuid. */
const MAX_GROUP = '4gfFC3';
const RANDOM_GROUPS = 4;
const GROUP_LENGTH = 6;
/** The last millisecond a JavaScript `Date` can hold (ECMAScript's time-value limit). */
const MAX_DATE_MS = 8.64e15;

/**
 * The shape of a kuuid `id()`: 8 time characters, then four groups of six whose first digit is
 * 0–4 because 2³² − 1 is `4gfFC3`. {@link isId} also checks that bound exactly.
 */
export const ID_PATTERN = /^[0-9A-Za-z]{8}(?:[0-4][0-9A-Za-z]{5}){4}$/;

const PREFIX_PATTERN = /^[0-9A-Za-z]{8}$/;
/**
 * A date or date-time with no zone. kuuid (through `Date`) reads a zone-less date-time as local time;
 * a bare date it reads as UTC, but that is rejected too, so the rule stays "always name the zone".
 */
const ZONELESS_PATTERN = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?$/;

/** A time or id that kuuid would mishandle or that cannot be encoded. */
export class KuuidError extends CatalogSyncError {
  override readonly name = 'KuuidError';
  override get code(): ErrorCode {
    return ErrorCode.kuuid;
  }
  constructor(
    /** The offending time or text. */
    readonly input: unknown,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`invalid kuuid input ${describe(input)}: ${reason}`, options);
  }
}

function describe(input: unknown): string {
  if (input instanceof Date) return Number.isNaN(input.getTime()) ? 'Invalid Date' : `Date(${input.toISOString()})`;
  if (typeof input === 'number' || typeof input === 'bigint' || typeof input === 'boolean') return String(input);
  if (input === undefined) return 'undefined';
  try {
    return JSON.stringify(input) ?? String(input);
  } catch {
    // A circular object or one holding a bigint; the message must not hide the real error.
    return Object.prototype.toString.call(input);
  }
}

/** Ticks of a Unix time in milliseconds, after the checks kuuid skips. */
function msToTicks(input: unknown, ms: number): Ticks {
  if (!Number.isFinite(ms)) throw new KuuidError(input, 'not a valid date');
  if (ms < 0) throw new KuuidError(input, 'before 1970-01-01T00:00:00Z');
  if (ms > MAX_DATE_MS) throw new KuuidError(input, 'beyond the range of a JavaScript Date');
  // Fractional milliseconds are floored, as `new Date(ms)` does for non-negative values.
  return ticksFromEpochMs(Math.floor(ms));
}

/**
 * Exact ticks of a kuuid time.
 *
 * @param now - the clock used when `t` is `undefined` or `null`.
 * @throws {@link KuuidError} for an invalid date, a time before 1970, a string without a zone, the
 * empty string, or a value of another type.
 */
export function kuuidTimeToTicks(t: KuuidTime, now: () => number = Date.now): Ticks {
  if (t === undefined || t === null) return msToTicks(t, now());
  if (t instanceof Date) return msToTicks(t, t.getTime());
  if (typeof t === 'number') return msToTicks(t, t);
  if (typeof t === 'string') {
    if (t === '') throw new KuuidError(t, 'empty string (kuuid would silently use the current time)');
    if (ZONELESS_PATTERN.test(t)) {
      throw new KuuidError(t, 'no time zone; add Z or ±HH:MM (kuuid reads a zone-less date-time as local time)');
    }
    let ticks: Ticks;
    try {
      ticks = parseTimestamp(t);
    } catch (cause) {
      throw new KuuidError(t, 'not an ISO 8601 timestamp with Z or an offset', { cause });
    }
    if (ticks < UNIX_EPOCH_TICKS) throw new KuuidError(t, 'before 1970-01-01T00:00:00Z');
    return ticks;
  }
  throw new KuuidError(t, `expected a Date, epoch milliseconds or an ISO 8601 string, got ${typeof t}`);
}

/** Whole seconds since 1970 (floor; the ticks are never before 1970 here). */
const epochSeconds = (ticks: Ticks): bigint => ticksToEpochSeconds(ticks);
/** Whole milliseconds since 1970 (floor, exact from ticks). */
const epochMilliseconds = (ticks: Ticks): bigint => (ticks - UNIX_EPOCH_TICKS) / TICKS_PER_MILLISECOND;

const pad = (value: bigint): string => encodeBase62(value).padStart(PREFIX_LENGTH, '0');

function reversed(input: KuuidTime, value: bigint): string {
  // kuuid encodes the negative difference as '' and pads it to `00000000`, the newest possible
  // reverse prefix; that only happens for millisecond times after 8888-12-02T13:19:44.895Z.
  if (value > MAX_PREFIX_VALUE) throw new KuuidError(input, 'too late for an 8-character reverse prefix');
  return pad(MAX_PREFIX_VALUE - value);
}

/**
 * The 8-character prefix of `t`: whole seconds since 1970 in base 62, for range queries
 * (`StartAfter`, `startkey`, `BETWEEN`). Same as kuuid's `prefix(t)`.
 *
 * @throws {@link KuuidError} for a time kuuid would mishandle (see the module comment).
 */
export function prefix(t?: KuuidTime): string {
  return pad(epochSeconds(kuuidTimeToTicks(t)));
}

/**
 * The 8-character millisecond prefix of `t`, kuuid's `prefixms(t)`. Never compare it with a
 * seconds prefix. Like kuuid, it grows to 9 characters from 8888-12-02T13:19:44.896Z on (62⁸ ms),
 * where it stops sorting correctly; kept for byte compatibility, irrelevant in practice.
 *
 * @throws {@link KuuidError} for a time kuuid would mishandle (see the module comment).
 */
export function prefixms(t?: KuuidTime): string {
  return pad(epochMilliseconds(kuuidTimeToTicks(t)));
}

/**
 * kuuid's `prefixReverse(t)`: `zzzzzzzz` minus the seconds prefix, so newer times sort first.
 *
 * @throws {@link KuuidError} for a time kuuid would mishandle.
 */
export function prefixReverse(t?: KuuidTime): string {
  return reversed(t, epochSeconds(kuuidTimeToTicks(t)));
}

/**
 * kuuid's `prefixReverseMs(t)`: `zzzzzzzz` minus the millisecond prefix.
 *
 * @throws {@link KuuidError} for a time kuuid would mishandle, or one after
 * 8888-12-02T13:19:44.895Z, where kuuid silently returns `00000000`.
 */
export function prefixReverseMs(t?: KuuidTime): string {
  return reversed(t, epochMilliseconds(kuuidTimeToTicks(t)));
}

/** Options of {@link createKuuid}. */
export interface KuuidOptions {
  /** Random source; `crypto.randomBytes` by default. Inject a fixed one for tests. */
  readonly randomBytes?: RandomBytes;
  /** Clock in epoch milliseconds for a missing time; `Date.now` by default. */
  readonly now?: () => number;
}

/** Id generators bound to one random source and clock. */
export interface Kuuid {
  /** A 32-character id: {@link prefix} of `t` and 128 random bits. */
  id(t?: KuuidTime): string;
  /** A 32-character id with the millisecond prefix ({@link prefixms}). */
  idms(t?: KuuidTime): string;
}

/**
 * Makes {@link Kuuid} generators with an injectable random source and clock.
 *
 * The random part is kuuid's: four calls of `randomBytes(4)`, each read as a big-endian uint32,
 * in base 62, padded to six characters.
 */
export function createKuuid(options: KuuidOptions = {}): Kuuid {
  const randomBytes = options.randomBytes ?? cryptoRandomBytes;
  const now = options.now ?? Date.now;

  const randomPart = (): string => {
    let out = '';
    for (let i = 0; i < RANDOM_GROUPS; i++) {
      const bytes = randomBytes(4);
      if (bytes.length < 4) {
        throw new KuuidError(bytes.length, 'the random source returned fewer than 4 bytes');
      }
      const value = ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0;
      out += encodeBase62(value).padStart(GROUP_LENGTH, '0');
    }
    return out;
  };

  // The time is validated before any random bytes are drawn, as kuuid computes the prefix first.
  return {
    id: (t) => pad(epochSeconds(kuuidTimeToTicks(t, now))) + randomPart(),
    idms: (t) => pad(epochMilliseconds(kuuidTimeToTicks(t, now))) + randomPart(),
  };
}

const defaultKuuid = createKuuid();

/**
 * A 32-character, time-sortable id for `t` (now by default), kuuid's `id(t)`.
 *
 * @throws {@link KuuidError} for a time kuuid would mishandle (see the module comment).
 */
export function id(t?: KuuidTime): string {
  return defaultKuuid.id(t);
}

/**
 * A 32-character id with a millisecond prefix, kuuid's `idms(t)`.
 *
 * @throws {@link KuuidError} for a time kuuid would mishandle (see the module comment).
 */
export function idms(t?: KuuidTime): string {
  return defaultKuuid.idms(t);
}

/**
 * True when `s` has the exact shape of a kuuid `id()`/`idms()`: {@link ID_PATTERN}, and no random
 * group above `4gfFC3` (2³² − 1). Groups are fixed-width, so a string comparison is numeric.
 */
export function isId(s: string): boolean {
  if (typeof s !== 'string' || !ID_PATTERN.test(s)) return false;
  for (let start = PREFIX_LENGTH; start < ID_LENGTH; start += GROUP_LENGTH) {
    if (s.slice(start, start + GROUP_LENGTH) > MAX_GROUP) return false;
  }
  return true;
}

/**
 * The time in an 8-character prefix or a 32-character id: the start of its second, or with
 * `{ ms: true }` (for `prefixms`/`idms`) its millisecond. The caller must know which form it has;
 * the two cannot be told apart.
 *
 * @throws {@link KuuidError} when the text is neither a prefix nor an id, or its time does not fit a
 * `Date`.
 */
export function decode(idOrPrefix: string, options: { ms?: boolean } = {}): Date {
  if (typeof idOrPrefix !== 'string' || !(PREFIX_PATTERN.test(idOrPrefix) || isId(idOrPrefix))) {
    throw new KuuidError(idOrPrefix, 'expected an 8-character prefix or a 32-character id of 0-9A-Za-z');
  }
  const value = decodeBase62(idOrPrefix.slice(0, PREFIX_LENGTH));
  const ms = options.ms ? value : value * 1000n;
  if (ms > BigInt(MAX_DATE_MS)) throw new KuuidError(idOrPrefix, 'its time is beyond the range of a JavaScript Date');
  return new Date(Number(ms));
}
