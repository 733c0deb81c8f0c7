/**
 * NuGet.Versioning's own rules, read from its source (NuGet.Client: `NuGetVersion.TryParse`,
 * `SemanticVersion.ParseSections`/`IsValidPart`, `VersionFormatter`'s `N` format, `VersionComparer.Default`) and held
 * to NuGet.Versioning 8.0.0 itself by the interoperability suite's differential (test/interop/version-rules.test.ts):
 * which strings are versions, their normalized form, and their precedence. identity.ts and version-order.ts build the
 * project's identity keys and order on it.
 */

/** A version as NuGet.Versioning parses it. */
export interface NuGetVersionParts {
  /** Major, minor, patch and revision (a missing part is 0), each 0 to 2,147,483,647. */
  readonly numbers: readonly [number, number, number, number];
  /** The prerelease labels as written (case kept); empty for a release. */
  readonly labels: readonly string[];
  /** The build metadata after `+`, or `undefined` when there is none. */
  readonly metadata: string | undefined;
}

const INT32_MAX = 2_147_483_647;

/**
 * .NET's `char.IsWhiteSpace`, which `string.Trim()` and NuGet's parser use: U+0009–U+000D, U+0085 and the Unicode
 * separators (Zs, Zl, Zp). Not JavaScript's `trim()`, which also removes U+FEFF and keeps U+0085.
 */
function isDotNetWhiteSpace(code: number): boolean {
  return (
    (code >= 0x09 && code <= 0x0d) ||
    code === 0x20 ||
    code === 0x85 ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000
  );
}

const isDigit = (code: number): boolean => code >= 0x30 && code <= 0x39;

/** .NET's `string.Trim()`. */
function trimDotNet(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isDotNetWhiteSpace(value.charCodeAt(start))) start++;
  while (end > start && isDotNetWhiteSpace(value.charCodeAt(end - 1))) end--;
  return value.slice(start, end);
}

interface Sections {
  versionString: string | undefined;
  labels: string[] | undefined;
  metadata: string | undefined;
}

/**
 * `SemanticVersion.ParseSections`, quirks included: the numeric part ends at the first `-` or `+`; the labels at the
 * next `+`; a `-` or `+` in last place stays in the part before it (so `1.0.0-` and `1.0.0+` fail as numbers).
 */
function parseSections(value: string): Sections {
  const out: Sections = { versionString: undefined, labels: undefined, metadata: undefined };
  let dashPos = -1;
  let plusPos = -1;
  for (let i = 0; i < value.length; i++) {
    const end = i === value.length - 1;
    const c = value[i];
    if (dashPos < 0) {
      if (end || c === '-' || c === '+') {
        out.versionString = value.slice(0, i + (end ? 1 : 0));
        dashPos = i;
        if (c === '+') plusPos = i;
      }
    } else if (plusPos < 0) {
      if (end || c === '+') {
        out.labels = value.slice(dashPos + 1, i + (end ? 1 : 0)).split('.');
        plusPos = i;
      }
    } else if (end) {
      out.metadata = value.slice(plusPos + 1, i + 1);
    }
  }
  return out;
}

/**
 * `NuGetVersion.TryGetNormalizedVersion`: one to four dot-separated numbers of at most 2,147,483,647 (leading zeros
 * allowed), each with optional white space around it, no empty part and no trailing dot.
 */
function parseNumbers(text: string): [number, number, number, number] | undefined {
  let onlyWhiteSpace = true;
  for (let i = 0; i < text.length && onlyWhiteSpace; i++) onlyWhiteSpace = isDotNetWhiteSpace(text.charCodeAt(i));
  if (onlyWhiteSpace) return undefined;
  const numbers: [number, number, number, number] = [0, 0, 0, 0];
  let position = 0;
  for (let part = 0; part < 4; part++) {
    if (position === text.length) continue; // a missing part is 0
    let i = position;
    while (i < text.length && isDotNetWhiteSpace(text.charCodeAt(i))) i++;
    if (i < text.length && !isDigit(text.charCodeAt(i))) return undefined;
    let value = 0;
    let digits = false;
    let done = false;
    for (; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (isDigit(code)) {
        digits = true;
        value = value * 10 + (code - 0x30);
        if (value > INT32_MAX) return undefined;
      } else if (code === 0x2e) {
        i++;
        if (i === text.length) return undefined; // a trailing dot
        done = true;
        break;
      } else if (isDotNetWhiteSpace(code)) {
        break;
      } else {
        return undefined;
      }
    }
    if (!digits) return undefined;
    if (i === text.length) done = true;
    if (!done) {
      // White space after the number, then a dot or the end.
      for (; i < text.length; i++) {
        const code = text.charCodeAt(i);
        if (isDotNetWhiteSpace(code)) continue;
        if (code !== 0x2e) return undefined;
        i++;
        if (i === text.length) return undefined;
        break;
      }
    }
    numbers[part] = value;
    position = i;
  }
  return position === text.length ? numbers : undefined;
}

