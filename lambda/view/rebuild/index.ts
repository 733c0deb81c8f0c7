/**
 * The view's distributed rebuild (its entry points): plan, a batch of ranges or shards, finish, release, abandon,
 * and upkeep's check. Plain JSON in and out, a deadline and a signal: what a Lambda, a worker process and the
 * in-process rebuild all call.
 */
export { planRebuild, readItems, type PlannedRebuild, type PlanRebuildOptions } from './plan.js';
export { runRebuildBatch, isShard, type BatchOutcome, type RebuildBatch } from './batch.js';
export { runRecordsRange } from './records.js';
export { runIndexShard, shardCounts, shardTotals, type ShardCounts, type ShardOptions } from './shard.js';
export type { ItemOptions, ItemOutcome } from './item-run.js';
export { finishRebuild, releaseRebuild, abandonRebuild, type RebuildRef, type RebuildSummary } from './finish.js';
export { rebuildRunning, type RunningRebuild } from './held-off.js';
export { clearPlanStaleness, planScope } from './plan-scope.js';
export type { RebuildScope } from './scope.js';
export { readRebuildPlan, rebuildPlanName, type RebuildStores } from './stores.js';
export { FolderRecordStore, SnapshotRecordStore, type RecordStore } from './record-store.js';
export { cutManifestRanges, markStep, type ManifestSlice } from './cut-manifests.js';
export { listManifestSlices, type ListManifestsOptions } from './list-manifests.js';
