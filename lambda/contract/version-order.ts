/**
 * The order of package versions: SemVer 2.0.0 precedence as NuGet applies it (NuGet.Versioning's
 * `VersionComparer.Default`), over versions already in their identity form ({@link comparableVersion} of
 * identity.ts, the one owner of the NuGet version rules: normalized and lowercased, so prerelease labels compare
 * case-insensitively, as NuGet compares them).
 */
import { comparableVersion, NUMERIC_VERSION } from './identity.js';

const NUMERIC_IDENTIFIER = /^\d+$/;

interface ParsedVersion {
  /** Four numeric parts without leading zeros, as text: any length stays exact. */
  readonly parts: readonly string[];
  /** The prerelease identifiers; empty for a release. */
  readonly prerelease: readonly string[];
}

function parse(version: string): ParsedVersion | undefined {
  const match = NUMERIC_VERSION.exec(version);
  if (!match) return undefined;
  const parts = match[1]!.split('.').map((part) => part.replace(/^0+(?=\d)/, ''));
  while (parts.length < 4) parts.push('0');
  return { parts, prerelease: match[2] === undefined ? [] : match[2].split('.') };
}

/** Two whole numbers without leading zeros, compared as numbers. */
function compareNumbers(a: string, b: string): number {
  return a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0;
}

function compareIdentifiers(a: string, b: string): number {
  const aNumeric = NUMERIC_IDENTIFIER.test(a);
  const bNumeric = NUMERIC_IDENTIFIER.test(b);
  if (aNumeric && bNumeric) return compareNumbers(a.replace(/^0+(?=\d)/, ''), b.replace(/^0+(?=\d)/, ''));
  if (aNumeric !== bNumeric) return aNumeric ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Compares two versions by SemVer 2.0.0 precedence (NuGet's: up to four numeric parts, a missing one is 0; a
 * release after its prereleases; prerelease identifiers numeric < alphanumeric, numeric by value, alphanumeric
 * ordinally; fewer identifiers first when all shared ones are equal). Build metadata is ignored. A version NuGet
 * cannot parse sorts after every one it can, ordinally among themselves; equal precedence is broken ordinally
 * (`1.0.0-01` before `1.0.0-1`), so the order is total and a sort is deterministic.
 */
export function compareVersions(left: string, right: string): number {
  const a = comparableVersion(left);
  const b = comparableVersion(right);
  const pa = parse(a);
  const pb = parse(b);
  if (pa === undefined || pb === undefined) {
    if (pa !== pb) return pa === undefined ? 1 : -1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  for (let i = 0; i < 4; i++) {
    const order = compareNumbers(pa.parts[i]!, pb.parts[i]!);
    if (order !== 0) return order;
  }
  if (pa.prerelease.length === 0 || pb.prerelease.length === 0) {
    const order = (pa.prerelease.length === 0 ? 1 : 0) - (pb.prerelease.length === 0 ? 1 : 0);
    if (order !== 0) return order;
  }
  for (let i = 0; i < Math.min(pa.prerelease.length, pb.prerelease.length); i++) {
    const order = compareIdentifiers(pa.prerelease[i]!, pb.prerelease[i]!);
    if (order !== 0) return order;
  }
  const order = pa.prerelease.length - pb.prerelease.length;
  if (order !== 0) return order;
  return a < b ? -1 : a > b ? 1 : 0;
}
