/**
 * The contract, the ground floor: exact time, NuGet identity, the key layout, settings with every default, the
 * run summary and the errors. It imports nothing of the project; every other floor may import it.
 */
export {
  compareTicks,
  expandDateOnly,
  formatTimestamp,
  MIN_TICKS,
  MIN_TIMESTAMP,
  normalizeTimestamp,
  parseTimeInput,
  parseTimestamp,
  ticksFromEpochMs,
  TimestampError,
  type Ticks,
} from './time.js';
export {
  comparableVersion,
  identityKeyProblem,
  KeySegmentError,
  MAX_PREFIX_BYTES,
  normalizeVersion,
} from './identity.js';
export { compareVersions } from './version-order.js';
export { VIEW_CONSUMER, VIEW_KEYS, VIEW_PROBE_KEY, VIEW_STATE_KEY } from './view.js';
export { FEED_CONSUMER, FEED_FOLDER, FEED_KEYS, FEED_METRICS, FEED_STATE_FOLDER } from './feed.js';
export {
  BUILT_IN_CONSUMERS,
  CONSUMER_KEY_PREFIX,
  consumerCursorKey,
  consumerNameOf,
  LEASE_SK,
  mirrorKeyOf,
} from './consumer-keys.js';
export {
  commitKey,
  commitKeyOf,
  CommitKeyError,
  decodeCommitKey,
  filterKeyOf,
  leafKey,
  manifestKey,
  quarantineKey,
  SNAPSHOT_FOLDERS,
  watermarkKeyOf,
} from './keys.js';
export {
  DEFAULT_CONCURRENCY,
  DEFAULT_CURSOR_NAME,
  DEFAULT_MAX_COMMITS,
  DEFAULT_MAX_LEAVES,
  DEFAULT_METRICS_NAMESPACE,
  DEFAULT_RUN_LOG_DAYS,
} from './settings.js';
export {
  DEFAULT_SOURCE,
  parseSettings,
  SettingsError,
  SOURCE_SECRET_ENV,
  type RawSettings,
  type SyncSettings,
} from './settings.js';
export { CURSOR_NAME_PATTERN, ENV_NAMES, parseRunLogDays, type SettingNames } from './settings.js';
export { DEFAULT_BACKFILL_LEASE_SECONDS, DEFAULT_RANGE_LEAVES } from './settings.js';
export {
  addTotals,
  BACKFILL_ACTIVE_SK,
  BACKFILL_SK_PREFIX,
  backfillRangesKey,
  backfillResultsPrefix,
  backfillSortKey,
  BackfillStatus,
  MAX_BATCH_INPUT_BYTES,
  MAX_RANGE_ITEM_BYTES,
  MAX_RANGE_LEAVES,
  RANGE_PAGE_BYTES,
  rangeSortKey,
  ZERO_TOTALS,
} from './backfill.js';
export type { BackfillPage, BackfillPlan, BackfillRange, BackfillTotals, RangeState } from './backfill.js';
export { runErrorOf, StoppedBy, type RunError, type RunSummary } from './run-summary.js';
export { CatalogSyncError, ErrorCode, hasErrorCode } from './errors.js';
export { redactUrl } from './redact.js';
export {
  anyProxy,
  proxyFor,
  readProxyEnv,
  shownProxy,
  tunnelRefusal,
  type ProxyChoice,
  type ProxyEnv,
} from './proxy-env.js';
export { VERSION } from './version.js';
export {
  DEFAULT_LEAF_MEMORY_BYTES,
  LEAF_MEMORY_ENV,
  leafMemoryBudget,
  processMemory,
  type LeafMemoryBudget,
  type ProcessMemory,
} from './leaf-memory.js';
export {
  idFilterFlags,
  idFilterOf,
  idPatternProblem,
  keepsId,
  sameIdFilter,
  widens,
  type IdFilter,
} from './id-filter.js';
