import { leafKey, manifestKey, quarantineKey } from '../catalog/identity.js';
import type { PageItem } from '../catalog/schemas.js';
import { formatTimestamp } from '../catalog/timestamp.js';
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

/** `{prefix}commits/{commitKey}.json`. */
export function manifestKeyOf(prefix: string, commitKey: string): string {
  return manifestKey(prefix, commitKey);
}

/** `{prefix}quarantine/{commitKey}/{id}/{version}.json`. */
export function quarantineKeyOf(prefix: string, commitKey: string, item: PageItem): string {
  return quarantineKey(prefix, commitKey, item.id, item.version);
}

/** S3 user metadata is US-ASCII: anything else is percent-encoded so the PUT never fails on it. */
function asciiMetadata(value: string): string {
  return /^[\x20-\x7e]*$/.test(value) ? value : encodeURIComponent(value);
}

/** The user metadata of a stored leaf. */
export function metadataOf(item: PageItem): Record<string, string> {
  return {
    'nuget-id': asciiMetadata(item.id),
    'nuget-version': asciiMetadata(item.version),
    'catalog-type': item.type,
    'commit-id': asciiMetadata(item.commitId),
    'commit-timestamp': formatTimestamp(item.commitTicks),
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
  const attempts = typeof (error as { attempts?: unknown })?.attempts === 'number' ? (error as { attempts: number }).attempts : 1;
  return { url: item.url, error: (error as Error)?.message ?? String(error), attempts, item: pageItemJson(item) };
}
