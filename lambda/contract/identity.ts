/**
 * S3 key segments of a package identity (contract.md, "S3 layout").
 *
 * `{id}` is the package id lowercased and `{version}` the NuGet normalized version lowercased, so
 * every spelling of one identity (`Newtonsoft.Json 01.0` and `newtonsoft.json 1.0.0`) lands on the
 * same key. Each segment is then percent-encoded down to `a-z 0-9 . _ -`: keys stay plain ASCII,
 * a `/` in an id can never add a folder, and the encoding is injective, so distinct identities can
 * never share a key.
 */
import { CatalogSyncError, ErrorCode } from './errors.js';
import { normalizedNuGetVersion, parseNuGetVersion, type NuGetVersionParts } from './nuget-version.js';

/** A package id or version that cannot become a key segment. */
export class KeySegmentError extends CatalogSyncError {
  override readonly name = 'KeySegmentError';
  override get code(): ErrorCode {
    return ErrorCode.keySegment;
  }
  constructor(
    /** The offending id, version or segment. */
    readonly input: unknown,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`invalid key segment ${JSON.stringify(input) ?? String(input)}: ${reason}`, options);
  }
}

/** `1` to `4` dot-separated numbers, then an optional prerelease label after the first `-`: the loose form of a version NuGet refuses. */
const NUMERIC_VERSION = /^(\d+(?:\.\d+){0,3})(?:-(.*))?$/s;

/**
 * The NuGet identity form of a version, lowercased: NuGet.Versioning's `ToNormalizedString().ToLowerInvariant()`,
 * so `+build` metadata removed, white space around the version and around its numbers trimmed, each numeric part
 * without leading zeros, at least three parts, a zero fourth part dropped, the prerelease label kept as is
 * (`01.0` → `1.0.0`, `1.0.0.0` → `1.0.0`, `3.1.0-RC.1+sha.5` → `3.1.0-rc.1`, ` 1.0 ` → `1.0.0`).
 *
 * A version NuGet refuses gets the loose rule the project has always applied: everything from the first `+` removed;
 * when what is left is 1–4 numbers (of any size) with an optional `-label`, the numbers normalized as above; then
 * lowercased (`1.0.0-01` → `1.0.0-01`, `01.0-Be_ta` → `1.0.0-be_ta`, `2147483648.0` → `2147483648.0.0`). Should NuGet
 * read that (a version refused only for its build metadata, `1.0.0+a+b`, or white space it trims, ` 1.0+é`), the
 * result is NuGet's form of it, so that the identity of an identity is itself. nuget.org never publishes a version
 * NuGet refuses, but a key must still be derived, and deterministically, from whatever the page item says rather
 * than make the whole commit fail.
 *
 * @throws {@link KeySegmentError} when nothing is left (an empty version, or only `+build`).
 */
export function normalizeVersion(version: string): string {
  if (typeof version !== 'string') throw new KeySegmentError(version, 'version must be a string');
  const normalized = comparableVersion(version);
  if (normalized === '') throw new KeySegmentError(version, 'empty version');
  return normalized;
}

/**
 * The rules of {@link normalizeVersion} without its refusal of an empty result: the form two versions are
 * compared in (a delete's non-normalized `1.0` matches its page item's `1.0.0`). The one set of NuGet
 * version rules; duplicate detection and key segments agree because both use it.
 */
export function comparableVersion(version: string): string {
  return versionIdentity(version).identity;
}

/** A version's identity ({@link comparableVersion}) and, when NuGet reads it, NuGet's parts of it (labels lowercased). */
export interface VersionIdentity {
  readonly identity: string;
  readonly parsed: NuGetVersionParts | undefined;
}

/**
 * Identities of recent versions: a sort compares each version some log2(n) times, and a package's versions are
 * compared again at each of its commits. Cleared when full, as NuGet.Versioning's own parse cache is.
 */
const recentIdentities = new Map<string, VersionIdentity>();
const RECENT_IDENTITIES = 4_096;

/** {@link comparableVersion} with the parts NuGet reads in it, for an order that needs both without parsing twice. */
export function versionIdentity(version: string): VersionIdentity {
  const known = recentIdentities.get(version);
  if (known) return known;
  const loose = looseIdentity(version);
  const parsed = parseNuGetVersion(loose);
  const identity: VersionIdentity = { identity: parsed ? normalizedNuGetVersion(parsed).toLowerCase() : loose, parsed };
  if (recentIdentities.size >= RECENT_IDENTITIES) recentIdentities.clear();
  recentIdentities.set(version, identity);
  return identity;
}

