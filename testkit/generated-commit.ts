/**
 * The commits and leaves of a generated catalog: the shape shared by the generator (catalog-generator.ts)
 * and the leaf bodies it renders (leaf-body.ts), in a file of its own so neither imports the other for it.
 */

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
}

/** One commit: leaves sharing a commit id and timestamp. */
export interface GeneratedCommit {
  /** A lower-case UUID. */
  commitId: string;
  /** The commit timestamp exactly as served (up to seven fractional digits). */
  timestamp: string;
  leaves: GeneratedLeaf[];
}
