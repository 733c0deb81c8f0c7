import { MAX_PREFIX_BYTES } from './identity.js';
import { redactUrl } from './redact.js';
import { MIN_TIMESTAMP, parseTimestamp, type Ticks } from './time.js';
import { CatalogSyncError, ErrorCode } from './errors.js';
import { idFilterOf, idPatternProblem, type IdFilter } from './id-filter.js';

/** nuget.org's service index. */
export const DEFAULT_SOURCE = 'https://api.nuget.org/v3/index.json';
/** The cursor name when none is set. */
export const DEFAULT_CURSOR_NAME = 'catalog-to-s3';
/**
 * Most commits in one run: the most the setting takes, so the time budget bounds a run (the Lambda's remaining time
 * less its margin, `--time-budget`), not this. Before, 5,000 commits (15,000 leaves at nuget.org's 3 a commit) held
 * a follower catching up after an outage to about 50 leaves/s over a 5-minute schedule, where the engine makes
 * 300-600 (docs/performance.md, "Catching up after an outage").
 */
export const DEFAULT_MAX_COMMITS = 1_000_000;
/**
 * Most leaves in one run: a guard on memory only, far past what a run takes in its time (a 15-minute Lambda at 600
 * leaves/s takes about 520,000). A run's memory does not grow with its leaves (finalized commits are dropped, pages
 * read one ahead); what does, one slot per commit taken, stays under 10 MB at this bound.
 */
export const DEFAULT_MAX_LEAVES = 1_000_000;
/** Leaves in flight at once (fetch + PUT). See the README's figures. */
export const DEFAULT_CONCURRENCY = 32;

/** Target leaves per backfill range: a range is closed once its pages' counts reach it. */
export const DEFAULT_RANGE_LEAVES = 5_000;
/** Seconds a backfill's lease holds off the follower; renewed by each range worker. */
export const DEFAULT_BACKFILL_LEASE_SECONDS = 600;

/** Days a run-log item is kept (its DynamoDB TTL) when `RUN_LOG_DAYS` is not set. */
export const DEFAULT_RUN_LOG_DAYS = 30;
/** CloudWatch namespace of the handler's EMF metrics when `POWERTOOLS_METRICS_NAMESPACE` is not set. */
export const DEFAULT_METRICS_NAMESPACE = 'CatalogSync';
/** The Lambda environment variable naming a private feed's secret (its ARN, or its name in the function's account). */
export const SOURCE_SECRET_ENV = 'SOURCE_SECRET_ARN';

/** What one run of the engine needs to know. The Lambda reads it from the environment, the CLI from flags. */
export interface SyncSettings {
  /** Service index or catalog index URL. */
  readonly source: string;
  readonly cursorName: string;
  /** Cursors (in the same store) this one must never pass. */
  readonly dependsOn: readonly string[];
  /** Key prefix of every object written. */
  readonly prefix: string;
  /** The cursor to start from when none is stored. */
  readonly startCursor: Ticks;
  readonly maxCommits: number;
  readonly maxLeaves: number;
  readonly concurrency: number;
  readonly quarantine: boolean;
  /** Origins leaves or pages may be fetched from besides the catalog index's own. */
  readonly allowedOrigins: readonly string[];
  /** The id filter (`INCLUDE_IDS` / `EXCLUDE_IDS`), canonical; undefined: every package. */
  readonly idFilter?: IdFilter;
}

/** A setting with a bad value. The message names the setting as the user spelled it. */
export class SettingsError extends CatalogSyncError {
  override readonly name = 'SettingsError';
  override get code(): ErrorCode {
    return ErrorCode.settings;
  }
  constructor(
    readonly setting: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`${setting}: ${reason}`, options);
  }
}

/** Raw settings as text, keyed by their Lambda environment names. */
export interface RawSettings {
  CATALOG_SOURCE?: string | undefined;
  CURSOR_NAME?: string | undefined;
  DEPENDS_ON?: string | readonly string[] | undefined;
  SNAPSHOT_PREFIX?: string | undefined;
  START_CURSOR?: string | undefined;
  MAX_COMMITS?: string | undefined;
  MAX_LEAVES?: string | undefined;
  CONCURRENCY?: string | undefined;
  QUARANTINE?: string | boolean | undefined;
  ALLOWED_ORIGINS?: string | readonly string[] | undefined;
  INCLUDE_IDS?: string | readonly string[] | undefined;
  EXCLUDE_IDS?: string | readonly string[] | undefined;
}

