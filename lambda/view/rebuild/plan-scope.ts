/**
 * A planned rebuild's place in the view's staleness, for its parts that run apart from its planner (a map's
 * children, its finish): the widening id filter changes refilled before the plan was made (its `createdAt`), as
 * `view --rebuild` in one process sees them when it starts. The children merge over a newer index of a package
 * those changes added; the finish, once every index is written, marks them no longer stale in `view.json`.
 */
import type { ViewRebuildPlan } from '../../contract/view-rebuild.js';
import { finishStaleRebuild, prepareStaleRebuild, type StaleRebuildTarget } from '../stale-rebuild.js';
import type { ViewStaleness } from '../staleness.js';
import type { RebuildScope } from './scope.js';
import type { RebuildStores } from './stores.js';

function whereOf(stores: RebuildStores, name: string): StaleRebuildTarget {
  const { documents, mirror, cursors } = stores;
  return { documents, prefix: mirror.prefix, mirror, cursors, name };
}

/** The scope of a whole rebuild planned as `plan`. */
export async function planScope(stores: RebuildStores, plan: ViewRebuildPlan, name: string): Promise<RebuildScope> {
  const stale = await prepareStaleRebuild(whereOf(stores, name), plan.createdAt);
  return { refilled: stale.refilled };
}

/** After `plan`'s finish: the changes refilled before it was made are no longer stale; the ones still stale. */
export async function clearPlanStaleness(
  stores: RebuildStores,
  plan: ViewRebuildPlan,
  name: string,
  upTo: string | null,
): Promise<ViewStaleness[]> {
  const where = whereOf(stores, name);
  return finishStaleRebuild(where, await prepareStaleRebuild(where, plan.createdAt), { upTo });
}