/** The loose rule of {@link normalizeVersion}: build metadata removed, 1–4 numbers normalized as text, lowercased. */
function looseIdentity(version: string): string {
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
  return normalized.toLowerCase();
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

// ---------------------------------------------------------------------------------------------
// Bounds: ids and versions every store can hold
// ---------------------------------------------------------------------------------------------

/** S3 keys are at most 1,024 bytes of UTF-8; every key written stays below that. */
export const MAX_KEY_BYTES = 1_023;
/** Longest key prefix (`SNAPSHOT_PREFIX`, `--prefix`), in UTF-8 bytes. */
export const MAX_PREFIX_BYTES = 64;
/** The longest key's bytes besides prefix, `{id}` and `{version}`: `quarantine/` + commit key + `/` + `/` + `.json`. */
const KEY_OVERHEAD_BYTES = 'quarantine/'.length + 12 + 2 + '.json'.length;
/**
 * Most bytes of the `{id}` and `{version}` segments together, so that with any allowed prefix every
 * key stays within {@link MAX_KEY_BYTES} (1,023 − 64 − 30 = 929): the one bound on an identity in S3.
 * No length in characters is enforced: NuGet's client allows ids of 100 characters, nuget.org's database
 * holds 128 (NuGet.Services.Entities `Constants.MaxPackageIdLength`), other catalog writers may differ
 * again, so every identity a key can hold is stored. An ASCII id of up to 900 characters fits with any
 * version nuget.org publishes (64 characters at most); an id of 3-byte characters, 9 bytes each once
 * encoded, up to about 100.
 */
export const MAX_IDENTITY_SEGMENT_BYTES = MAX_KEY_BYTES - MAX_PREFIX_BYTES - KEY_OVERHEAD_BYTES;
/** Longest file name on ext4, XFS, APFS and NTFS (bytes, or UTF-16 units): one key segment of a local folder. */
export const MAX_FILE_NAME_BYTES = 255;

/** Most characters {@link normalizeVersion} adds: `1` → `1.0.0`. */
const NORMALIZATION_GROWTH = 4;

/**
 * An upper bound of the bytes of `encodeKeySegment(s.toLowerCase())`: an ASCII character is 1 byte when it stays
 * literal (upper-case letters are lowercased first) and 3 when encoded; any other UTF-16 unit is at most 9
 * (3 UTF-8 bytes, or half of a 4-byte pair; `İ`, whose lower case is two units, is 7).
 */
function encodedBytesAtMost(s: string): number {
  let bytes = 0;
  for (let i = 0; i < s.length; i++) {
    const unit = s.charCodeAt(i);
    bytes += unit >= 0x80 ? 9 : isSafe(unit) || (unit >= 0x41 && unit <= 0x5a) ? 1 : 3;
  }
  return bytes;
}

/**
 * Why the package `id` + `version` cannot become a key, or `undefined` when it can: the version leaves
 * something to store (`+build` alone does not), the two encoded segments fit
 * {@link MAX_IDENTITY_SEGMENT_BYTES} (S3's 1,024-byte keys), and, when a store names one, each segment
 * (`{version}` with its `.json`) fits `maxSegmentBytes` (a local folder's 255-byte file names). Lengths in
 * characters are not a bound: only what a store cannot hold is refused, naming the bound.
 */
export function identityKeyProblem(id: string, version: string, maxSegmentBytes = Infinity): string | undefined {
  // Nearly every item is far inside the bounds: an upper bound, without building the segments, settles it.
  if (version !== '' && !version.startsWith('+')) {
    const idAtMost = encodedBytesAtMost(id);
    const versionAtMost = encodedBytesAtMost(version) + NORMALIZATION_GROWTH;
    if (
      idAtMost + versionAtMost <= MAX_IDENTITY_SEGMENT_BYTES &&
      Math.max(idAtMost, versionAtMost + '.json'.length) <= maxSegmentBytes
    ) {
      return undefined;
    }
  }
  let idBytes: number;
  let versionBytes: number;
  try {
    idBytes = idSegment(id).length;
    versionBytes = versionSegment(version).length;
  } catch (error) {
    if (error instanceof KeySegmentError) return error.message;
    throw error;
  }
  if (idBytes + versionBytes > MAX_IDENTITY_SEGMENT_BYTES) {
    return (
      `its key segments {id} and {version} encode to ${idBytes} + ${versionBytes} bytes; ` +
      `at most ${MAX_IDENTITY_SEGMENT_BYTES} keep every key below ${MAX_KEY_BYTES + 1} bytes (S3's bound on a key, with a prefix of up to ${MAX_PREFIX_BYTES})`
    );
  }
  const longest = Math.max(idBytes, versionBytes + '.json'.length);
  if (longest > maxSegmentBytes) {
    return `its key segment ${idBytes >= versionBytes + 5 ? '{id}' : '{version}.json'} encodes to ${longest} bytes; this store holds at most ${maxSegmentBytes} bytes per segment (a file name)`;
  }
  return undefined;
}
