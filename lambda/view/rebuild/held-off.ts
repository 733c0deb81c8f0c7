/**
 * Upkeep's check before it works: a rebuild of the mirror's view that holds a live lease does the work now, so
 * upkeep waits (the Lambda returns `rebuild-running`, `view` says so and `view --follow` polls) and takes over from
 * the bound once the rebuild finished. One read of the plan store (on DynamoDB a Query and a GetItem on the view
 * consumer's key).
 */
import { BackfillStatus } from '../../contract/backfill.js';
import { VIEW_REBUILD_KIND } from '../../contract/view-rebuild.js';
import type { BackfillStore } from '../../stores/types.js';

/** A running rebuild, as upkeep is told of it (plain JSON). */
export interface RunningRebuild {
  readonly rebuildId: string;
  readonly holder: string | undefined;
  /** Epoch ms. */
  readonly leaseUntil: number;
}

/** The rebuild that holds the view under `planName` (see `rebuildPlanName`) now, or undefined when none does. */
export async function rebuildRunning(
  plans: BackfillStore,
  planName: string,
  now: number = Date.now(),
): Promise<RunningRebuild | undefined> {
  const plan = await plans.newestPlan(planName);
  if (
    plan === undefined ||
    plan.status !== BackfillStatus.running ||
    (plan as { kind?: string }).kind !== VIEW_REBUILD_KIND ||
    plan.leaseUntil <= now
  )
    return undefined;
  return { rebuildId: plan.backfillId, holder: plan.leaseHolder, leaseUntil: plan.leaseUntil };
}
