/**
 * S3 key segments of a package identity (contract.md, "S3 layout").
 *
 * `{id}` is the package id lowercased and `{version}` the NuGet normalized version lowercased, so
 * every spelling of one identity (`Newtonsoft.Json 01.0` and `newtonsoft.json 1.0.0`) lands on the
 * same key. Each segment is then percent-encoded down to `a-z 0-9 . _ -`: keys stay plain ASCII,
 * a `/` in an id can never add a folder, and the encoding is injective, so distinct identities can
 * never share a key.
 */
import { decodeCommitKey } from '../ids/commit-key.js';

/** A package id or version that cannot become a key segment. */
export class KeySegmentError extends Error {
  override readonly name = 'KeySegmentError';
  constructor(
    /** The offending id, version or segment. */
    readonly input: unknown,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`invalid key segment ${JSON.stringify(input) ?? String(input)}: ${reason}`, options);
  }
}

/** `1` to `4` dot-separated numbers, then an optional prerelease label after the first `-`. */
const NUMERIC_VERSION = /^(\d+(?:\.\d+){0,3})(?:-(.*))?$/s;

/**
 * The NuGet identity form of a version, lowercased: `+build` metadata removed, each numeric part
 * without leading zeros, at least three parts, a zero fourth part dropped, the prerelease label kept
 * as is (`01.0` → `1.0.0`, `1.0.0.0` → `1.0.0`, `3.1.0-RC.1+sha.5` → `3.1.0-rc.1`).
 *
 * A version whose release part is not 1–4 numbers is only stripped of build metadata and
 * lowercased. NuGet never publishes such a version, but a key must still be derived, and
 * deterministically, from whatever the page item says rather than make the whole commit fail.
 *
 * @throws {@link KeySegmentError} when nothing is left (an empty version, or only `+build`).
 */
export function normalizeVersion(version: string): string {
  if (typeof version !== 'string') throw new KeySegmentError(version, 'version must be a string');
  const plus = version.indexOf('+');
  const withoutBuild = plus < 0 ? version : version.slice(0, plus);
  const match = NUMERIC_VERSION.exec(withoutBuild);
  let normalized = withoutBuild;
  if (match) {
    // Leading zeros are stripped as text, not parsed, so a number of any length stays exact.
    const parts = match[1]!.split('.').map((part) => part.replace(/^0+(?=\d)/, ''));
    while (parts.length < 3) parts.push('0');
    if (parts.length === 4 && parts[3] === '0') parts.pop();
    normalized = parts.join('.') + (match[2] === undefined ? '' : `-${match[2]}`);
  }
  // toLowerCase, not toLocaleLowerCase: a Turkish locale must not turn `I` into a dotless `ı`.
  normalized = normalized.toLowerCase();
  if (normalized === '') throw new KeySegmentError(version, 'empty version');
  return normalized;
}

/** Whether a code point stays literal: `a-z`, `0-9`, `.`, `_`, `-`. */
function isSafe(codePoint: number): boolean {
  return (
    (codePoint >= 0x61 && codePoint <= 0x7a) ||
    (codePoint >= 0x30 && codePoint <= 0x39) ||
    codePoint === 0x2e ||
    codePoint === 0x5f ||
    codePoint === 0x2d
  );
}

const hex = (byte: number): string => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;

/**
 * `%XX` of the UTF-8 bytes of a code point. A lone surrogate (possible in a JSON `\uD800` escape)
 * gets its 3-byte generalized UTF-8 form (WTF-8) rather than U+FFFD, which would make it share an
 * encoding with a real U+FFFD.
 */
function percentEncode(codePoint: number): string {
  if (codePoint < 0x80) return hex(codePoint);
  if (codePoint < 0x800) return hex(0xc0 | (codePoint >> 6)) + hex(0x80 | (codePoint & 0x3f));
  if (codePoint < 0x10000) {
    return hex(0xe0 | (codePoint >> 12)) + hex(0x80 | ((codePoint >> 6) & 0x3f)) + hex(0x80 | (codePoint & 0x3f));
  }
  return (
    hex(0xf0 | (codePoint >> 18)) +
    hex(0x80 | ((codePoint >> 12) & 0x3f)) +
    hex(0x80 | ((codePoint >> 6) & 0x3f)) +
    hex(0x80 | (codePoint & 0x3f))
  );
}

/**
 * Percent-encodes every character outside `a-z 0-9 . _ -` as `%XX` (upper-case hex) of its UTF-8
 * bytes. The input is expected lowercased already, so an upper-case letter left in it is encoded,
 * as the contract requires. A segment of dots only (`.`, `..`) has its dots encoded as `%2E`, so a
 * key mirrored to a file system can never name the folder itself or climb out of it.
 *
 * Injective: `%` itself is encoded, so percent-decoding gives the input back.
 *
 * @throws {@link KeySegmentError} for the empty string, which would collapse a key level.
 */
export function encodeKeySegment(s: string): string {
  if (typeof s !== 'string') throw new KeySegmentError(s, 'segment must be a string');
  if (s === '') throw new KeySegmentError(s, 'empty segment');
  if (/^\.+$/.test(s)) return '%2E'.repeat(s.length);
  let out = '';
  for (let i = 0; i < s.length; ) {
    // codePointAt joins a surrogate pair and returns a lone surrogate as itself.
    const codePoint = s.codePointAt(i)!;
    i += codePoint > 0xffff ? 2 : 1;
    out += isSafe(codePoint) ? String.fromCharCode(codePoint) : percentEncode(codePoint);
  }
  return out;
}

/** The `{id}` segment: the package id lowercased, then encoded. */
export function idSegment(id: string): string {
  if (typeof id !== 'string') throw new KeySegmentError(id, 'id must be a string');
  return encodeKeySegment(id.toLowerCase());
}

/** The `{version}` segment: the normalized version ({@link normalizeVersion}), then encoded. */
export function versionSegment(version: string): string {
  return encodeKeySegment(normalizeVersion(version));
}

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
