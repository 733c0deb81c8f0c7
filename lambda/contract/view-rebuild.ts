/**
 * The latest view's rebuild as a plan of items (contract.md, "The latest view", rebuild): its plan item, its items
 * files and record objects, and what a map's child is handed. Shared by the view wing (its engine and faces) and
 * the CDK constructs (their IAM grants and the state machine name these keys). A rebuild is planned in two phases:
 * ranges of manifests, each writing one record object per shard, then shards, each folding its records and writing
 * its packages' indexes; its plan and item states are kept in the backfill's store (`BackfillStore`), under the
 * view consumer's key (one rebuild at a time per mirror).
 */
import type { BackfillPlan } from './backfill.js';

/** A rebuild plan's `kind`: a plan item under a view consumer's key is one of these. */
export const VIEW_REBUILD_KIND = 'view-rebuild';

/** Manifests a range holds by default: about 75,000 leaves, a few MB of records in memory. */
export const DEFAULT_RANGE_MANIFESTS = 25_000;
/** The most manifests a range may hold (its records are held in memory until written). */
export const MAX_RANGE_MANIFESTS = 100_000;
/** Shards of a rebuild on one machine by default (each a record file per range, folded in memory). */
export const DEFAULT_REBUILD_SHARDS = 64;
/** Shards of a distributed rebuild by default: about 47 k records, 1.6 k packages a shard at nuget.org's size. */
export const DEFAULT_DISTRIBUTED_SHARDS = 256;
/** The most shards a plan may have (each range writes one object per shard). */
export const MAX_REBUILD_SHARDS = 4_096;

/** Where a rebuild's files are in the mirror's bucket: `{prefix}view-rebuild/`. */
export function viewRebuildPrefix(prefix: string): string {
  return `${prefix}view-rebuild/`;
}

/** One rebuild's files: `{prefix}view-rebuild/{rebuildId}/`. */
export function viewRebuildFilesPrefix(prefix: string, rebuildId: string): string {
  return `${viewRebuildPrefix(prefix)}${rebuildId}/`;
}

/** An items file (a JSON array a map's ItemReader reads): `{prefix}view-rebuild/{rebuildId}/ranges.json` or `shards.json`. */
export function viewRebuildItemsKey(prefix: string, rebuildId: string, items: RebuildItemsName): string {
  return `${viewRebuildFilesPrefix(prefix, rebuildId)}${items}.json`;
}

/**
 * A record object: `{prefix}view-rebuild/{rebuildId}/records/{range}/{shard}.jsonl`, one leaf record a line (by range
 * first: a range writes into a folder of its own, read by every shard).
 */
export function viewRecordsKey(prefix: string, rebuildId: string, shard: number, range: number): string {
  return `${viewRebuildFilesPrefix(prefix, rebuildId)}records/${range}/${shard}.jsonl`;
}

/** Where a Distributed Map's ResultWriter writes its results: `{prefix}view-rebuild/map-runs/`. */
export function viewRebuildResultsPrefix(prefix: string): string {
  return `${viewRebuildPrefix(prefix)}map-runs/`;
}

/** The two items files. */
export type RebuildItemsName = 'ranges' | 'shards';

/** An item of `ranges.json`: the manifests with commit keys in (lo, hi]; its item state is `n`. */
export interface RebuildRange {
  /** 0-based; the range's item. */
  readonly n: number;
  /** Exclusive commit key; null: from the mirror's first commit. */
  readonly lo: string | null;
  /** Inclusive commit key. */
  readonly hi: string;
  /** How many manifests it holds (as listed when planned). */
  readonly manifests: number;
}

/** An item of `shards.json`: shard `shard` of the plan, its item state `n` (= ranges + shard). */
export interface RebuildShard {
  readonly n: number;
  readonly shard: number;
}

/** A plan of a view rebuild: a backfill plan's item (lease, status, summary) with the rebuild's own fields. */
export interface ViewRebuildPlan extends BackfillPlan {
  readonly kind: typeof VIEW_REBUILD_KIND;
  /** The view consumer's name (`view-latest`); `cursorName` is its key (`consumer#{mirror}#{name}`). */
  readonly consumer: string;
  readonly shards: number;
  readonly rangeManifests: number;
  /** Manifests up to the bound, as listed. */
  readonly manifests: number;
  /** The bound: the watermark's commit when planned (key and id), or null for a mirror with no commit yet. */
  readonly boundKey: string | null;
  readonly boundCommitId: string | null;
}

/** What the map hands a child besides its items (the ItemBatcher's BatchInput). */
export interface RebuildBatchInput {
  readonly rebuildId: string;
  /** Which map: `records` (ranges) or `indexes` (shards). */
  readonly phase: 'records' | 'indexes';
  /** Who holds the plan's lease (the execution's ARN): a child renews it only while it is still theirs. */
  readonly leaseHolder?: string;
  /** How many times the child's loop came back (`done: false`). */
  readonly passes?: number;
}
