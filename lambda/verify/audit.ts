/**
 * The audit of a mirror against its catalog (`catalog-sync verify`): every commit up to the watermark has its
 * manifest and every leaf its object (or its quarantine record), and, when asked, stored bodies are the catalog's
 * byte for byte. It never HEADs a leaf: the store's keys are listed by commit-key ranges, several ranges at once,
 * and compared with the keys the page items give, a window of commits at a time (memory stays bounded)
 * (audit-listing.ts); a manifest is judged by the id filter it was written under (audit-manifests.ts).
 */
import type { CatalogClient } from '../catalog/catalog-client.js';
import type { CatalogIndex, PageItem } from '../catalog/index.js';
import { commitKey as commitKeyOf, manifestKey, quarantineKeyFor } from '../contract/keys.js';
import { formatTimestamp, MIN_TICKS, type Ticks } from '../contract/time.js';
import type { SyncSettings } from '../contract/settings.js';
import type { CursorStore, SnapshotStore } from '../stores/types.js';
import { commitsAfter, type PlannedCommit } from '../sync/commit-stream.js';
import { placeLeaf } from '../sync/layout.js';
import { readWatermarkCursor } from '../sync/watermark.js';
import { filterCommit } from '../sync/id-filter-hook.js';
import { sameIdFilter, type IdFilter } from '../contract/id-filter.js';
import type { EarlierIdFilter } from '../sync/filter-record.js';
import { keySet, listWindow } from './audit-listing.js';
import { filterOfManifest, filtersAt, manifestProblem } from './audit-manifests.js';

/** One thing wrong (or set aside) in the mirror. */
export type AuditFinding =
  | { readonly kind: 'missing-manifest'; readonly commit: string; readonly commitId: string; readonly key: string }
  | { readonly kind: 'missing-leaf'; readonly commit: string; readonly key: string; readonly url: string }
  | {
      readonly kind: 'body-differs';
      readonly commit: string;
      readonly key: string;
      readonly url: string;
      readonly storedBytes: number;
      readonly catalogBytes: number;
    }
  | { readonly kind: 'manifest-differs'; readonly commit: string; readonly key: string; readonly reason: string }
  | {
      readonly kind: 'unverifiable';
      readonly commit: string;
      readonly key: string;
      readonly url: string;
      readonly reason: string;
    }
  | { readonly kind: 'quarantined'; readonly commit: string; readonly key: string; readonly url: string };

/** What the audit covered and found. */
export interface AuditSummary {
  /** Commits after this time were audited (exclusive), 7 fractional digits. */
  readonly from: string;
  /** ... up to this one (inclusive): the earlier of the cursor (or `until`) and the watermark. */
  readonly to: string;
  readonly cursor: string | null;
  readonly watermark: string | null;
  readonly commits: number;
  readonly leaves: number;
  /** Leaves whose stored body was compared with the catalog's. */
  readonly compared: number;
  readonly missingManifests: number;
  readonly missingLeaves: number;
  readonly differ: number;
  readonly quarantined: number;
  readonly unverifiable: number;
  /** Commits whose manifest was written under an earlier id filter (filter.json's history), and judged by it. */
  readonly underEarlierFilter: number;
  readonly durationMs: number;
  readonly leavesPerSecond: number;
}

/** Options of {@link auditMirror}. */
export interface AuditOptions {
  /** Audit commits at or after this time (default: from the start). */
  readonly since?: Ticks;
  /** ... up to this time (default: the cursor); never past the watermark. */
  readonly until?: Ticks;
  /** Compare stored bodies with the catalog's (and manifests with the page items). */
  readonly deep?: boolean;
  /** With `deep`: about this many leaves, chosen at random, instead of all. */
  readonly sample?: number;
  /** Listings at once, each over its own commit-key range (a folder: 1, its listing reads the whole tree anyway). */
  readonly listRanges: number;
  /** Commits listed and compared together (a folder: all of them in one). */
  readonly windowCommits: number;
  /** Leaf fetches and reads at once, with `deep`. */
  readonly concurrency: number;
  /** Told each finding as it is found, in commit order within a window. */
  readonly onFinding: (finding: AuditFinding, commit: PlannedCommit) => void;
  readonly random?: () => number;
  /**
   * The mirror's earlier id filters, oldest first (filter.json's history; `settings.idFilter` is the one in force). A
   * commit at or before an earlier filter's `until` is judged by the filter its manifest was written under: that
   * one, or a later one (a refill backfill rewrites manifests), told apart by the manifest's leaves.
   */
  readonly filterHistory?: readonly EarlierIdFilter[];
}

/** A commit to audit: as the catalog has it, and the filters its manifest may have been written under (in force first). */
interface AuditedCommit {
  readonly commit: PlannedCommit;
  readonly filters: readonly (IdFilter | undefined)[];
}

