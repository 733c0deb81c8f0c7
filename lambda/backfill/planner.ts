/**
 * The backfill's first step (Step Functions task `Plan`): plans the backfill of the cursor, or resumes its
 * unfinished plan, and hands the Distributed Map where the ranges file is.
 * Input: the execution's input, `{}` or `{ "until": "<timestamp>", "rangeLeaves": 5000 }`.
 */
import { backfillRangesKey, parseTimestamp, SettingsError } from '../contract/index.js';
import { planBackfill } from '../sync/index.js';
import { logger, warmUp } from './warm.js';

export interface PlannerInput {
  readonly until?: string;
  readonly rangeLeaves?: number;
}

/** What the map reads: ItemReader's Bucket and Key, and the ItemBatcher's BatchInput. */
export interface PlannerOutput {
  readonly backfillId: string;
  readonly bucket: string;
  readonly rangesKey: string;
  /** How many ranges (items of the ranges file). */
  readonly ranges: number;
  readonly resumed: boolean;
}

export const handler = async (event: PlannerInput | null | undefined): Promise<PlannerOutput> => {
  const { settings, bucket, deps } = await warmUp(process.env);
  const input = event ?? {};
  if (input.rangeLeaves !== undefined && !(Number.isSafeInteger(input.rangeLeaves) && input.rangeLeaves > 0)) {
    throw new SettingsError('rangeLeaves', `must be a whole number above 0 (got ${JSON.stringify(input.rangeLeaves)})`);
  }
  const { plan, resumed } = await planBackfill(settings, deps, {
    ...(input.until === undefined ? {} : { until: parseTimestamp(input.until) }),
    ...(input.rangeLeaves === undefined ? {} : { rangeLeaves: input.rangeLeaves }),
  });
  logger.info(resumed ? 'backfill resumed' : 'backfill planned', { backfillId: plan.backfillId, ranges: plan.ranges, leaves: plan.leaves, bound: plan.bound });
  return { backfillId: plan.backfillId, bucket, rangesKey: backfillRangesKey(settings.prefix, plan.backfillId), ranges: plan.ranges, resumed };
};
