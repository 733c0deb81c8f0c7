/**
 * Catalog time for test data: exact 100-ns ticks, and their text exactly as the catalog serves it.
 *
 * Deliberately independent of the project's own timestamp module, so a bug there cannot hide
 * behind the same bug in the data it is tested with.
 */

/** Ticks (100 ns) in one second. */
export const TICKS_PER_SECOND = 10_000_000n;
/** Ticks in one millisecond. */
export const TICKS_PER_MILLISECOND = 10_000n;

const PATTERN = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,7}))?Z$/;

/**
 * Ticks since 1970-01-01T00:00:00Z of a UTC timestamp with up to 7 fractional digits.
 *
 * @throws when the text is not `YYYY-MM-DDTHH:MM:SS[.f{1,7}]Z` on or after 1970.
 */
export function parseTicks(text: string): bigint {
  const match = PATTERN.exec(text);
  const seconds = match ? Date.parse(`${match[1]}Z`) : Number.NaN;
  if (!match || !Number.isFinite(seconds) || seconds < 0) throw new Error(`not a catalog timestamp: ${text}`);
  return (BigInt(seconds) / 1000n) * TICKS_PER_SECOND + BigInt((match[2] ?? '').padEnd(7, '0'));
}

/**
 * Formats ticks as the catalog does.
 *
 * @param trim drop trailing zeros of the fraction (and the dot, for whole seconds), as nuget.org
 *   does; otherwise always seven fractional digits.
 */
export function formatTicks(ticks: bigint, trim: boolean): string {
  const seconds = ticks / TICKS_PER_SECOND;
  const head = new Date(Number(seconds) * 1000).toISOString().slice(0, 19);
  let fraction = (ticks % TICKS_PER_SECOND).toString().padStart(7, '0');
  if (trim) fraction = fraction.replace(/0+$/, '');
  return fraction === '' ? `${head}Z` : `${head}.${fraction}Z`;
}

/** The `Date` of the whole second holding `ticks` (HTTP dates have one-second resolution). */
export function ticksToDate(ticks: bigint): Date {
  return new Date(Number(ticks / TICKS_PER_SECOND) * 1000);
}

/** The `yyyy.MM.dd.HH.mm.ss` folder nuget.org puts a commit's leaves in. */
export function leafFolder(ticks: bigint): string {
  return ticksToDate(ticks).toISOString().slice(0, 19).replace(/[-T:]/g, '.');
}
