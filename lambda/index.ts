/**
 * The library face of the package (`import … from 'catalog-sync'`): the engine (one bounded slice, the
 * backfill's plan/range/finish steps), the stores it writes to (DynamoDB + S3, or a local folder), the
 * catalog client it reads with, the settings with their defaults, the run summary, and the errors with
 * their stable codes. The constructs are the other entry, `catalog-sync/cdk` (infra/index.ts).
 *
 * A face only: it re-exports the floors' own faces and decides nothing. Importing it loads the AWS SDK
 * (the DynamoDB and S3 stores); the CLI does not import it for that reason.
 */
export {
  lagSeconds,
  listQuarantine,
  retryQuarantine,
  runSlice,
  SyncError,
  type BackfillDeps,
  type EngineDeps,
  type EngineLogger,
  type Progress,
  type QuarantineRecord,
  type RetryOptions,
  type RetryOutcome,
} from './sync/index.js';
export {
  BackfillIncompleteError,
  BackfillPlanError,
  BackfillRangeError,
  cutRanges,
  finishBackfill,
  planBackfill,
  readRanges,
  runRange,
  type PlannedBackfill,
  type PlanOptions,
  type RangeOptions,
  type RangeOutcome,
} from './backfill/index.js';
export {
  awsClients,
  DynamoStore,
  LocalStateError,
  LocalStore,
  openLocalStores,
  S3PutError,
  S3SnapshotStore,
  type BackfillStore,
  type CompareAndSetResult,
  type CursorState,
  type CursorStore,
  type CursorTarget,
  type LocalStoreOptions,
  type LocalStores,
  type RunLogStore,
  type RunQuery,
  type SnapshotStore,
} from './stores/index.js';
export {
  BodyTooLargeError,
  CatalogClient,
  FetchAbortedError,
  FetchError,
  ForbiddenOriginError,
  HttpClient,
  InvalidDocumentError,
  UnsafeCatalogUrlError,
  type HttpClientOptions,
} from './catalog/index.js';
export {
  CatalogSyncError,
  DEFAULT_CONCURRENCY,
  DEFAULT_CURSOR_NAME,
  DEFAULT_MAX_COMMITS,
  DEFAULT_MAX_LEAVES,
  DEFAULT_SOURCE,
  ENV_NAMES,
  ErrorCode,
  formatTimestamp,
  hasErrorCode,
  parseSettings,
  parseTimestamp,
  SettingsError,
  StoppedBy,
  TimestampError,
  VERSION,
  type RawSettings,
  type RunSummary,
  type SyncSettings,
  type Ticks,
} from './contract/index.js';
