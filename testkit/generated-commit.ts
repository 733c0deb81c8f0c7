/**
 * The commits and leaves of a generated catalog: the shape shared by the generator (catalog-generator.ts)
 * and the leaf bodies it renders (leaf-body.ts), in a file of its own so neither imports the other for it.
 */
import type { NupkgDependency } from './nupkg.js';

/** The two leaf types of the catalog. */
export type LeafType = 'PackageDetails' | 'PackageDelete';

/** One leaf of a generated catalog. */
export interface GeneratedLeaf {
  /** The package id as the leaf and page item give it (mixed case). */
  id: string;
  /** The version as the page item gives it (`nuget:version`): full, with any build metadata. */
  version: string;
  type: LeafType;
  /** URL path of the leaf, e.g. `/v3/catalog0/data/2017.10.31.23.30.32/util.biz.0.0.4-preview.json`. */
  path: string;
  /** PackageDetails only: whether the package is listed (`published` is 1900 when not). */
  listed?: boolean;
  /** When set, served byte for byte instead of the generated body. */
  body?: string;
  /** When true, the body (generated or {@link body}) is served after a UTF-8 byte-order mark (EF BB BF). */
  bom?: boolean;
  /**
   * PackageDetails only: the package file. Its leaf then gives its true `packageHash` and `packageSize` and its
   * dependencies, and the replica's flat container serves it (testkit/catalog-packages.ts, flat-container.ts).
   */
  package?: GeneratedPackage;
  /** PackageDetails only: the leaf's `deprecation`, as nuget.org writes it. */
  deprecation?: GeneratedDeprecation;
  /** PackageDetails only: the leaf's `vulnerabilities`, as nuget.org writes them. */
  vulnerabilities?: readonly GeneratedVulnerability[];
}

/** A details leaf's package file (testkit/nupkg.ts). */
export interface GeneratedPackage {
  /** The `.nupkg` bytes. */
  readonly bytes: Buffer;
  /** The framework of its one dependency group. */
  readonly targetFramework: string;
  /** Its nuspec's dependencies, which the leaf's `dependencyGroups` repeat. */
  readonly dependencies: readonly NupkgDependency[];
}

/** A leaf's deprecation: `reasons` such as `Legacy`, `CriticalBugs`, `Other`. */
export interface GeneratedDeprecation {
  readonly reasons: readonly string[];
  readonly message?: string;
  readonly alternatePackage?: { readonly id: string; readonly range: string };
}

/** One of a leaf's vulnerabilities: `severity` `0` (low) to `3` (critical), a string as nuget.org writes it. */
export interface GeneratedVulnerability {
  readonly advisoryUrl: string;
  readonly severity: '0' | '1' | '2' | '3';
}

/** One commit: leaves sharing a commit id and timestamp. */
export interface GeneratedCommit {
  /** A lower-case UUID. */
  commitId: string;
  /** The commit timestamp exactly as served (up to seven fractional digits). */
  timestamp: string;
  leaves: GeneratedLeaf[];
}
