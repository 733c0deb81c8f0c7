/**
 * Package ids, versions and leaf paths for generated catalogs, shaped like nuget.org's.
 */
import { leafFolder } from './catalog-time.js';
import type { Prng } from './prng.js';

const VENDORS = ['Contoso', 'Fabrikam', 'Util', 'SourceCode', 'Northwind', 'Tailspin', 'Woodgrove', 'AdventureWorks'];
const AREAS = ['Lib', 'Biz', 'Payments', 'Clay', 'Data', 'Json', 'Core', 'Http', 'Logging', 'Testing'];
const PRERELEASE = ['preview', 'alpha', 'beta.2', 'rc.1', 'preview1-00258', 'ci.20171031'];
const SEMVER2_PRERELEASE = ['RC.1', 'Beta.2', 'Alpha.10', 'Preview.3.Final'];

/**
 * A new mixed-case package id such as `Contoso.Lib3` or `Util.Biz.Payments12`.
 *
 * @param serial makes the id unique; the caller passes a number not used before.
 */
export function newPackageId(prng: Prng, serial: number): string {
  const parts = [prng.pick(VENDORS), prng.pick(AREAS)];
  if (prng.chance(0.3)) parts.push(prng.pick(AREAS));
  return `${parts.join('.')}${serial}`;
}

/** A first version: `1.0.0`, `0.0.4-preview`, or with SemVer 2.0.0 `3.1.0-RC.1+sha.5`. */
export function firstVersion(prng: Prng, semver2: boolean): string {
  return withLabels(prng, [prng.int(0, 3), prng.int(0, 9), prng.int(0, 12)], semver2);
}

/** A version newer than `previous` (patch, minor or major bump), with fresh labels. */
export function nextVersion(prng: Prng, previous: string, semver2: boolean): string {
  const [major = 0, minor = 0, patch = 0] = coreOf(previous);
  const roll = prng.next();
  const core: [number, number, number] =
    roll < 0.7 ? [major, minor, patch + 1] : roll < 0.95 ? [major, minor + 1, 0] : [major + 1, 0, 0];
  return withLabels(prng, core, semver2);
}

function withLabels(prng: Prng, core: [number, number, number], semver2: boolean): string {
  let version = core.join('.');
  if (semver2) {
    // SemVer 2.0.0: dotted, upper-case prerelease labels and build metadata, kept as served.
    if (prng.chance(0.7)) version += `-${prng.pick(SEMVER2_PRERELEASE)}`;
    version += `+sha.${prng.bytes(3).toString('hex')}`;
  } else if (prng.chance(0.3)) {
    version += `-${prng.pick(PRERELEASE)}`;
  }
  return version;
}

function coreOf(version: string): number[] {
  return (version.split(/[-+]/)[0] ?? '').split('.').map((part) => Number.parseInt(part, 10) || 0);
}

/**
 * The NuGet identity of a version: build metadata removed, numeric parts normalized to three (a
 * zero fourth part dropped), lower-cased. `1.0` and `1.0.0+sha.1` are both `1.0.0`.
 */
export function versionIdentity(version: string): string {
  const withoutMetadata = version.split('+')[0] ?? '';
  const dash = withoutMetadata.indexOf('-');
  const core = dash < 0 ? withoutMetadata : withoutMetadata.slice(0, dash);
  const label = dash < 0 ? '' : withoutMetadata.slice(dash);
  const parts = core.split('.').map((part) => String(Number.parseInt(part, 10) || 0));
  while (parts.length < 3) parts.push('0');
  if (parts.length === 4 && parts[3] === '0') parts.pop();
  return `${parts.join('.')}${label}`.toLowerCase();
}

/** The identity of a package id + version, as a map key. */
export function packageKey(id: string, version: string): string {
  return `${id.toLowerCase()}/${versionIdentity(version)}`;
}

/**
 * The URL path of a leaf, as nuget.org builds it: the commit's second as a folder, then the
 * lower-cased id and version, without build metadata and otherwise as given (a delete of `1.0`
 * lives at `….1.0.json`, as in the NuGetGallery fixtures).
 */
export function leafPath(commitTicks: bigint, id: string, version: string): string {
  const shownVersion = (version.split('+')[0] ?? version).toLowerCase();
  return `/v3/catalog0/data/${leafFolder(commitTicks)}/${id.toLowerCase()}.${shownVersion}.json`;
}
