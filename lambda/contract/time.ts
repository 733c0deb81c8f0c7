/**
 * Exact catalog timestamps.
 *
 * The catalog writes commit timestamps with up to seven fractional digits (100-ns ticks) and drops
 * trailing zeros, and two commits may fall inside one millisecond. JavaScript `Date` keeps
 * milliseconds only and raw strings do not compare as times, so every timestamp becomes a
 * {@link Ticks} value: an exact count of 100-ns ticks since 0001-01-01T00:00:00Z (the same origin as
 * .NET `DateTime.Ticks`), as a `bigint`.
 */
import { CatalogSyncError, ErrorCode } from './errors.js';

/** 100-nanosecond ticks since 0001-01-01T00:00:00Z. */
export type Ticks = bigint;

/** Ticks in one second. */
export const TICKS_PER_SECOND = 10_000_000n;
/** Ticks in one millisecond. */
export const TICKS_PER_MILLISECOND = 10_000n;
const SECONDS_PER_DAY = 86_400n;

/** `0001-01-01T00:00:00Z`, .NET `DateTimeOffset.MinValue`: the cursor of a client that has seen nothing. */
export const MIN_TICKS: Ticks = 0n;
/** The text form of {@link MIN_TICKS}. */
export const MIN_TIMESTAMP = '0001-01-01T00:00:00Z';

/** Days from 0001-01-01 to 1970-01-01. */
const UNIX_EPOCH_DAYS = 719_162n;
/** Ticks at 1970-01-01T00:00:00Z. */
export const UNIX_EPOCH_TICKS: Ticks = UNIX_EPOCH_DAYS * SECONDS_PER_DAY * TICKS_PER_SECOND;

/** A text that is not an exact ISO 8601 UTC timestamp. */
export class TimestampError extends CatalogSyncError {
  override readonly name = 'TimestampError';
  override get code(): ErrorCode {
    return ErrorCode.timestamp;
  }
  constructor(
    readonly text: unknown,
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(`invalid timestamp ${JSON.stringify(text)}: ${reason}`, options);
  }
}

const PATTERN = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,7}))?(Z|[+-]\d{2}:\d{2})$/;

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

function daysInMonth(year: number, month: number): number {
  return month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1]!;
}