/** `SemanticVersion.IsValidPart`: non-empty, `[0-9A-Za-z-]` only, and (for labels) no leading zero in a number. */
function isValidPart(part: string, allowLeadingZeros: boolean): boolean {
  if (part.length === 0) return false;
  if (!allowLeadingZeros && part.length > 1 && part[0] === '0' && /^\d+$/.test(part)) return false;
  return /^[0-9A-Za-z-]+$/.test(part);
}

/**
 * `NuGetVersion.TryParse`: the version NuGet reads in `value`, or `undefined` where NuGet refuses it. The value is
 * trimmed of white space first (.NET's, see {@link isDotNetWhiteSpace}); labels and metadata are dot-separated
 * non-empty parts of `[0-9A-Za-z-]`, a label that is a number has no leading zero.
 */
export function parseNuGetVersion(value: string): NuGetVersionParts | undefined {
  const sections = parseSections(trimDotNet(value));
  if (sections.versionString === undefined || sections.versionString === '') return undefined;
  const numbers = parseNumbers(sections.versionString);
  if (numbers === undefined) return undefined;
  if (sections.labels !== undefined && !sections.labels.every((label) => isValidPart(label, false))) return undefined;
  if (sections.metadata !== undefined && !sections.metadata.split('.').every((part) => isValidPart(part, true)))
    return undefined;
  return { numbers, labels: sections.labels ?? [], metadata: sections.metadata };
}

/**
 * `ToNormalizedString()`: three numbers, a fourth only when it is not 0, then `-` and the labels as written; no
 * build metadata.
 */
export function normalizedNuGetVersion(version: NuGetVersionParts): string {
  const [major, minor, patch, revision] = version.numbers;
  const numbers = revision > 0 ? `${major}.${minor}.${patch}.${revision}` : `${major}.${minor}.${patch}`;
  return version.labels.length === 0 ? numbers : `${numbers}-${version.labels.join('.')}`;
}

/**
 * A label's value where NuGet compares it as a number: `int.TryParse` succeeds, so an optional `-` sign, digits, and
 * within a 32-bit int. Beyond that a label of digits is compared as text, as NuGet does.
 */
function numericLabel(label: string): number | undefined {
  const match = /^(-?)0*(\d+)$/.exec(label);
  if (!match || match[2]!.length > 10) return undefined;
  const value = match[1] === '-' ? -Number(match[2]) : Number(match[2]);
  return value >= -INT32_MAX - 1 && value <= INT32_MAX ? value : undefined;
}

/** Case-insensitive ordinal order of two labels of `[0-9A-Za-z-]` (.NET's `OrdinalIgnoreCase`). */
function compareText(a: string, b: string): number {
  const x = a.toUpperCase();
  const y = b.toUpperCase();
  return x < y ? -1 : x > y ? 1 : 0;
}

function compareLabel(a: string, b: string): number {
  const x = numericLabel(a);
  const y = numericLabel(b);
  if (x !== undefined && y !== undefined) return x - y;
  if (x !== undefined || y !== undefined) return x !== undefined ? -1 : 1;
  return compareText(a, b);
}

/**
 * `VersionComparer.Default`: the four numbers, then a prerelease before its release, then label by label (numbers
 * before text, numbers by value, text case-insensitively), fewer labels first when the shared ones are equal. Build
 * metadata is ignored. Returns 0 for versions NuGet holds equal (`1.0.0-a.0` and `1.0.0-a.-0` too).
 */
export function compareNuGetVersions(a: NuGetVersionParts, b: NuGetVersionParts): number {
  for (let i = 0; i < 4; i++) {
    const order = a.numbers[i]! - b.numbers[i]!;
    if (order !== 0) return order;
  }
  if (a.labels.length === 0 || b.labels.length === 0)
    return (a.labels.length === 0 ? 1 : 0) - (b.labels.length === 0 ? 1 : 0);
  for (let i = 0; i < Math.min(a.labels.length, b.labels.length); i++) {
    const order = compareLabel(a.labels[i]!, b.labels[i]!);
    if (order !== 0) return order;
  }
  return a.labels.length - b.labels.length;
}
