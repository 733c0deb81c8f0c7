/**
 * A map child's work (a Lambda worker, a CLI worker process): the items of one batch of one phase, one after
 * another, until the deadline. Plain JSON in and out: the batch as the ItemBatcher forms it, the outcome the loop
 * tests (`done: false` comes back for another pass).
 */
import type { RebuildRange, RebuildShard } from '../../contract/view-rebuild.js';
import { ViewRebuildPlanError } from '../errors.js';
import { VIEW_CONSUMER } from '../view-keys.js';
import type { ItemOutcome } from './item-run.js';
import { runRecordsRange } from './records.js';
import { runIndexShard, type ShardOptions } from './shard.js';
import { planScope } from './plan-scope.js';
import { readRebuildPlan, rebuildPlanName, type RebuildStores } from './stores.js';

/** One batch: the plan's id, and items of one phase (ranges or shards, as the items files list them). */
export interface RebuildBatch {
  readonly rebuildId: string;
  /** The view consumer's name (default `view-latest`). */
  readonly name?: string;
  readonly items: readonly (RebuildRange | RebuildShard)[];
}

/** What a batch did (plain JSON). */
export interface BatchOutcome {
  /** Every item of the batch is done. */
  readonly done: boolean;
  readonly items: readonly ItemOutcome[];
}

/** Whether an item is a shard (`shards.json`) rather than a range (`ranges.json`). */
export function isShard(item: RebuildRange | RebuildShard): item is RebuildShard {
  return typeof (item as RebuildShard).shard === 'number';
}

/**
 * Runs a batch's items in order: a done item is skipped, and the batch stops (not done) at the first item the
 * deadline or the signal stopped. An item that fails throws: the batch fails, its done items stay done.
 */
export async function runRebuildBatch(
  stores: RebuildStores,
  batch: RebuildBatch,
  options: ShardOptions = {},
): Promise<BatchOutcome> {
  const planName = rebuildPlanName(stores.mirror, batch.name ?? VIEW_CONSUMER);
  const plan = await readRebuildPlan(stores.plans, planName, batch.rebuildId);
  // A map's child is not told the planner's scope: it looks at the same filter history as of the plan.
  const scope = options.scope ?? (await planScope(stores, plan, batch.name ?? VIEW_CONSUMER));
  const itemOptions = { ...options, scope };
  const items: ItemOutcome[] = [];
  for (const item of batch.items) {
    if (!Number.isSafeInteger(item.n) || item.n < 0 || item.n >= plan.ranges + plan.shards)
      throw new ViewRebuildPlanError(`view rebuild ${batch.rebuildId} has no item ${JSON.stringify(item.n)}`);
    const outcome = isShard(item)
      ? await runIndexShard(stores, plan, item, itemOptions)
      : await runRecordsRange(stores, plan, item, itemOptions);
    items.push(outcome);
    if (!outcome.done) return { done: false, items };
  }
  return { done: true, items };
}
