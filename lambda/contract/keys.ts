/**
 * The key layout: commit keys, and the keys of leaves, manifests and quarantine records built on them.
 *
 * Commit keys: the 12-character, kuuid-compatible name of a catalog commit in S3 keys.
 *
 * A key is kuuid's `prefix` of the commit's second (8 characters) followed by the 100-ns ticks
 * within that second in base 62, padded to 4 (`0000`…`fxSJ`, as 62⁴ > 10⁷). Both parts are
 * fixed-width base 62, so keys compare as bytes exactly as commit times compare, down to the tick:
 * two commits inside one millisecond still get distinct, ordered keys. The key comes from the
 * catalog's commit timestamp, never the clock, so the same leaf always lands on the same key.
 */
import { decodeBase62, encodeBase62 } from './base62.js';
import {
  parseTimestamp,
  ticksToEpochSeconds,
  ticksWithinSecond,
  TICKS_PER_SECOND,
  UNIX_EPOCH_TICKS,
  type Ticks,
} from './time.js';
import { CatalogSyncError, ErrorCode } from './errors.js';
import { idSegment, versionSegment } from './identity.js';

/** Characters of the seconds part: the length of kuuid's `prefix` (the kuuid tests hold the two alike). */
const SECONDS_LENGTH = 8;
/** Characters of the sub-second part: 62⁴ = 14,776,336 ≥ 10,000,000 ticks per second. */
const FRACTION_LENGTH = 4;
/** Characters in a commit key. */
export const COMMIT_KEY_LENGTH = SECONDS_LENGTH + FRACTION_LENGTH;
/** The last second eight base-62 digits can hold (`zzzzzzzz`), about 6.9 million years after 1970. */
const MAX_SECONDS = 62n ** 8n - 1n;
const KEY_PATTERN = /^[0-9A-Za-z]{12}$/;

/** A commit time that has no key, or a text that is not a commit key. */
export class CommitKeyError extends CatalogSyncError {
  override readonly name = 'CommitKeyError';
  override get code(): ErrorCode {
    return ErrorCode.commitKey;
  }
  constructor(
    /** The offending ticks, timestamp or key. */
    readonly input: unknown,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(
      `invalid commit key input ${typeof input === 'bigint' ? `${input} ticks` : JSON.stringify(input)}: ${reason}`,
      options,
    );
  }
}

/**
 * The commit key of a commit time, e.g. `2017-10-31T23:30:32.4197849Z` → `001e9fzMHc3F`.
 *
 * @throws {@link CommitKeyError} for a time before 1970 (kuuid has no prefix for it) or past
 * `zzzzzzzz` seconds.
 */
export function commitKey(ticks: Ticks): string {
  if (typeof ticks !== 'bigint') throw new CommitKeyError(ticks, 'ticks must be a bigint');
  if (ticks < UNIX_EPOCH_TICKS) throw new CommitKeyError(ticks, 'before 1970-01-01T00:00:00Z');
  const seconds = ticksToEpochSeconds(ticks);
  if (seconds > MAX_SECONDS) throw new CommitKeyError(ticks, 'beyond the 8-character seconds range');
  // The same digits as kuuid's prefix(), computed from ticks so no precision goes through Date.
  return (
    encodeBase62(seconds).padStart(SECONDS_LENGTH, '0') +
    encodeBase62(ticksWithinSecond(ticks)).padStart(FRACTION_LENGTH, '0')
  );
}

/**
 * The commit key of a catalog `commitTimeStamp` text.
 *
 * @throws {@link CommitKeyError} when the text is not an exact timestamp, or as {@link commitKey}.
 */
export function commitKeyOf(timestamp: string): string {
  let ticks: Ticks;
  try {
    ticks = parseTimestamp(timestamp);
  } catch (cause) {
    throw new CommitKeyError(timestamp, 'not an ISO 8601 timestamp with Z or an offset', { cause });
  }
  return commitKey(ticks);
}

/**
 * The exact commit time of a key; the inverse of {@link commitKey}.
 *
 * @throws {@link CommitKeyError} when the key is not 12 characters of `0-9A-Za-z`, or its last four
 * exceed `fxSJ` (9,999,999 ticks).
 */
