/**
 * A worker process of `catalog-sync view --rebuild --workers N` (forked by the worker pool, never run by hand): it
 * opens the same stores as the parent, then runs the ranges and shards it is handed one at a time with the very
 * functions a Lambda worker runs (`runRecordsRange`, `runIndexShard`). Stopped (`stop`, Ctrl-C, the parent gone), the
 * item in hand is not done and is run again whole.
 */
import type { RebuildRange, RebuildShard, ViewRebuildPlan } from '../../contract/view-rebuild.js';
import { serveWorker } from '../../runtime/cli/worker-child.js';
import { isShard } from '../rebuild/batch.js';
import type { ItemOutcome } from '../rebuild/item-run.js';
import { runRecordsRange } from '../rebuild/records.js';
import { runIndexShard } from '../rebuild/shard.js';
import { readRebuildPlan, rebuildPlanName, type RebuildStores } from '../rebuild/stores.js';
import type { RebuildWorkerOptions } from './view-rebuild.js';
import { openViewStores } from './view-stores.js';

serveWorker<
  (RebuildRange | RebuildShard) & { weight: number },
  ItemOutcome & { stoppedBy: string },
  RebuildWorkerOptions
>({
  async open(options) {
    const opened = await openViewStores(options, 'write');
    const stores: RebuildStores = opened;
    const plan: ViewRebuildPlan = await readRebuildPlan(
      stores.plans,
      rebuildPlanName(stores.mirror, options.consumer),
      options.rebuildId,
    );
    const shared = {
      holder: options.leaseHolder,
      scope: options.scope,
      ...(options.writes === undefined ? {} : { writes: options.writes }),
    };
    return {
      run: async (item, signal) => {
        const outcome = isShard(item)
          ? await runIndexShard(stores, plan, item, { ...shared, signal })
          : await runRecordsRange(stores, plan, item, { ...shared, signal });
        return { ...outcome, stoppedBy: outcome.done ? 'caught-up' : 'interrupted' };
      },
      close: async () => opened.close(),
    };
  },
});
