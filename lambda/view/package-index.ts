/**
 * The latest-state view of one package (`{prefix}packages/{id}/index.json`, contract.md "The latest view"): its
 * shape, its entries and its bytes. No I/O here; the fold that applies leaves to it is fold.ts, and equal inputs
 * give equal bytes.
 */
import { compareVersions } from '../contract/version-order.js';
import type { LeafFields } from './leaf-fields.js';

/** One version of a package as its latest leaf says. */
export interface VersionEntry {
  /** The identity form: NuGet-normalized, lowercased (the `{version}` of the leaf's key, before encoding). */
  readonly version: string;
  /** `details` (the package exists) or `delete` (a tombstone: the version was deleted). */
  readonly type: 'details' | 'delete';
  /** The object key of the latest leaf of this identity, as the commit's manifest names it. */
  readonly leaf: string;
  readonly commitKey: string;
  /** 7 fractional digits. */
  readonly commitTimeStamp: string;
  /** A details leaf set aside by quarantine: its body, so its fields, are unknown. */
  readonly quarantined?: true;
  /** Details only (and not quarantined). */
  readonly listed?: boolean;
  readonly deprecation?: Readonly<Record<string, unknown>>;
  readonly vulnerabilities?: readonly Readonly<Record<string, unknown>>[];
}

/** `packages/{id}/index.json`. */
export interface PackageIndex {
  /** The id as the package's most recent leaf spells it. */
  readonly id: string;
  /** The newest commit applied: a write of an older one is refused (the stale-writer guard). */
  readonly commitKey: string;
  readonly commitTimeStamp: string;
  /** Every version ever seen, by SemVer 2.0.0 precedence, lowest first; deleted ones as tombstones. */
  readonly versions: readonly VersionEntry[];
}

/** A leaf of one commit, reduced to what the view keeps. */
export interface ViewLeaf {
  readonly key: string;
  readonly id: string;
  readonly version: string;
  readonly type: 'PackageDetails' | 'PackageDelete';
  readonly quarantined?: true;
  /** The filter fields of a details leaf's body; absent for deletes and quarantined leaves. */
  readonly fields?: LeafFields;
}

/** The commit being applied. */
export interface ViewCommit {
  readonly commitKey: string;
  readonly commitTimeStamp: string;
}

/**
 * A package's index from its latest entry of each identity (any order): the one shape every fold gives
 * (fold.ts). `id` is the spelling of the package's most recent leaf, `commit` the newest commit applied.
 */
export function packageIndexOf(id: string, commit: ViewCommit, entries: Iterable<VersionEntry>): PackageIndex {
  const versions = [...entries].sort((a, b) => compareVersions(a.version, b.version));
  return { id, commitKey: commit.commitKey, commitTimeStamp: commit.commitTimeStamp, versions };
}

/** The entry of identity `version` (its identity form) whose latest leaf is `leaf`, of `commit`. */
export function entryOf(version: string, leaf: Omit<ViewLeaf, 'id' | 'version'>, commit: ViewCommit): VersionEntry {
  const base = {
    version,
    type: leaf.type === 'PackageDelete' ? 'delete' : 'details',
    leaf: leaf.key,
    commitKey: commit.commitKey,
    commitTimeStamp: commit.commitTimeStamp,
  } as const;
  if (leaf.type === 'PackageDelete') return base;
  if (leaf.quarantined || leaf.fields === undefined) return { ...base, quarantined: true };
  const { listed, deprecation, vulnerabilities } = leaf.fields;
  return {
    ...base,
    listed,
    ...(deprecation === undefined ? {} : { deprecation }),
    ...(vulnerabilities === undefined ? {} : { vulnerabilities }),
  };
}

/** The stored bytes of an index: compact JSON in the field order above, so equal views are equal bytes. */
export function serializeIndex(index: PackageIndex): Buffer {
  return Buffer.from(JSON.stringify(index));
}
