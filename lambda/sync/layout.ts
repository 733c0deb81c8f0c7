import { createHash } from 'node:crypto';
import { InvalidDocumentError } from '../catalog/errors.js';
import { identityKeyProblem } from '../contract/identity.js';
import { commitKey as commitKeyOfTicks, leafKey, UNSTORABLE_SEGMENT } from '../contract/keys.js';
import { describeItem, type PageItem } from '../catalog/index.js';
import { formatTimestamp, type Ticks } from '../contract/time.js';
import type { PlannedCommit } from './commit-stream.js';

/** One leaf in a commit manifest. */
export interface ManifestEntry {
  readonly key: string;
  /** The package id as the page item gives it. */
  readonly id: string;
  /** The version as the page item gives it. */
  readonly version: string;
  readonly type: 'PackageDetails' | 'PackageDelete';
  readonly quarantined?: true;
}

/** `{prefix}leaves/{commitKey}/{id}/{version}.json`, from the page item only. */
export function leafKeyOf(prefix: string, commitKey: string, item: PageItem): string {
  return leafKey(prefix, commitKey, item.id, item.version);
}

/** Where a leaf goes, and, when it cannot be stored, why. */
export interface LeafPlacement {
  /**
   * `{prefix}leaves/{commitKey}/{id}/{version}.json`; for a leaf that cannot be stored, the bounded
   * stand-in `{prefix}leaves/{commitKey}/~unstorable/{sha256}.json`, which is never written (the manifest
   * lists it as quarantined, and its quarantine record sits at the same path under `quarantine/`).
   */
  readonly key: string;
  /** Why the leaf cannot be stored: raised for it alone, as for a bad leaf. */
  readonly problem?: InvalidDocumentError;
}

/**
 * Places a page item's leaf: at its key, or, for an item past the bounds ({@link PageItem.problem}) or
 * whose key segments a store's file names cannot hold (`maxSegmentBytes`, the local folder's 255), at
 * the bounded stand-in key with the problem.
 */
export function placeLeaf(prefix: string, commitKey: string, item: PageItem, maxSegmentBytes?: number): LeafPlacement {
  let problem = item.problem;
  if (problem === undefined && maxSegmentBytes !== undefined) {
    const reason = identityKeyProblem(item.id, item.version, maxSegmentBytes);
    if (reason !== undefined)
      problem = new InvalidDocumentError(item.url, `${describeItem(item)} cannot be stored in this store: ${reason}`);
  }
  if (problem === undefined) return { key: leafKeyOf(prefix, commitKey, item) };
  return { key: `${prefix}leaves/${commitKey}/${UNSTORABLE_SEGMENT}/${identityDigest(item)}.json`, problem };
}

/** SHA-256 of the identity, lowercased as keys are: every run names the same unstorable item alike. */
function identityDigest(item: PageItem): string {
  return createHash('sha256').update(`${item.id.toLowerCase()}\n${item.version.toLowerCase()}`).digest('hex');
}

/**
 * `{ cursor, commitId, commitKey, updatedAt }` of a stored cursor: written only after the cursor itself, so it may
 * lag the table's cursor, never lead it, and everything at or before its `cursor` is stored.
 */
export function watermarkOf(cursor: Ticks, commitId: string | undefined, now: Date = new Date()): unknown {
  return {
    cursor: formatTimestamp(cursor),
    commitId: commitId ?? null,
    commitKey: commitKeyOfTicks(cursor),
    updatedAt: now.toISOString(),
  };
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** S3 user metadata is US-ASCII: anything else is percent-encoded so the PUT never fails on it. */
function asciiMetadata(value: string): string {
  return PRINTABLE_ASCII.test(value) ? value : encodeURIComponent(value);
}

// The leaves of a commit come one after another: the last commit's formatted timestamp and metadata-safe id
// are kept rather than worked out again for each of its leaves.
let lastCommit: { ticks: Ticks; timestamp: string; commitId: string; safeCommitId: string } | undefined;

/** The user metadata of a stored leaf. */
export function metadataOf(item: PageItem): Record<string, string> {
  let commit = lastCommit;
  if (commit === undefined || commit.ticks !== item.commitTicks || commit.commitId !== item.commitId) {
    commit = {
      ticks: item.commitTicks,
      timestamp: formatTimestamp(item.commitTicks),
      commitId: item.commitId,
      safeCommitId: asciiMetadata(item.commitId),
    };
    lastCommit = commit;
  }
  return {
    'nuget-id': asciiMetadata(item.id),
    'nuget-version': asciiMetadata(item.version),
    'catalog-type': item.type,
    'commit-id': commit.safeCommitId,
    'commit-timestamp': commit.timestamp,
  };
}

/**
 * A commit's manifest. Entries are sorted by key so that every run that writes the same commit writes the same
 * bytes.
 */
export function manifestOf(commit: PlannedCommit, entries: readonly ManifestEntry[]): unknown {
  return {
    commitId: commit.commitId,
    commitTimeStamp: formatTimestamp(commit.ticks),
    // Only on a filtered mirror: an unfiltered mirror's manifests stay as they always were.
    ...(commit.filtered === undefined ? {} : { filtered: commit.filtered }),
    leaves: [...entries].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
  };
}

/** The page item as the page served it (its JSON-LD names), for quarantine records. */
export function pageItemJson(item: PageItem): Record<string, string> {
  return {
    '@id': item.url,
    '@type': `nuget:${item.type}`,
    commitId: item.commitId,
    commitTimeStamp: item.commitTimeStamp,
    'nuget:id': item.id,
    'nuget:version': item.version,
  };
}

/** `{ url, error, attempts, item }`: a leaf set aside. */
export function quarantineRecordOf(item: PageItem, error: unknown): unknown {
  const attempts =
    typeof (error as { attempts?: unknown })?.attempts === 'number' ? (error as { attempts: number }).attempts : 1;
  return { url: item.url, error: (error as Error)?.message ?? String(error), attempts, item: pageItemJson(item) };
}
