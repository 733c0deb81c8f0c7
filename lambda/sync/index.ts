/**
 * The sync wing's engine: run one bounded slice, the error a failed slice throws, what the engine talks to, and the
 * commit stream the CLI's planning reads. Faces, and the wings that build on the follower (backfill, verify), import
 * it through this module.
 */
export { lagSeconds, runSlice, SyncError } from './engine.js';
export type { EngineDeps, EngineLogger, Progress } from './engine-deps.js';
export { commitsAfter, pagesAfter } from './commit-stream.js';
export { LeafMemory } from './leaf-memory.js';
export { leafKeyOf, manifestOf, metadataOf, type ManifestEntry } from './layout.js';
export {
  checkIdFilter,
  IdFilterChangedError,
  markRefilled,
  readIdFilterRecord,
  shownIdFilter,
  type EarlierIdFilter,
  type FilterCheck,
  type IdFilterRecord,
  type RefillCoverage,
} from './filter-record.js';
export {
  listQuarantine,
  retryQuarantine,
  type QuarantineRecord,
  type RetryOptions,
  type RetryOutcome,
} from './quarantine.js';
export type { BackfillDeps } from './engine-deps.js';
