/**
 * What a rebuild works on, wherever it runs (a Lambda, a worker process, in-process): the mirror it reads, the view
 * consumer's cursor it moves at the end, the plan store (lease and item states), the record store and the view's
 * documents. Its plan is kept under the view consumer's key: one rebuild at a time per mirror.
 */
import { consumerKey } from '../../consumer/consumer-cursors.js';
import type { Mirror } from '../../consumer/mirror.js';
import { VIEW_REBUILD_KIND, type ViewRebuildPlan } from '../../contract/view-rebuild.js';
import type { BackfillStore, CursorStore } from '../../stores/types.js';
import { ViewRebuildPlanError } from '../errors.js';
import type { ViewDocuments } from '../view-documents.js';
import { VIEW_CONSUMER } from '../view-keys.js';
import type { RecordStore } from './record-store.js';

/** A rebuild's stores. */
export interface RebuildStores {
  readonly mirror: Mirror;
  /** The view consumer's cursor. */
  readonly cursors: CursorStore;
  /** Plans, leases and item states (DynamoDB's cursor table, or the folder's state folder). */
  readonly plans: BackfillStore;
  readonly records: RecordStore;
  readonly documents: ViewDocuments;
}

/** The name a rebuild's plan is kept under: the view consumer's key, `consumer#{mirror}#{name}`. */
export function rebuildPlanName(mirror: Mirror, name: string = VIEW_CONSUMER): string {
  return consumerKey(mirror, name);
}

/** A rebuild's plan, by its plan name and id; throws when there is none or it is not a view rebuild's. */
export async function readRebuildPlan(
  plans: BackfillStore,
  planName: string,
  rebuildId: string,
): Promise<ViewRebuildPlan> {
  const plan = await plans.readPlan(planName, rebuildId);
  if (plan === undefined) throw new ViewRebuildPlanError(`view rebuild ${rebuildId} of ${planName}: no such plan`);
  if ((plan as Partial<ViewRebuildPlan>).kind !== VIEW_REBUILD_KIND)
    throw new ViewRebuildPlanError(`plan ${rebuildId} of ${planName} is not a view rebuild's`);
  return plan as ViewRebuildPlan;
}
