import type { CatalogClient } from '../catalog/catalog-client.js';
import { InvalidDocumentError } from '../catalog/errors.js';
import { readPage, type PageItem } from '../catalog/index.js';
import { manifestKey } from '../contract/keys.js';
import type { SnapshotStore } from '../stores/types.js';
import { metadataOf, placeLeaf, type ManifestEntry } from './layout.js';

/** One quarantine record, as stored, with where it is. */
export interface QuarantineRecord {
  readonly key: string;
  readonly url: string;
  readonly error: string;
  readonly attempts: number;
  readonly item: PageItem;
  /** The 12-character commit key the record sits under. */
  readonly commitKey: string;
}

/** What `retry-quarantine` did with one record. */
export interface RetryOutcome {
  readonly key: string;
  readonly url: string;
  /** `already-stored`: an overlapping run had stored the leaf; it is kept and the record resolved without a fetch. */
  readonly outcome: 'stored' | 'already-stored' | 'still-failing';
  readonly error?: string;
  /** The latest view's entry for the leaf was turned from quarantined into a details entry (see {@link RetryOptions}). */
  readonly viewRefreshed?: true;
}

/** Options of {@link retryQuarantine}. */
export interface RetryOptions {
  /**
   * Called for each leaf now stored (or found stored), after its manifest entry lost the mark and before its record
   * is deleted, so a crash in between calls it again on the next retry. The CLI passes the latest view's refresher
   * (`viewRefresher` of `catalog-sync/view`); true when it changed something.
   */
  readonly afterStored?: (leafKey: string, item: PageItem) => Promise<boolean>;
}

const RECORD_KEY = /^(.*?)quarantine\/([0-9A-Za-z]{12})\/[^/]+\/[^/]+\.json$/;

/** Lists the quarantine records under `prefix`, oldest commit first. */
export async function listQuarantine(snapshots: SnapshotStore, prefix: string): Promise<QuarantineRecord[]> {
  const records: QuarantineRecord[] = [];
  for await (const key of snapshots.listKeys(`${prefix}quarantine/`)) {
    const match = RECORD_KEY.exec(key);
    if (!match || match[1] !== prefix) continue;
    const record = (await snapshots.getJson(key)) as
      | { url?: unknown; error?: unknown; attempts?: unknown; item?: unknown }
      | undefined;
    if (!record) continue;
    records.push({
      key,
      url: String(record.url),
      error: String(record.error),
      attempts: typeof record.attempts === 'number' ? record.attempts : 1,
      item: await pageItemOf(record.item, key),
      commitKey: match[2]!,
    });
  }
  return records;
}

/** The page item a record keeps, validated as a page item again: it is read back from storage, not trusted. */
async function pageItemOf(item: unknown, key: string): Promise<PageItem> {
  const raw = item as { commitId?: unknown; commitTimeStamp?: unknown } | undefined;
  const page = { commitId: raw?.commitId, commitTimeStamp: raw?.commitTimeStamp, items: [item] };
  try {
    return (await readPage(JSON.stringify(page), key)).items[0]!;
  } catch (error) {
    if (error instanceof InvalidDocumentError)
      throw new InvalidDocumentError(key, `quarantine record's item is not a page item: ${error.reason}`, {
        cause: error,
      });
    throw error;
  }
}

/**
 * Fetches every quarantined leaf again. Each one that now succeeds is stored at its leaf key, its commit's
 * manifest entry loses `"quarantined": true` (the manifest is rewritten: consumers see that commit's manifest
 * once more, now whole), `options.afterStored` is called (the latest view's entry), and the record is deleted.
 * Records that still fail stay, and so do those of items no store can hold (they are not fetched).
 *
 * A stored leaf wins over a quarantine record: when overlapping runs quarantined a leaf and stored it (the
 * last manifest written may carry a stale `"quarantined": true`, or a stale record may remain), the leaf
 * found at its key is kept as is, not fetched again, and the flag and the record are cleared all the same.
 *
 * With no record, the source is not contacted: nothing to retry is an answer (none), not a network error offline.
 */
export async function retryQuarantine(
  catalog: CatalogClient,
  snapshots: SnapshotStore,
  prefix: string,
  options: RetryOptions = {},
): Promise<RetryOutcome[]> {
  const records = await listQuarantine(snapshots, prefix);
  if (records.length === 0) return [];
  await catalog.resolveIndexUrl();
  const outcomes: RetryOutcome[] = [];
  for (const record of records) {
    try {
      const { key: leafKey, problem } = placeLeaf(prefix, record.commitKey, record.item, snapshots.maxKeySegmentBytes);
      if (problem !== undefined) throw problem;
      let outcome: RetryOutcome['outcome'] = 'already-stored';
      if (!(await isStored(snapshots, leafKey))) {
        const fetched = await catalog.getLeaf(record.item);
        await snapshots.putLeaf(leafKey, fetched.body, metadataOf(record.item));
        outcome = 'stored';
      }
      await clearManifestMark(snapshots, prefix, record.commitKey, leafKey);
      const viewRefreshed = (await options.afterStored?.(leafKey, record.item)) === true;
      await snapshots.deleteKey(record.key);
      outcomes.push({
        key: record.key,
        url: record.url,
        outcome,
        ...(viewRefreshed ? { viewRefreshed: true as const } : {}),
      });
    } catch (error) {
      outcomes.push({ key: record.key, url: record.url, outcome: 'still-failing', error: (error as Error).message });
    }
  }
  return outcomes;
}

/**
 * Whether a leaf is stored at `key`. Read through `getJson`, the one read a store offers: a stored leaf that
 * is not plain JSON to `JSON.parse` (nuget.org writes some with a byte-order mark) is stored all the same.
 */
async function isStored(snapshots: SnapshotStore, key: string): Promise<boolean> {
  try {
    return (await snapshots.getJson(key)) !== undefined;
  } catch (error) {
    if (error instanceof SyntaxError) return true;
    throw error;
  }
}

/** Rewrites the commit's manifest without `"quarantined": true` on the leaf's entry, when it has the flag. */
async function clearManifestMark(
  snapshots: SnapshotStore,
  prefix: string,
  commitKey: string,
  leafKey: string,
): Promise<void> {
  const key = manifestKey(prefix, commitKey);
  const manifest = (await snapshots.getJson(key)) as { leaves?: ManifestEntry[] } | undefined;
  if (!manifest?.leaves?.some((entry) => entry.key === leafKey && entry.quarantined)) return;
  manifest.leaves = manifest.leaves.map((entry) => {
    if (entry.key !== leafKey) return entry;
    const { quarantined: _quarantined, ...rest } = entry;
    return rest;
  });
  await snapshots.putJson(key, manifest);
}
