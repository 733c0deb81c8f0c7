/**
 * What `run` says when a backfill of its cursor holds it off (issue 24): which plan, who holds its lease and until
 * when, so "backfill: 0 commits" is never a silent no-op.
 */
import type { BackfillStore } from '../../stores/types.js';

/** One line naming the backfill that holds `cursorName` off, or undefined when none is running. */
export async function heldOffLine(
  backfills: BackfillStore,
  cursorName: string,
  now = Date.now(),
): Promise<string | undefined> {
  const plan = await backfills.newestPlan(cursorName);
  if (plan === undefined || plan.status !== 'running') return undefined;
  const minutes = Math.max(0, Math.ceil((plan.leaseUntil - now) / 60_000));
  return (
    `held off by backfill ${plan.backfillId} of cursor ${cursorName}${plan.leaseHolder === undefined ? '' : ` (held by ${plan.leaseHolder})`}, ` +
    `its lease until ${new Date(plan.leaseUntil).toISOString()} (${minutes} min) unless renewed: it moves the cursor when it finishes ` +
    '(`catalog-sync status` shows its progress; `catalog-sync backfill --abandon` drops it)'
  );
}
