/**
 * Real package files for a generated catalog: each PackageDetails leaf gets a `.nupkg` (testkit/nupkg.ts), so its
 * body gives the file's true `packageHash` and `packageSize` and the catalog replica's flat container serves it.
 *
 * @example
 * const catalog = generateCatalog({ commits: 20 });
 * attachPackages(catalog, { dependencies: (leaf) => (leaf.id === 'A' ? [{ id: 'B', range: '[1.0.0, )' }] : []) });
 * const replica = await CatalogReplica.start({ catalog });
 * // replica.packages serves them; replica.packages.withhold(...) / corrupt(...) on demand
 */
import type { GeneratedCatalog, GeneratedLeaf } from './catalog-generator.js';
import type { GeneratedPackage } from './generated-commit.js';
import { buildNupkg, DEFAULT_TARGET_FRAMEWORK, type NupkgDependency, type NupkgSpec } from './nupkg.js';
import { packageKey } from './package-identities.js';

/** How {@link attachPackages} makes each package. */
export interface PackageOptions {
  /** The dependencies of a details leaf's package; default none. */
  dependencies?: (leaf: GeneratedLeaf) => readonly NupkgDependency[];
  /** Bytes of filler in a leaf's package, for sized packages; default 0 (about 1 KB in all). */
  fillerBytes?: (leaf: GeneratedLeaf) => number;
  /** The framework of every package; default `net10.0`. */
  targetFramework?: string;
}

/** A package file for `spec`, to put on a details leaf (`leaf.package`). */
export function generatedPackage(spec: NupkgSpec): GeneratedPackage {
  return {
    bytes: buildNupkg(spec),
    targetFramework: spec.targetFramework ?? DEFAULT_TARGET_FRAMEWORK,
    dependencies: spec.dependencies ?? [],
  };
}

/**
 * Gives every PackageDetails leaf of `catalog` that has none a package file, in commit order: a leaf that lists,
 * unlists or re-flows a package still held gets the same file as before (a package's bytes never change); one that
 * brings back a deleted package gets a file made anew. Call it again after `appendCommits` for the new leaves.
 */
export function attachPackages(catalog: GeneratedCatalog, options: PackageOptions = {}): void {
  const held = new Map<string, GeneratedPackage>();
  for (const commit of catalog.commits) {
    for (const leaf of commit.leaves) {
      const key = packageKey(leaf.id, leaf.version);
      if (leaf.type === 'PackageDelete') {
        held.delete(key);
        continue;
      }
      leaf.package ??=
        held.get(key) ??
        generatedPackage({
          id: leaf.id,
          version: leaf.version,
          dependencies: options.dependencies?.(leaf) ?? [],
          fillerBytes: options.fillerBytes?.(leaf) ?? 0,
          targetFramework: options.targetFramework ?? DEFAULT_TARGET_FRAMEWORK,
        });
      held.set(key, leaf.package);
    }
  }
}
