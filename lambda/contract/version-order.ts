/**
 * The order of package versions: NuGet.Versioning's `VersionComparer.Default` (SemVer 2.0.0 precedence as NuGet
 * applies it, nuget-version.ts), over versions in their identity form ({@link comparableVersion} of identity.ts:
 * normalized and lowercased, so prerelease labels compare case-insensitively, as NuGet compares them).
 */
import { versionIdentity } from './identity.js';
import { compareNuGetVersions } from './nuget-version.js';

const ordinal = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Compares two versions as NuGet does (up to four numeric parts, a missing one is 0; a release after its
 * prereleases; prerelease labels numeric < alphanumeric, numeric by value when they fit a 32-bit int (a sign
 * allowed: `-1` < `0`), otherwise as text, text case-insensitively; fewer labels first when all shared ones are
 * equal). Build metadata is ignored.
 *
 * The order is a function of the identity form alone, total, and refines NuGet's: versions NuGet holds equal with
 * different identities (`1.0.0-a.0`, `1.0.0-a.-0`) are ordered ordinally by identity, so a sort is deterministic. An
 * identity NuGet cannot parse (that of `1.0.0-01`, `2147483648.0.0`, `1.0.0-be_ta`) sorts after every one it can,
 * ordinally among themselves. A version NuGet refuses only for what its identity drops (`1.0.0+a+b`, whose
 * metadata NuGet refuses) sorts as its identity (`1.0.0`).
 */
export function compareVersions(left: string, right: string): number {
  const { identity: a, parsed: pa } = versionIdentity(left);
  const { identity: b, parsed: pb } = versionIdentity(right);
  if (pa === undefined || pb === undefined) {
    if (pa !== pb) return pa === undefined ? 1 : -1;
    return ordinal(a, b);
  }
  return compareNuGetVersions(pa, pb) || ordinal(a, b);
}
