/**
 * The backfill engine: plan the ranges, run one range, finish. Faces (the Lambda handlers of lambda/backfill/, the
 * CLI's `backfill`) import it through lambda/sync/index.ts.
 */
export { cutRanges } from './cut-ranges.js';
export { abandonBackfill, planBackfill, readRanges, releaseBackfillLease, type PlanOptions, type PlannedBackfill } from './plan.js';
export { runRange, type RangeOptions, type RangeOutcome } from './range-worker.js';
export { catalogHeadOrUnknown, finishBackfill } from './finish.js';
export { BackfillIncompleteError, BackfillMismatchError, BackfillPlanError, BackfillRangeError, BackfillRunningError } from './errors.js';
