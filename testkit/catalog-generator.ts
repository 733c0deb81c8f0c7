/**
 * Deterministic, in-memory NuGet V3 catalogs for tests.
 *
 * A generated catalog is only commits and their leaves; {@link CatalogReplica} turns it into an
 * index, pages and leaf documents. Everything follows from the seed, so a failing test can be
 * replayed exactly, and the traps of the real catalog can be dialled in: several commits inside
 * one millisecond, timestamps served with fewer than seven fractional digits, SemVer 2.0.0
 * versions, deletes (some with a non-normalized version), unlisted packages, mixed-case ids, leaves
 * that begin with a UTF-8 byte-order mark.
 */
import { formatTicks, parseTicks, TICKS_PER_MILLISECOND, TICKS_PER_SECOND } from './catalog-time.js';
import { renderLeafBody } from './leaf-body.js';
import { firstVersion, leafPath, newPackageId, nextVersion, packageKey } from './package-identities.js';
import { PackageRegistry } from './package-registry.js';
import { mulberry32, type Prng } from './prng.js';
import type { GeneratedCommit, GeneratedLeaf } from './generated-commit.js';

export type { GeneratedCommit, GeneratedLeaf, LeafType } from './generated-commit.js';

/** Options of {@link generateCatalog}. */
export interface CatalogOptions {
  /** How many commits. */
  commits: number;
  /** PRNG seed; default 1. */
  seed?: number;
  /** Inclusive range of leaves per commit; default [1, 4]. */
  leavesPerCommit?: readonly [number, number];
  /** The first commit's timestamp, served verbatim; default `2017-10-31T23:30:32.4197849Z`. */
  start?: string;
  /** How many pairs of consecutive commits fall inside one millisecond; default 0. */
  sameMillisecondPairs?: number;
  /** Share of leaves that are PackageDelete; default 0.1. */
  deleteRatio?: number;
  /** Serve some timestamps with fewer than seven fractional digits, as nuget.org does; default false. */
  trimTrailingZeros?: boolean;
  /** Share of new versions that are SemVer 2.0.0 (upper-case prerelease, `+build`); default 0. */
  semver2Ratio?: number;
  /** Share of deletes of an `X.Y.0` version that give it as `X.Y` (non-normalized); default 0. */
  nonNormalizedDeleteRatio?: number;
  /**
   * Share of leaves served with a UTF-8 byte-order mark before their JSON, as nuget.org's writer puts on some
   * (thirteen of the NuGetGallery fixture leaves); default 0 (and then the PRNG draws nothing for it, so every catalog
   * generated before the option existed is the same).
   */
  bomRatio?: number;
}

/** {@link CatalogOptions} with every default filled in. */
export type ResolvedCatalogOptions = Required<CatalogOptions>;

/** A generated catalog. Commits are in strictly increasing time. */
export interface GeneratedCatalog {
  commits: GeneratedCommit[];
  /** The options it was generated with; {@link appendCommits} grows it the same way. */
  options?: ResolvedCatalogOptions;
}

/** Defaults of {@link CatalogOptions}. */
export const DEFAULT_CATALOG_OPTIONS: Omit<ResolvedCatalogOptions, 'commits'> = {
  seed: 1,
  leavesPerCommit: [1, 4],
  start: '2017-10-31T23:30:32.4197849Z',
  sameMillisecondPairs: 0,
  deleteRatio: 0.1,
  trimTrailingZeros: false,
  semver2Ratio: 0,
  nonNormalizedDeleteRatio: 0,
  bomRatio: 0,
};

/** Share of re-pushes and new versions that are unlisted. */
const UNLIST_RATIO = 0.05;

/**
 * Generates a catalog of `options.commits` commits.
 *
 * @throws when the options cannot be met (e.g. more same-millisecond pairs than commits allow).
 */
export function generateCatalog(options: CatalogOptions): GeneratedCatalog {
  const resolved: ResolvedCatalogOptions = { ...DEFAULT_CATALOG_OPTIONS, ...options };
  const [min, max] = resolved.leavesPerCommit;
  if (!(min >= 1 && max >= min))
    throw new Error(`leavesPerCommit must be [min >= 1, max >= min], got [${min}, ${max}]`);
  parseTicks(resolved.start);
  const catalog: GeneratedCatalog = { commits: [], options: resolved };
  grow(catalog, resolved.commits, resolved.seed, resolved.sameMillisecondPairs);
  return catalog;
}

