/**
 * The view rebuild's first step (Step Functions task `Plan`): takes the mirror's rebuild lease and plans the
 * rebuild (the bound, the manifests listed and cut into ranges, `ranges.json` and `shards.json` under
 * `{prefix}view-rebuild/{id}/`), or takes up its unfinished plan. Input: the execution's input, `{}`,
 * `{"shards": 256, "rangeManifests": 25000}`, with `"abandon": true` to abandon the unfinished plan first.
 *
 * One rebuild at a time per mirror: while another execution (or a CLI) holds the plan with a live lease, the answer
 * is `{"running": true, "rebuildId", "holder", "leaseUntil"}`, which the definition's `Running?` Choice ends in
 * `AlreadyRunning`, a Succeed state: not a failed execution, no alarm. Another `shards` or `rangeManifests` than the
 * unfinished plan's fails with its mismatch code naming both (runtime/coded-errors.ts).
 */
import { SettingsError } from '../../contract/index.js';
import { DEFAULT_DISTRIBUTED_SHARDS } from '../../contract/view-rebuild.js';
import { withCodedErrors } from '../../runtime/coded-errors.js';
import { ViewRebuildMismatchError } from '../errors.js';
import { abandonRebuild, planRebuild } from '../rebuild/index.js';
import { logger, warmUp } from './warm.js';

/** Listings in flight when the planner lists `commits/` by time slices (design: 4 M keys in 15–40 s). */
const PLAN_LISTINGS = 64;

/** What the execution's input may ask. */
export interface RebuildPlannerInput {
  /** Shards of a new plan (default {@link DEFAULT_DISTRIBUTED_SHARDS}); a rerun must ask its plan's or none. */
  readonly shards?: number;
  /** Manifests a range holds (default 25,000). */
  readonly rangeManifests?: number;
  /** Abandon the unfinished plan first (its records removed; a new plan is made). */
  readonly abandon?: boolean;
}

/** What the Plan task sends: the execution's input and its id (the lease's holder). */
export interface RebuildPlannerEvent {
  readonly input: RebuildPlannerInput | null;
  readonly execution: string;
}

/** What the maps read (ItemReader's Bucket and Keys, BatchInput's fields), or who holds the rebuild now. */
export type RebuildPlannerOutput =
  | {
      readonly running: false;
      readonly rebuildId: string;
      readonly bucket: string;
      readonly rangesKey: string;
      readonly shardsKey: string;
      readonly ranges: number;
      readonly shards: number;
      readonly manifests: number;
      readonly boundKey: string | null;
      readonly resumed: boolean;
      /** The execution holding the lease: every batch renews it only while it is still this one's. */
      readonly leaseHolder: string;
    }
  | {
      readonly running: true;
      readonly rebuildId: string;
      readonly holder: string | null;
      readonly leaseUntil: string | null;
    };

/** The planner, called by the state machine with a {@link RebuildPlannerEvent}. */
export const handler = (event: RebuildPlannerEvent): Promise<RebuildPlannerOutput> =>
  withCodedErrors(() => plan(event));

async function plan(event: RebuildPlannerEvent): Promise<RebuildPlannerOutput> {
  const { settings, stores } = warmUp(process.env);
  const input = event?.input ?? {};
  const holder = event?.execution;
  if (typeof holder !== 'string' || holder === '')
    throw new SettingsError('execution', 'is required: the execution id (the Plan task passes $$.Execution.Id)');
  if (input.abandon !== undefined && typeof input.abandon !== 'boolean')
    throw new SettingsError('abandon', `must be true or false (got ${JSON.stringify(input.abandon)})`);
  const name = settings.consumerName;
  if (input.abandon) {
    const abandoned = await abandonRebuild(stores, { name });
    logger.warn(abandoned === undefined ? 'no unfinished view rebuild to abandon' : 'view rebuild abandoned', {
      rebuildId: abandoned,
    });
  }
  const options = {
    name,
    holder,
    ...(input.rangeManifests === undefined ? {} : { rangeManifests: input.rangeManifests }),
    slices: PLAN_LISTINGS,
    inFlight: PLAN_LISTINGS,
  };
  const planned = await planRebuild(stores, { ...options, shards: input.shards ?? DEFAULT_DISTRIBUTED_SHARDS }).catch(
    (error: unknown) => {
      // Shards not asked (the distributed default): an unfinished plan with other shards (a CLI's) is taken up as it is.
      if (
        input.shards === undefined &&
        error instanceof ViewRebuildMismatchError &&
        error.differences.every((difference) => difference.name === 'shards')
      )
        return planRebuild(stores, options);
      throw error;
    },
  );
  if (planned.running) {
    logger.warn('view rebuild already running', { rebuildId: planned.rebuildId, holder: planned.holder });
    return {
      running: true,
      rebuildId: planned.rebuildId,
      holder: planned.holder ?? null,
      leaseUntil: planned.leaseUntil === undefined ? null : new Date(planned.leaseUntil).toISOString(),
    };
  }
  const { plan: made, resumed } = planned;
  logger.info(resumed ? 'view rebuild resumed' : 'view rebuild planned', {
    rebuildId: made.backfillId,
    ranges: made.ranges,
    shards: made.shards,
    manifests: made.manifests,
    boundKey: made.boundKey,
  });
  return {
    running: false,
    rebuildId: made.backfillId,
    bucket: settings.bucket,
    rangesKey: stores.records.itemsKey(made.backfillId, 'ranges'),
    shardsKey: stores.records.itemsKey(made.backfillId, 'shards'),
    ranges: made.ranges,
    shards: made.shards,
    manifests: made.manifests,
    boundKey: made.boundKey,
    resumed,
    leaseHolder: holder,
  };
}
