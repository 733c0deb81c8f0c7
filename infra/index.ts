/**
 * The face of infra/: the `CatalogSync` construct, its props and the resource groups it is made of, the stack
 * `infra/app.ts` deploys, and the deployment defaults.
 */
export { CatalogSync } from './catalog-sync.js';
export { CatalogSyncPropsError, type CatalogSyncProps } from './catalog-sync-props.js';
export { SnapshotStorage, type SnapshotStorageProps } from './constructs/snapshot-storage.js';
export { SyncFunction, type SyncFunctionProps } from './constructs/sync-function.js';
export { SyncAlarms, syncMetric, type SyncAlarmsProps } from './constructs/sync-alarms.js';
export { CommitEvents, type CommitEventsProps } from './constructs/commit-events.js';
export { SyncDashboard, type SyncDashboardProps } from './constructs/sync-dashboard.js';
export { CatalogBackfill } from './constructs/catalog-backfill.js';
export type { CatalogBackfillProps } from './constructs/catalog-backfill-props.js';
export { ViewRebuild, type ViewRebuildProps } from './constructs/view-rebuild.js';
export { CatalogConsumer, type CatalogConsumerProps } from './constructs/catalog-consumer.js';
export {
  FeedDistribution,
  type FeedDistributionOptions,
  type FeedDistributionProps,
} from './constructs/feed-distribution.js';
export type { CatalogSyncFeedProps, SyncFeed } from './constructs/feed.js';
export { CatalogSyncStack, type CatalogSyncStackProps } from './stack.js';
export {
  DEFAULT_BACKFILL_BATCH_SIZE,
  DEFAULT_BACKFILL_MAX_CONCURRENCY,
  DEFAULT_BACKFILL_MAX_PASSES,
  DEFAULT_BACKFILL_WORKER_MEMORY_MB,
  DEFAULT_BACKFILL_WORKER_TIMEOUT,
  DEFAULT_LAG_THRESHOLD,
  DEFAULT_MAX_EVENT_AGE,
  DEFAULT_MEMORY_MB,
  DEFAULT_SCHEDULE,
  DEFAULT_TIMEOUT,
} from './defaults.js';