/**
 * Grows a catalog in place by `n` commits after its last one, generated like the rest with a new
 * seed (same-millisecond pairs in the same proportion). A replica serving the catalog serves the
 * new commits from its next request on.
 *
 * @returns the new commits.
 */
export function appendCommits(catalog: GeneratedCatalog, n: number, seed: number): GeneratedCommit[] {
  const options = catalog.options ?? { ...DEFAULT_CATALOG_OPTIONS, commits: catalog.commits.length };
  const ratio = options.commits > 0 ? options.sameMillisecondPairs / options.commits : 0;
  return grow(catalog, n, seed, Math.min(Math.floor(n / 2), Math.round(ratio * n)));
}

/**
 * The exact body served for a leaf, with absolute URLs on `origin` (e.g. `http://127.0.0.1:1234`).
 *
 * @throws when the leaf is not in the catalog.
 */
export function leafBody(catalog: GeneratedCatalog, leaf: GeneratedLeaf, origin: string): string {
  const commit = catalog.commits.find((c) => c.leaves.includes(leaf));
  if (!commit) throw new Error(`leaf ${leaf.path} is not in this catalog`);
  return renderLeafBody(commit, leaf, origin);
}

function grow(catalog: GeneratedCatalog, n: number, seed: number, pairs: number): GeneratedCommit[] {
  const options = catalog.options ?? { ...DEFAULT_CATALOG_OPTIONS, commits: catalog.commits.length };
  const prng = mulberry32(seed);
  const registry = new PackageRegistry();
  const usedPaths = new Set<string>();
  for (const commit of catalog.commits) {
    for (const leaf of commit.leaves) {
      usedPaths.add(leaf.path);
      if (leaf.type === 'PackageDelete') registry.recordDelete(leaf.id, leaf.version);
      else registry.recordDetails(leaf.id, leaf.version, leaf.listed ?? true);
    }
  }
  const last = catalog.commits.at(-1);
  const times = commitTimes(prng, n, pairs, options, last ? parseTicks(last.timestamp) : undefined);
  const added: GeneratedCommit[] = [];
  for (const { ticks, text } of times) {
    const commit: GeneratedCommit = { commitId: prng.uuid(), timestamp: text, leaves: [] };
    const touched = new Set<string>();
    const count = prng.int(options.leavesPerCommit[0], options.leavesPerCommit[1]);
    for (let i = 0; i < count; i++) {
      const leaf = chooseLeaf(prng, registry, options, ticks, touched, usedPaths);
      if (options.bomRatio > 0 && prng.chance(options.bomRatio)) leaf.bom = true;
      touched.add(packageKey(leaf.id, leaf.version));
      usedPaths.add(leaf.path);
      commit.leaves.push(leaf);
    }
    catalog.commits.push(commit);
    added.push(commit);
  }
  return added;
}

interface CommitTime {
  ticks: bigint;
  text: string;
}

/** Strictly increasing commit times, `pairs` disjoint pairs of them inside one millisecond. */
function commitTimes(
  prng: Prng,
  n: number,
  pairs: number,
  options: ResolvedCatalogOptions,
  previous: bigint | undefined,
): CommitTime[] {
  // Lay out n commits as singles and `pairs` doubles in random order: the pair starts.
  const units = n - pairs;
  if (pairs < 0 || units < pairs) throw new Error(`cannot fit ${pairs} same-millisecond pairs in ${n} commits`);
  const starts = new Set<number>();
  let position = 0;
  for (const isPair of prng.shuffle(Array.from({ length: units }, (_, k) => k < pairs))) {
    if (isPair) starts.add(position);
    position += isPair ? 2 : 1;
  }
  const out: CommitTime[] = [];
  let last = previous;
  for (let i = 0; i < n; i++) {
    const pairEnd = starts.has(i - 1);
    let ticks: bigint;
    let text: string | undefined;
    if (last === undefined) {
      ticks = parseTicks(options.start);
      text = options.start;
    } else if (pairEnd) {
      // Same millisecond as the previous commit: only the 100-ns digits differ.
      const room = TICKS_PER_MILLISECOND - 1n - (last % TICKS_PER_MILLISECOND);
      ticks = last + BigInt(prng.int(1, Number(room)));
    } else {
      ticks = last + BigInt(prng.int(1, 300)) * TICKS_PER_SECOND + BigInt(prng.int(0, 9_999_999));
      if (options.trimTrailingZeros && !starts.has(i) && prng.chance(0.3)) {
        // Keep 6 digits most often (`…02.788239Z`), sometimes fewer, sometimes whole seconds.
        const kept = prng.pick([6, 6, 6, 5, 3, 0]);
        const unit = 10n ** BigInt(7 - kept);
        const rounded = ticks - (ticks % unit);
        if (rounded > last) ticks = rounded;
      }
    }
    if (starts.has(i) && ticks % TICKS_PER_MILLISECOND === TICKS_PER_MILLISECOND - 1n) {
      if (last === undefined || ticks - 1n <= last) {
        throw new Error(`commit ${i} at ${options.start} has no room for a second commit in its millisecond`);
      }
      ticks -= 1n;
      text = undefined;
    }
    out.push({ ticks, text: text ?? formatTicks(ticks, options.trimTrailingZeros) });
    last = ticks;
  }
  return out;
}

