/**
 * The one fold of the latest view: a package's records (its leaves as manifests list them), in commit and manifest
 * order, last wins. Upkeep folds a batch's records onto the stored index; the rebuild folds a shard's records from
 * nothing; `applyCommit` folds one commit. Each then reads the bodies {@link bodiesNeeded} names and builds the
 * index with {@link indexOf}: one code path, so equal records give equal bytes.
 */
import type { LeafFields } from './leaf-fields.js';
import type { LeafRecord } from './leaf-record.js';
import { comparableVersion } from '../contract/identity.js';
import {
  entryOf,
  packageIndexOf,
  type PackageIndex,
  type VersionEntry,
  type ViewCommit,
  type ViewLeaf,
} from './package-index.js';

/**
 * A package while its records are folded: the spelling of its id and the commit of its most recent record, and per
 * identity (version's identity form) its latest record, or the stored entry it started from.
 */
export interface FoldedPackage {
  id: string;
  commitKey: string;
  commitTimeStamp: string;
  readonly latest: Map<string, LeafRecord | VersionEntry>;
}

/** The fold's start: the stored index's entries (upkeep), or nothing (a rebuild, a new package). */
export function startFold(previous: PackageIndex | undefined): FoldedPackage | undefined {
  if (previous === undefined) return undefined;
  const latest = new Map<string, LeafRecord | VersionEntry>();
  for (const entry of previous.versions) latest.set(entry.version, entry);
  return { id: previous.id, commitKey: previous.commitKey, commitTimeStamp: previous.commitTimeStamp, latest };
}

/**
 * Folds the next record of the package (later than every one before): it replaces its identity's entry, and its
 * spelling of the id and its commit become the package's. Returns the folded package (made on its first record).
 */
export function foldRecord(folded: FoldedPackage | undefined, record: LeafRecord): FoldedPackage {
  const into = folded ?? {
    id: record.id,
    commitKey: record.commitKey,
    commitTimeStamp: record.commitTimeStamp,
    latest: new Map(),
  };
  into.id = record.id;
  into.commitKey = record.commitKey;
  into.commitTimeStamp = record.commitTimeStamp;
  into.latest.set(record.version, record);
  return into;
}

/** The records whose bodies the index needs: each identity's latest leaf when it is a details leaf not set aside. */
export function bodiesNeeded(folded: FoldedPackage): LeafRecord[] {
  const records: LeafRecord[] = [];
  for (const latest of folded.latest.values())
    if (isRecord(latest) && latest.type === 'PackageDetails' && !latest.quarantined) records.push(latest);
  return records;
}

/**
 * The package's index: the stored entries kept, each record's entry built from `fields` (the bodies of
 * {@link bodiesNeeded}, by record; a details record without fields is written as quarantined, as its body is unknown).
 */
export function indexOf(folded: FoldedPackage, fields: ReadonlyMap<LeafRecord, LeafFields>): PackageIndex {
  const entries: VersionEntry[] = [];
  for (const [version, latest] of folded.latest) {
    if (!isRecord(latest)) {
      entries.push(latest);
      continue;
    }
    const leafFields = fields.get(latest);
    entries.push(
      entryOf(
        version,
        {
          key: latest.key,
          type: latest.type,
          ...(latest.quarantined ? { quarantined: true as const } : {}),
          ...(leafFields === undefined ? {} : { fields: leafFields }),
        },
        latest,
      ),
    );
  }
  return packageIndexOf(folded.id, folded, entries);
}

/** The record of a leaf of `commit` (as upkeep reads it: its body, if read, is `leaf.fields`). */
export function recordOfLeaf(commit: ViewCommit, leaf: ViewLeaf): LeafRecord {
  return {
    commitKey: commit.commitKey,
    commitTimeStamp: commit.commitTimeStamp,
    id: leaf.id,
    version: comparableVersion(leaf.version),
    type: leaf.type,
    quarantined: leaf.quarantined === true,
    key: leaf.key,
  };
}

/**
 * The package's index after `commit`: each leaf replaces its identity's entry (later leaves of one identity in the
 * manifest win), and the rest is kept. `leaves` are this package's leaves of the commit (same id, any case). The
 * fold above, one commit at a time.
 */
export function applyCommit(
  previous: PackageIndex | undefined,
  commit: ViewCommit,
  leaves: readonly ViewLeaf[],
): PackageIndex {
  if (leaves.length === 0) throw new RangeError('applyCommit needs at least one leaf of the package');
  return applyCommits(previous, [{ commit, leaves }]);
}

/** {@link applyCommit} of several commits in order (each with at least one leaf of the package), folded once. */
export function applyCommits(
  previous: PackageIndex | undefined,
  changes: readonly { readonly commit: ViewCommit; readonly leaves: readonly ViewLeaf[] }[],
): PackageIndex {
  let folded = startFold(previous);
  const fields = new Map<LeafRecord, LeafFields>();
  for (const { commit, leaves } of changes)
    for (const leaf of leaves) {
      const record = recordOfLeaf(commit, leaf);
      folded = foldRecord(folded, record);
      if (leaf.fields !== undefined) fields.set(record, leaf.fields);
    }
  if (folded === undefined) throw new RangeError('applyCommits needs at least one leaf of the package');
  return indexOf(folded, fields);
}

function isRecord(value: LeafRecord | VersionEntry): value is LeafRecord {
  // A record's type is the leaf's (`PackageDetails`/`PackageDelete`); an entry's is `details`/`delete`.
  return value.type === 'PackageDetails' || value.type === 'PackageDelete';
}