/** Days since 0001-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil, shifted). */
function daysFromCivil(year: number, month: number, day: number): bigint {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = (month + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  // days since 1970-01-01, then shifted to 0001-01-01.
  return BigInt(era * 146_097 + doe - 719_468) + UNIX_EPOCH_DAYS;
}

function civilFromDays(daysSince0001: bigint): [number, number, number] {
  const z = Number(daysSince0001 - UNIX_EPOCH_DAYS) + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const y = yoe + era * 400;
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [m <= 2 ? y + 1 : y, m, d];
}

/**
 * Parses `YYYY-MM-DDTHH:MM:SS[.f{1,7}](Z|±HH:MM)` into exact ticks.
 *
 * @throws {@link TimestampError} when the text is not such a timestamp or names an impossible date.
 */
export function parseTimestamp(text: string): Ticks {
  if (typeof text !== 'string') throw new TimestampError(text, 'not a string');
  const match = PATTERN.exec(text);
  if (!match) {
    throw new TimestampError(text, 'expected YYYY-MM-DDTHH:MM:SS[.fffffff] followed by Z or an offset');
  }
  const [, ys, mos, ds, hs, mis, ss, fraction = '', zone] = match;
  const year = Number(ys);
  const month = Number(mos);
  const day = Number(ds);
  const hour = Number(hs);
  const minute = Number(mis);
  const second = Number(ss);
  if (year < 1) throw new TimestampError(text, 'year 0000 does not exist');
  if (month < 1 || month > 12) throw new TimestampError(text, `month ${mos} is out of range`);
  if (day < 1 || day > daysInMonth(year, month)) throw new TimestampError(text, `day ${ds} is out of range`);
  if (hour > 23) throw new TimestampError(text, `hour ${hs} is out of range`);
  if (minute > 59) throw new TimestampError(text, `minute ${mis} is out of range`);
  if (second > 59) throw new TimestampError(text, `second ${ss} is out of range`);
  let offsetSeconds = 0n;
  if (zone !== 'Z') {
    const sign = zone![0] === '-' ? -1n : 1n;
    const oh = Number(zone!.slice(1, 3));
    const om = Number(zone!.slice(4, 6));
    if (oh > 23 || om > 59) throw new TimestampError(text, `offset ${zone} is out of range`);
    offsetSeconds = sign * BigInt(oh * 3600 + om * 60);
  }
  const seconds =
    daysFromCivil(year, month, day) * SECONDS_PER_DAY + BigInt(hour * 3600 + minute * 60 + second) - offsetSeconds;
  const ticks = seconds * TICKS_PER_SECOND + BigInt(fraction.padEnd(7, '0'));
  if (ticks < 0n) throw new TimestampError(text, 'before 0001-01-01T00:00:00Z');
  return ticks;
}

/** True when `text` parses as an exact timestamp. */
export function isTimestamp(text: string): boolean {
  try {
    parseTimestamp(text);
    return true;
  } catch {
    return false;
  }
}

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** Formats ticks as `YYYY-MM-DDTHH:MM:SS.fffffffZ`, always with seven fractional digits. */
export function formatTimestamp(ticks: Ticks): string {
  if (ticks < 0n) throw new TimestampError(String(ticks), 'negative ticks');
  const totalSeconds = ticks / TICKS_PER_SECOND;
  const fraction = ticks % TICKS_PER_SECOND;
  const days = totalSeconds / SECONDS_PER_DAY;
  const secondOfDay = Number(totalSeconds % SECONDS_PER_DAY);
  const [year, month, day] = civilFromDays(days);
  if (year > 9999) throw new TimestampError(String(ticks), 'after year 9999');
  return (
    `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T` +
    `${pad(Math.floor(secondOfDay / 3600), 2)}:${pad(Math.floor((secondOfDay % 3600) / 60), 2)}:${pad(secondOfDay % 60, 2)}` +
    `.${fraction.toString().padStart(7, '0')}Z`
  );
}

/** Normalizes any accepted timestamp text to the seven-digit UTC form. */
export function normalizeTimestamp(text: string): string {
  return formatTimestamp(parseTimestamp(text));
}

/** Whole seconds since 1970-01-01T00:00:00Z (floor); negative before 1970. */
export function ticksToEpochSeconds(ticks: Ticks): bigint {
  const sinceEpoch = ticks - UNIX_EPOCH_TICKS;
  const q = sinceEpoch / TICKS_PER_SECOND;
  return sinceEpoch < 0n && sinceEpoch % TICKS_PER_SECOND !== 0n ? q - 1n : q;
}

/** The ticks within the second, 0 to 9,999,999. */
export function ticksWithinSecond(ticks: Ticks): number {
  return Number(ticks % TICKS_PER_SECOND);
}

/** Milliseconds since the Unix epoch (floor), for wall-clock arithmetic such as lag. */
export function ticksToEpochMs(ticks: Ticks): number {
  const sinceEpoch = ticks - UNIX_EPOCH_TICKS;
  const q = sinceEpoch / TICKS_PER_MILLISECOND;
  return Number(sinceEpoch < 0n && sinceEpoch % TICKS_PER_MILLISECOND !== 0n ? q - 1n : q);
}

/** Ticks of a Unix time in milliseconds. */
export function ticksFromEpochMs(ms: number): Ticks {
  if (!Number.isFinite(ms)) throw new TimestampError(ms, 'not a finite number of milliseconds');
  return UNIX_EPOCH_TICKS + BigInt(Math.trunc(ms)) * TICKS_PER_MILLISECOND;
}

/** Three-way comparison of ticks, for `Array.prototype.sort`. */
export function compareTicks(a: Ticks, b: Ticks): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A time as a person writes it on the command line: a date alone (`2017-11-01`) means midnight UTC of that
 * day; anything else must be an exact timestamp. Returns the timestamp text (`2017-11-01T00:00:00Z` for a date),
 * for the parsers that take text ({@link parseTimestamp}, kuuid prefixes, start-after keys).
 */
export function expandDateOnly(text: string): string {
  return typeof text === 'string' && DATE_ONLY.test(text) ? `${text}T00:00:00Z` : text;
}

/** {@link parseTimestamp} of {@link expandDateOnly}: a date alone is midnight UTC. */
export function parseTimeInput(text: string): Ticks {
  return parseTimestamp(expandDateOnly(text));
}
