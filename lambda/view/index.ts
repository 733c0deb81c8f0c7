/**
 * The latest view (`import … from 'catalog-sync/view'`): every package's current versions under
 * `{prefix}packages/{id}/index.json`, kept by the built-in consumer `view-latest` as the mirror moves, rebuilt
 * from the history on demand. Importing it loads the AWS SDK.
 */
export { applyCommit, applyCommits } from './fold.js';
export {
  serializeIndex,
  type PackageIndex,
  type VersionEntry,
  type ViewCommit,
  type ViewLeaf,
} from './package-index.js';
export { leafFieldsOf, type LeafFields } from './leaf-fields.js';
export { packageIndexKey, VIEW_CONSUMER } from './view-keys.js';
export {
  applyToView,
  applyBatchToView,
  keepView,
  DEFAULT_FOLDER_VIEW_BATCH,
  DEFAULT_VIEW_BATCH,
  DEFAULT_VIEW_CONCURRENCY,
  type ViewCounts,
  type ViewRunResult,
  type ViewTarget,
} from './view-consumer.js';
export { rebuildView, DEFAULT_REBUILD_READS, type RebuildOptions, type RebuildResult } from './rebuild.js';
export {
  DEFAULT_DISTRIBUTED_SHARDS,
  DEFAULT_RANGE_MANIFESTS,
  DEFAULT_REBUILD_SHARDS,
  type RebuildBatchInput,
  type RebuildRange,
  type RebuildShard,
  type ViewRebuildPlan,
} from '../contract/view-rebuild.js';
export {
  planRebuild,
  runRebuildBatch,
  runRecordsRange,
  runIndexShard,
  finishRebuild,
  releaseRebuild,
  abandonRebuild,
  rebuildRunning,
  rebuildPlanName,
  SnapshotRecordStore,
  FolderRecordStore,
  type BatchOutcome,
  type ItemOptions,
  type ItemOutcome,
  type PlannedRebuild,
  type PlanRebuildOptions,
  type RebuildBatch,
  type RebuildRef,
  type RebuildStores,
  type RebuildSummary,
  type RecordStore,
  type RunningRebuild,
  type ShardOptions,
} from './rebuild/index.js';
export { fnv1a32, shardOf, encodeLeafRecord, decodeLeafRecord, type LeafRecord } from './leaf-record.js';
export { refreshQuarantinedEntry, viewRefresher, type RefreshOutcome } from './quarantine-refresh.js';
export { writeGuarded, parseIndex, type GuardedOutcome, type GuardedWriteOptions } from './guarded-write.js';
export { awsViewStores } from './open.js';
export { folderViewStores, type ViewStores } from './open-folder.js';
export type { StoredDocument, ViewDocuments } from './view-documents.js';
export { S3ViewDocuments } from './s3-view-documents.js';
export { LocalViewDocuments } from './local-view-documents.js';
export { CheckedViewDocuments, checkedS3ViewDocuments, requireConditionalPut } from './checked-documents.js';
export {
  ConditionalPutError,
  ViewError,
  ViewRebuildIncompleteError,
  ViewRebuildMismatchError,
  ViewRebuildPlanError,
  ViewRebuildRunningError,
} from './errors.js';