/** How each setting is named to the user: environment variable names for the Lambda, flags for the CLI. */
export type SettingNames = Readonly<Record<keyof RawSettings, string>>;

/** The Lambda's names: the environment variables themselves. */
export const ENV_NAMES: SettingNames = {
  CATALOG_SOURCE: 'CATALOG_SOURCE',
  CURSOR_NAME: 'CURSOR_NAME',
  DEPENDS_ON: 'DEPENDS_ON',
  SNAPSHOT_PREFIX: 'SNAPSHOT_PREFIX',
  START_CURSOR: 'START_CURSOR',
  MAX_COMMITS: 'MAX_COMMITS',
  MAX_LEAVES: 'MAX_LEAVES',
  CONCURRENCY: 'CONCURRENCY',
  QUARANTINE: 'QUARANTINE',
  ALLOWED_ORIGINS: 'ALLOWED_ORIGINS',
  INCLUDE_IDS: 'INCLUDE_IDS',
  EXCLUDE_IDS: 'EXCLUDE_IDS',
};

/** Hosts that are this machine: plain HTTP to them does not cross a network. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** A cursor name (the follower's, a dependency's, a named consumer's) is a DynamoDB partition key and a file name: keep it plain. */
export const CURSOR_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Validates raw settings; the first bad one throws {@link SettingsError} naming it. */
export function parseSettings(raw: RawSettings, names: SettingNames = ENV_NAMES): SyncSettings {
  const source = httpUrl(names.CATALOG_SOURCE, blankToUndefined(raw.CATALOG_SOURCE) ?? DEFAULT_SOURCE);
  checkSourceCredentials(names.CATALOG_SOURCE, new URL(source));
  const cursorName = cursorNameOf(names.CURSOR_NAME, blankToUndefined(raw.CURSOR_NAME) ?? DEFAULT_CURSOR_NAME);
  const dependsOn = list(raw.DEPENDS_ON).map((name) => cursorNameOf(names.DEPENDS_ON, name));
  if (dependsOn.includes(cursorName))
    throw new SettingsError(names.DEPENDS_ON, `a cursor cannot depend on itself (${cursorName})`);
  const prefix = raw.SNAPSHOT_PREFIX ?? '';
  if (prefix.startsWith('/') || prefix.includes('..') || /[\u0000-\u001f\u007f\\]/.test(prefix)) {
    throw new SettingsError(
      names.SNAPSHOT_PREFIX,
      `${JSON.stringify(prefix)} must not start with "/" nor contain "..", "\\" or control characters`,
    );
  }
  const prefixBytes = Buffer.byteLength(prefix, 'utf8');
  if (prefixBytes > MAX_PREFIX_BYTES) {
    // The bound on ids and versions leaves room for this much prefix and no more below S3's 1,024-byte keys.
    throw new SettingsError(
      names.SNAPSHOT_PREFIX,
      `${JSON.stringify(prefix)} is ${prefixBytes} bytes of UTF-8; at most ${MAX_PREFIX_BYTES} keep every key below 1,024 bytes`,
    );
  }
  let startCursor: Ticks;
  const startText = blankToUndefined(raw.START_CURSOR) ?? MIN_TIMESTAMP;
  try {
    startCursor = parseTimestamp(startText);
  } catch (cause) {
    throw new SettingsError(names.START_CURSOR, (cause as Error).message, { cause });
  }
  const idFilter = idFilterOf(
    idPatterns(names.INCLUDE_IDS, raw.INCLUDE_IDS),
    idPatterns(names.EXCLUDE_IDS, raw.EXCLUDE_IDS),
  );
  return {
    source,
    cursorName,
    dependsOn,
    prefix,
    startCursor,
    maxCommits: positiveInteger(names.MAX_COMMITS, raw.MAX_COMMITS, DEFAULT_MAX_COMMITS, 1_000_000),
    maxLeaves: positiveInteger(names.MAX_LEAVES, raw.MAX_LEAVES, DEFAULT_MAX_LEAVES, 10_000_000),
    concurrency: positiveInteger(names.CONCURRENCY, raw.CONCURRENCY, DEFAULT_CONCURRENCY, 1_024),
    quarantine: booleanOf(names.QUARANTINE, raw.QUARANTINE),
    allowedOrigins: list(raw.ALLOWED_ORIGINS).map((origin) => originOf(names.ALLOWED_ORIGINS, origin)),
    ...(idFilter === undefined ? {} : { idFilter }),
  };
}

