/**
 * The engine's face: run one bounded slice, the error a failed slice throws, what the engine talks to, and the
 * commit stream the CLI's planning reads. Faces import the engine through this module.
 */
export { lagSeconds, runSlice, SyncError } from './engine.js';
export type { EngineDeps, EngineLogger, Progress } from './engine-deps.js';
export { commitsAfter, pagesAfter } from './commit-stream.js';
export { LeafMemory } from './leaf-memory.js';
export { leafKeyOf, manifestOf, metadataOf, type ManifestEntry } from './layout.js';
export { auditMirror, type AuditDeps, type AuditFinding, type AuditOptions, type AuditSummary } from '../verify/audit.js';
export { repairCommits, type RepairOutcome } from '../verify/audit-repair.js';
export { checkIdFilter, IdFilterChangedError, readIdFilterRecord, shownIdFilter, type EarlierIdFilter, type FilterCheck, type IdFilterRecord } from './filter-record.js';
export { listQuarantine, retryQuarantine, type QuarantineRecord, type RetryOptions, type RetryOutcome } from './quarantine.js';
export type { BackfillDeps } from './engine-deps.js';
export {
  abandonBackfill,
  BackfillIncompleteError,
  BackfillMismatchError,
  BackfillPlanError,
  BackfillRangeError,
  BackfillRunningError,
  cutRanges,
  catalogHeadOrUnknown,
  finishBackfill,
  planBackfill,
  releaseBackfillLease,
  readRanges,
  runRange,
  type PlanOptions,
  type PlannedBackfill,
  type RangeOptions,
  type RangeOutcome,
} from '../backfill/index.js';