/** One leaf for a commit at `ticks`: never an id + version or a path already used there. */
function chooseLeaf(
  prng: Prng,
  registry: PackageRegistry,
  options: ResolvedCatalogOptions,
  ticks: bigint,
  touched: ReadonlySet<string>,
  usedPaths: ReadonlySet<string>,
): GeneratedLeaf {
  for (let attempt = 0; attempt < 10; attempt++) {
    const proposal = propose(prng, registry, options);
    if (!proposal) continue;
    const path = leafPath(ticks, proposal.id, proposal.version);
    if (touched.has(packageKey(proposal.id, proposal.version)) || usedPaths.has(path)) continue;
    return record(registry, { ...proposal, path });
  }
  // A new package id is always free.
  const id = newId(prng, registry);
  const version = firstVersion(prng, prng.chance(options.semver2Ratio));
  return record(registry, { id, version, type: 'PackageDetails', listed: true, path: leafPath(ticks, id, version) });
}

function propose(
  prng: Prng,
  registry: PackageRegistry,
  options: ResolvedCatalogOptions,
): Omit<GeneratedLeaf, 'path'> | undefined {
  if (prng.chance(options.deleteRatio)) {
    const victim = registry.pickLive(prng);
    if (!victim) return undefined;
    let version = victim.version;
    if (/^\d+\.\d+\.0$/.test(version) && prng.chance(options.nonNormalizedDeleteRatio)) {
      version = version.slice(0, -2);
    }
    return { id: victim.id, version, type: 'PackageDelete' };
  }
  const roll = prng.next();
  if (roll < 0.2) {
    // A re-flow, listing or unlisting of an existing version: the same version string again.
    const again = registry.pickLive(prng);
    if (!again) return undefined;
    const listed = prng.chance(0.5) ? !again.listed : again.listed;
    return { id: again.id, version: again.version, type: 'PackageDetails', listed };
  }
  if (roll < 0.23) {
    // Rare: a deleted version pushed again.
    const back = registry.pickDeleted(prng);
    if (!back) return undefined;
    return { id: back.id, version: back.version, type: 'PackageDetails', listed: true };
  }
  const listed = !prng.chance(UNLIST_RATIO);
  const semver2 = prng.chance(options.semver2Ratio);
  const existing = roll < 0.65 ? registry.pickPackage(prng) : undefined;
  if (existing) {
    const version = nextVersion(prng, existing.lastVersion, semver2);
    if (registry.get(existing.id, version)) return undefined;
    return { id: existing.id, version, type: 'PackageDetails', listed };
  }
  return { id: newId(prng, registry), version: firstVersion(prng, semver2), type: 'PackageDetails', listed };
}

function newId(prng: Prng, registry: PackageRegistry): string {
  let serial = registry.packageCount + 1;
  let id = newPackageId(prng, serial);
  while (registry.hasId(id)) id = newPackageId(prng, ++serial);
  return id;
}

function record(registry: PackageRegistry, leaf: GeneratedLeaf): GeneratedLeaf {
  if (leaf.type === 'PackageDelete') {
    registry.recordDelete(leaf.id, leaf.version);
    return { id: leaf.id, version: leaf.version, type: leaf.type, path: leaf.path };
  }
  registry.recordDetails(leaf.id, leaf.version, leaf.listed ?? true);
  return { id: leaf.id, version: leaf.version, type: leaf.type, path: leaf.path, listed: leaf.listed ?? true };
}