function idPatterns(setting: string, value: string | readonly string[] | undefined): string[] {
  const patterns = list(value);
  for (const pattern of patterns) {
    const problem = idPatternProblem(pattern);
    if (problem !== undefined) throw new SettingsError(setting, problem);
  }
  return patterns;
}

function blankToUndefined(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function list(value: string | readonly string[] | undefined): string[] {
  if (value === undefined) return [];
  const parts = typeof value === 'string' ? value.split(',') : value.flatMap((v) => v.split(','));
  return parts.map((part) => part.trim()).filter((part) => part !== '');
}

function httpUrl(setting: string, text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new SettingsError(setting, `${JSON.stringify(redactUrl(text))} is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new SettingsError(setting, `${JSON.stringify(redactUrl(text))} must be an http or https URL`);
  }
  return url.href;
}

/** Credentials in the source URL are sent as HTTP Basic authentication (see HttpClient.useCredentialsOf). */
function checkSourceCredentials(setting: string, url: URL): void {
  if (!url.username && !url.password) return;
  const shown = JSON.stringify(redactUrl(url.href));
  // Basic authentication over plain HTTP hands the password to anyone on the path.
  if (url.protocol !== 'https:' && !LOOPBACK_HOSTS.has(url.hostname)) {
    throw new SettingsError(setting, `${shown} has credentials: they are sent over https only (or to this machine)`);
  }
  try {
    decodeURIComponent(url.username);
    decodeURIComponent(url.password);
  } catch (cause) {
    throw new SettingsError(setting, `${shown} has credentials that are not valid percent-encoding (write % as %25)`, {
      cause,
    });
  }
}

function originOf(setting: string, text: string): string {
  const url = new URL(httpUrl(setting, text));
  if (url.username || url.password) {
    // Credentials go to the source's origin only (see HttpClient.useCredentialsOf).
    throw new SettingsError(setting, `${JSON.stringify(redactUrl(text))} must be an origin only, without credentials`);
  }
  if (url.pathname !== '/' || url.search || url.hash) {
    throw new SettingsError(
      setting,
      `${JSON.stringify(redactUrl(text))} must be an origin only (scheme://host[:port]), without a path`,
    );
  }
  return url.origin;
}

function cursorNameOf(setting: string, name: string): string {
  if (!CURSOR_NAME_PATTERN.test(name)) {
    throw new SettingsError(
      setting,
      `${JSON.stringify(name)} must be 1 to 128 characters of A-Z a-z 0-9 . _ - and start with a letter or digit`,
    );
  }
  return name;
}

function positiveInteger(setting: string, text: string | undefined, fallback: number, max: number): number {
  const value = blankToUndefined(text);
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > max) {
    throw new SettingsError(setting, `${JSON.stringify(value)} must be a whole number from 1 to ${max}`);
  }
  return Number(value);
}

function booleanOf(setting: string, value: string | boolean | undefined): boolean {
  if (typeof value === 'boolean') return value;
  const text = blankToUndefined(value)?.toLowerCase();
  if (text === undefined || text === 'false' || text === '0' || text === 'no') return false;
  if (text === 'true' || text === '1' || text === 'yes') return true;
  throw new SettingsError(setting, `${JSON.stringify(value)} must be true or false`);
}

/**
 * `RUN_LOG_DAYS`: whole days a run-log item is kept, at least 1; {@link DEFAULT_RUN_LOG_DAYS} when blank or unset.
 *
 * @throws {@link SettingsError} naming `RUN_LOG_DAYS`.
 */
export function parseRunLogDays(text: string | undefined): number {
  const daysText = text?.trim() || String(DEFAULT_RUN_LOG_DAYS);
  if (!/^\d+$/.test(daysText) || Number(daysText) < 1)
    throw new SettingsError('RUN_LOG_DAYS', `${JSON.stringify(daysText)} must be a whole number of days, at least 1`);
  return Number(daysText);
}
