/**
 * The backfill's first step (Step Functions task `Plan`): plans the backfill of the cursor, or resumes its
 * unfinished plan, and hands the Distributed Map where the ranges file is.
 * Input: the execution's input, `{}` or `{ "until": "<timestamp>", "rangeLeaves": 5000 }`, with `"abandon": true`
 * to abandon the cursor's unfinished plan first (its done ranges stay stored; a new plan is made).
 * One plan at a time: while another execution (or the CLI) runs the cursor's plan, this one fails at Plan with
 * `CS_ERR_BACKFILL_RUNNING` naming it, who holds it and until when (the definition ends such an execution in its
 * AlreadyRunning state: not a failure); another `until` or `rangeLeaves` than the unfinished plan's fails with
 * `CS_ERR_BACKFILL_MISMATCH` naming both. `INCLUDE_IDS`/`EXCLUDE_IDS` other than the mirror's `filter.json` fail
 * with `CS_ERR_ID_FILTER_CHANGED` naming both filters, before anything is planned. Step Functions sees these codes as
 * the error's name (coded-errors.ts).
 */
import { backfillRangesKey, MAX_RANGE_LEAVES, parseTimestamp, SettingsError } from '../../contract/index.js';
import { abandonBackfill, planBackfill } from '../index.js';
import { withCodedErrors } from '../../runtime/coded-errors.js';
import { checkBackfillFilter, logger, warmUp } from './warm.js';

export interface PlannerInput {
  readonly until?: string;
  readonly rangeLeaves?: number;
  /** Abandon the cursor's unfinished plan first. */
  readonly abandon?: boolean;
}

/** What the state machine's Plan task sends: the execution's input and the execution's id (its ARN). */
export interface PlannerEvent {
  readonly input: PlannerInput | null;
  readonly execution: string;
}

/** What the map reads: ItemReader's Bucket and Key, and the ItemBatcher's BatchInput. */
export interface PlannerOutput {
  readonly backfillId: string;
  readonly bucket: string;
  readonly rangesKey: string;
  /** How many ranges (items of the ranges file). */
  readonly ranges: number;
  readonly resumed: boolean;
  /**
   * Who holds the plan's lease: the execution's ARN (the map passes it to every batch, whose worker renews the lease
   * only while it is still this execution's). Absent when the planner is called without one.
   */
  readonly leaseHolder?: string;
}

/** The planner, called by the state machine with a {@link PlannerEvent}, or directly with the input alone. */
export const handler = (event: PlannerEvent | PlannerInput | null | undefined): Promise<PlannerOutput> =>
  withCodedErrors(() => planOrResume(event));

async function planOrResume(event: PlannerEvent | PlannerInput | null | undefined): Promise<PlannerOutput> {
  const warm = await warmUp(process.env);
  const { settings, bucket, deps } = warm;
  const wrapped =
    event !== null && typeof event === 'object' && 'execution' in event && typeof event.execution === 'string';
  const input: PlannerInput =
    (wrapped ? (event as PlannerEvent).input : (event as PlannerInput | null | undefined)) ?? {};
  const holder = wrapped ? (event as PlannerEvent).execution : undefined;
  if (
    input.rangeLeaves !== undefined &&
    !(Number.isSafeInteger(input.rangeLeaves) && input.rangeLeaves > 0 && input.rangeLeaves <= MAX_RANGE_LEAVES)
  ) {
    throw new SettingsError(
      'rangeLeaves',
      `must be a whole number from 1 to ${MAX_RANGE_LEAVES} (got ${JSON.stringify(input.rangeLeaves)})`,
    );
  }
  if (input.abandon !== undefined && typeof input.abandon !== 'boolean')
    throw new SettingsError('abandon', `must be true or false (got ${JSON.stringify(input.abandon)})`);
  // Before anything is planned or abandoned: a backfill under another filter than the mirror's is refused.
  await checkBackfillFilter(warm);
  if (input.abandon) {
    const abandoned = await abandonBackfill(settings, deps);
    logger.warn(abandoned === undefined ? 'no unfinished backfill to abandon' : 'backfill abandoned', {
      backfillId: abandoned?.backfillId,
    });
  }
  const { plan, resumed } = await planBackfill(settings, deps, {
    ...(input.until === undefined ? {} : { until: parseTimestamp(input.until) }),
    ...(input.rangeLeaves === undefined ? {} : { rangeLeaves: input.rangeLeaves }),
    ...(holder === undefined ? {} : { holder }),
  });
  logger.info(resumed ? 'backfill resumed' : 'backfill planned', {
    backfillId: plan.backfillId,
    ranges: plan.ranges,
    leaves: plan.leaves,
    bound: plan.bound,
  });
  // The ranges file of a resumed plan is where that plan wrote it: under its own prefix.
  const rangesKey = backfillRangesKey(plan.prefix, plan.backfillId);
  return {
    backfillId: plan.backfillId,
    bucket,
    rangesKey,
    ranges: plan.ranges,
    resumed,
    ...(holder === undefined ? {} : { leaseHolder: holder }),
  };
}