export function decodeCommitKey(key: string): Ticks {
  if (typeof key !== 'string' || !KEY_PATTERN.test(key)) {
    throw new CommitKeyError(key, `expected ${COMMIT_KEY_LENGTH} characters of 0-9A-Za-z`);
  }
  const seconds = decodeBase62(key.slice(0, SECONDS_LENGTH));
  const fraction = decodeBase62(key.slice(SECONDS_LENGTH));
  if (fraction >= TICKS_PER_SECOND) throw new CommitKeyError(key, 'sub-second part exceeds fxSJ (9,999,999 ticks)');
  return UNIX_EPOCH_TICKS + seconds * TICKS_PER_SECOND + fraction;
}

// ---------------------------------------------------------------------------------------------
// Object keys (contract.md, "S3 layout")
// ---------------------------------------------------------------------------------------------

/** Throws unless `key` is a well-formed commit key, so a bad one cannot produce a stray key. */
function checkedCommitKey(key: string): string {
  decodeCommitKey(key);
  return key;
}

/**
 * `{prefix}leaves/{commitKey}/{id}/{version}.json`, where every leaf of a commit is stored.
 *
 * @throws {@link KeySegmentError} for an empty id or version; `CommitKeyError` for a malformed key.
 */
export function leafKey(keyPrefix: string, commitKey: string, id: string, version: string): string {
  return `${keyPrefix}leaves/${checkedCommitKey(commitKey)}/${idSegment(id)}/${versionSegment(version)}.json`;
}

/**
 * `{prefix}commits/{commitKey}.json`, the manifest written once the whole commit is stored.
 *
 * @throws `CommitKeyError` for a malformed commit key.
 */
export function manifestKey(keyPrefix: string, commitKey: string): string {
  return `${keyPrefix}commits/${checkedCommitKey(commitKey)}.json`;
}

/**
 * `{prefix}quarantine/{commitKey}/{id}/{version}.json`, where a leaf that kept failing is recorded.
 *
 * @throws {@link KeySegmentError} for an empty id or version; `CommitKeyError` for a malformed key.
 */
export function quarantineKey(keyPrefix: string, commitKey: string, id: string, version: string): string {
  return `${keyPrefix}quarantine/${checkedCommitKey(commitKey)}/${idSegment(id)}/${versionSegment(version)}.json`;
}

/**
 * The `{id}` segment that stands for every identity no store can hold. `~` is never produced by the
 * percent-encoding of a real id (it becomes `%7E`), so it cannot collide with one.
 */
export const UNSTORABLE_SEGMENT = '~unstorable';

/** The quarantine record's key of a leaf key: the same path, under `quarantine/` instead of `leaves/`. */
export function quarantineKeyFor(prefix: string, leafKeyOfItem: string): string {
  return `${prefix}quarantine/${leafKeyOfItem.slice(prefix.length + 'leaves/'.length)}`;
}

/** The leaf key a quarantine record stands for: the inverse of {@link quarantineKeyFor}. */
export function leafKeyForRecord(prefix: string, recordKey: string): string {
  return `${prefix}leaves/${recordKey.slice(prefix.length + 'quarantine/'.length)}`;
}

/**
 * The folders of the layout under a prefix that the writers of snapshots fill: leaves, manifests and quarantine
 * records (a function's `s3:PutObject` is granted on these, `watermark.json` and `filter.json`, not on the whole prefix).
 */
export const SNAPSHOT_FOLDERS = ['leaves/', 'commits/', 'quarantine/'] as const;

/** `{prefix}watermark.json`: the one watermark a consumer with only S3 access can trust (its document: `watermarkOf` in lambda/sync/layout.ts). */
export function watermarkKeyOf(prefix: string): string {
  return `${prefix}watermark.json`;
}

/** `{prefix}filter.json`: the id filter the mirror was synced with (its document: lambda/sync/filter-record.ts). */
export function filterKeyOf(prefix: string): string {
  return `${prefix}filter.json`;
}