/** What an audit reads. */
export interface AuditDeps {
  readonly catalog: CatalogClient;
  readonly cursors: CursorStore;
  readonly snapshots: SnapshotStore;
}

/** Audits the mirror of `settings.cursorName`; resolves to the summary once every finding was told. */
export async function auditMirror(
  settings: SyncSettings,
  deps: AuditDeps,
  options: AuditOptions,
): Promise<AuditSummary> {
  const started = Date.now();
  const stored = await deps.cursors.read(settings.cursorName);
  const watermark = await readWatermarkCursor(deps.snapshots, settings.prefix);
  let upper = options.until ?? stored?.value ?? MIN_TICKS;
  if (stored !== undefined && stored.value < upper) upper = stored.value;
  // Past the watermark a commit may still be in flight: it is not counted missing.
  if (watermark !== undefined && watermark < upper) upper = watermark;
  const lower = options.since === undefined ? MIN_TICKS : options.since - 1n;
  const counts = {
    commits: 0,
    leaves: 0,
    compared: 0,
    missingManifests: 0,
    missingLeaves: 0,
    differ: 0,
    quarantined: 0,
    unverifiable: 0,
    underEarlierFilter: 0,
  };
  const history = options.filterHistory ?? [];
  const tell = (finding: AuditFinding, commit: PlannedCommit): void => {
    if (finding.kind === 'missing-manifest') counts.missingManifests++;
    else if (finding.kind === 'missing-leaf') counts.missingLeaves++;
    else if (finding.kind === 'body-differs' || finding.kind === 'manifest-differs') counts.differ++;
    else if (finding.kind === 'quarantined') counts.quarantined++;
    else counts.unverifiable++;
    options.onFinding(finding, commit);
  };
  if (stored !== undefined && upper > lower) {
    const index = await deps.catalog.getIndex();
    // One window (a folder): one listing of everything under the prefix serves quarantine, leaves and manifests
    // alike (a folder's listing walks the whole tree, whatever the prefix).
    const everything =
      options.windowCommits === Number.POSITIVE_INFINITY
        ? await keySet(deps.snapshots.listKeys(settings.prefix))
        : undefined;
    const quarantine = everything ?? (await keySet(deps.snapshots.listKeys(`${settings.prefix}quarantine/`)));
    const sampleRate =
      options.deep && options.sample !== undefined
        ? Math.min(1, options.sample / Math.max(1, leavesBetween(index, lower, upper)))
        : 1;
    // A window is listed and compared while the next one's pages are read: one window in flight at a time, so
    // findings still come in commit order.
    let window: AuditedCommit[] = [];
    let inFlight: Promise<void> | undefined;
    const flush = async (): Promise<void> => {
      const batch = window;
      window = [];
      if (inFlight !== undefined) await inFlight;
      inFlight = auditWindow(settings, deps, options, batch, quarantine, sampleRate, counts, tell, everything);
      // Observed when awaited (next flush or the end); a failure must not be an unhandled rejection meanwhile.
      inFlight.catch(() => undefined);
    };
    for await (const commit of commitsAfter(deps.catalog, index, lower, upper)) {
      // A filtered mirror is audited against the items its filter keeps (settings.idFilter: the mirror's own), or,
      // before a change of filter, the one its manifest was written under.
      window.push({ commit, filters: filtersAt(commit.ticks, history, settings.idFilter) });
      if (window.length >= options.windowCommits) await flush();
    }
    if (window.length > 0) await flush();
    if (inFlight !== undefined) await inFlight;
  }
  const durationMs = Date.now() - started;
  return {
    from: formatTimestamp(lower),
    to: formatTimestamp(upper),
    cursor: stored === undefined ? null : formatTimestamp(stored.value),
    watermark: watermark === undefined ? null : formatTimestamp(watermark),
    ...counts,
    durationMs,
    leavesPerSecond: durationMs > 0 ? Math.round((counts.leaves / durationMs) * 1000) : counts.leaves,
  };
}

/** The index's leaf counts of the pages that hold commits in (lower, upper]: the sample's denominator. */
function leavesBetween(index: CatalogIndex, lower: Ticks, upper: Ticks): number {
  let leaves = 0;
  for (const entry of index.items) if (entry.commitTicks > lower) leaves += entry.count;
  return upper >= lower ? leaves : 0;
}

type Counts = { commits: number; leaves: number; compared: number; underEarlierFilter: number };

