/**
 * The backfill wing's engine: plan the ranges, run one range, finish. Its faces (the Lambda handlers of lambda/,
 * the CLI's `backfill` in cli/) and the library face import it through this module.
 */
export { cutRanges } from './cut-ranges.js';
export {
  abandonBackfill,
  planBackfill,
  readRanges,
  releaseBackfillLease,
  type PlanOptions,
  type PlannedBackfill,
} from './plan.js';
export { runRange, type RangeOptions, type RangeOutcome } from './range-worker.js';
export { catalogHeadOrUnknown, finishBackfill } from './finish.js';
export {
  BackfillIncompleteError,
  BackfillMismatchError,
  BackfillPlanError,
  BackfillRangeError,
  BackfillRunningError,
} from './errors.js';