async function auditWindow(
  settings: SyncSettings,
  deps: AuditDeps,
  options: AuditOptions,
  audited: readonly AuditedCommit[],
  quarantine: ReadonlySet<string>,
  sampleRate: number,
  counts: Counts,
  tell: (finding: AuditFinding, commit: PlannedCommit) => void,
  everything: ReadonlySet<string> | undefined,
): Promise<void> {
  const { prefix } = settings;
  const commits = audited.map((entry) => entry.commit);
  const [leaves, manifests] = everything
    ? [everything, everything]
    : await Promise.all([
        listWindow(deps.snapshots, prefix, 'leaves', commits, options.listRanges),
        listWindow(deps.snapshots, prefix, 'commits', commits, options.listRanges),
      ]);
  // Before a change of filter, a commit's manifest says which filter it was written under: read those (and only
  // those; after the last change every manifest is the current filter's), then judge each commit by its filter.
  const read = new Map<Ticks, unknown>();
  const undecided = audited.filter(
    (entry) => entry.filters.length > 1 && manifests.has(manifestKey(prefix, commitKeyOf(entry.commit.ticks))),
  );
  await inParallel(undecided, options.concurrency, async ({ commit }) => {
    read.set(commit.ticks, await deps.snapshots.getJson(manifestKey(prefix, commitKeyOf(commit.ticks))));
  });
  const window = audited.map(({ commit, filters }) => {
    if (filters.length === 1) return filterCommit(commit, filters[0]);
    const filter = read.has(commit.ticks)
      ? filterOfManifest(read.get(commit.ticks), commit, filters, prefix, deps.snapshots.maxKeySegmentBytes)
      : filters[0];
    if (!sameIdFilter(filter, filters.at(-1))) counts.underEarlierFilter++;
    return filterCommit(commit, filter);
  });
  const random = options.random ?? Math.random;
  const toCompare: Array<{ commit: PlannedCommit; item: PageItem; key: string }> = [];
  const manifestsToCompare: PlannedCommit[] = [];
  for (const commit of window) {
    counts.commits++;
    const ck = commitKeyOf(commit.ticks);
    const at = formatTimestamp(commit.ticks);
    const mKey = manifestKey(prefix, ck);
    const hasManifest = manifests.has(mKey);
    if (!hasManifest) tell({ kind: 'missing-manifest', commit: at, commitId: commit.commitId, key: mKey }, commit);
    let sampled = false;
    for (const item of commit.items) {
      counts.leaves++;
      const placement = placeLeaf(prefix, ck, item, deps.snapshots.maxKeySegmentBytes);
      if (placement.problem === undefined && leaves.has(placement.key)) {
        if (options.deep && (sampleRate >= 1 || random() < sampleRate)) {
          toCompare.push({ commit, item, key: placement.key });
          sampled = true;
        }
        continue;
      }
      const record = quarantineKeyFor(prefix, placement.key);
      if (quarantine.has(record)) tell({ kind: 'quarantined', commit: at, key: record, url: item.url }, commit);
      else tell({ kind: 'missing-leaf', commit: at, key: placement.key, url: item.url }, commit);
    }
    if (options.deep && hasManifest && (sampleRate >= 1 || sampled)) manifestsToCompare.push(commit);
  }
  if (!options.deep) return;
  await inParallel(toCompare, options.concurrency, async ({ commit, item, key }) => {
    const at = formatTimestamp(commit.ticks);
    let catalogBody: Buffer;
    try {
      catalogBody = (await deps.catalog.getLeaf(item)).body;
    } catch (error) {
      tell({ kind: 'unverifiable', commit: at, key, url: item.url, reason: (error as Error).message }, commit);
      return;
    }
    const storedBody = await readBytes(deps.snapshots, key);
    counts.compared++;
    if (storedBody === undefined) tell({ kind: 'missing-leaf', commit: at, key, url: item.url }, commit);
    else if (!storedBody.equals(catalogBody))
      tell(
        {
          kind: 'body-differs',
          commit: at,
          key,
          url: item.url,
          storedBytes: storedBody.length,
          catalogBytes: catalogBody.length,
        },
        commit,
      );
  });
  await inParallel(manifestsToCompare, options.concurrency, async (commit) => {
    const stored = read.has(commit.ticks)
      ? read.get(commit.ticks)
      : await deps.snapshots.getJson(manifestKey(prefix, commitKeyOf(commit.ticks)));
    const reason = manifestProblem(stored, commit, prefix, deps.snapshots.maxKeySegmentBytes);
    if (reason !== undefined)
      tell(
        {
          kind: 'manifest-differs',
          commit: formatTimestamp(commit.ticks),
          key: manifestKey(prefix, commitKeyOf(commit.ticks)),
          reason,
        },
        commit,
      );
  });
}

async function readBytes(snapshots: SnapshotStore, key: string): Promise<Buffer | undefined> {
  if (snapshots.getBytes === undefined)
    throw new Error('this store cannot read objects back (no getBytes): --deep needs it');
  return snapshots.getBytes(key);
}

async function inParallel<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, concurrency), items.length) }, worker));
}
