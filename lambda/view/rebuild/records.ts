/**
 * Phase 1 of a rebuild, one range at a time: its manifests read in commit order, each leaf a record, only the
 * latest record of an identity kept (in the order of its last place, so the last record of a package is its most
 * recent leaf), then one record object per shard written (empty ones too: a missing object is an error, never an
 * empty shard), then the range marked done. A range is atomic: stopped or failed, it is run again from its start
 * and writes the same bytes.
 */
import { readCommitRange } from '../../consumer/reader.js';
import type { RebuildRange, ViewRebuildPlan } from '../../contract/view-rebuild.js';
import { encodeLeafRecord, identityOf, shardOf } from '../leaf-record.js';
import { forEachBounded } from '../commit-leaves.js';
import { recordOfLeaf } from '../fold.js';
import { itemRun, type ItemOptions, type ItemOutcome } from './item-run.js';
import { addedByScope, type RebuildScope } from './scope.js';
import type { RebuildStores } from './stores.js';

/** Manifests read ahead in a range (a manifest is a few hundred bytes; one slow GET must not stall the rest). */
export const RANGE_READ_AHEAD = 256;
/** Record objects written at once. */
const RECORD_WRITES = 32;

/**
 * Runs range `range` of `plan`: reads its manifests (lo, hi], writes its record objects and marks it done. A done
 * range is skipped. Stopped by the deadline or the signal, it is not done and writes nothing more.
 */
export async function runRecordsRange(
  stores: RebuildStores,
  plan: ViewRebuildPlan,
  range: RebuildRange,
  options: ItemOptions & { readonly scope?: RebuildScope } = {},
): Promise<ItemOutcome> {
  const keep = options.scope?.only === 'added' ? addedByScope(options.scope) : undefined;
  return itemRun(stores, plan, range.n, options, async ({ stopped, tick }) => {
    const buffers = Array.from({ length: plan.shards }, () => new Map<string, string>());
    const totals = { commits: 0, leaves: 0, deletes: 0, quarantined: 0, bytes: 0 };
    for await (const commit of readCommitRange(stores.mirror, range.lo, range.hi, RANGE_READ_AHEAD)) {
      if (stopped()) return undefined;
      for (const leaf of commit.leaves) {
        if (keep !== undefined && !keep(leaf.id.toLowerCase())) continue;
        const record = recordOfLeaf(commit, leaf);
        const buffer = buffers[shardOf(leaf.id.toLowerCase(), plan.shards)]!;
        const identity = identityOf(record);
        // Last wins, and goes last: the order of the records is the order of their identities' latest leaves.
        buffer.delete(identity);
        buffer.set(identity, encodeLeafRecord(record, stores.mirror.prefix));
        totals.leaves++;
        if (record.type === 'PackageDelete') totals.deletes++;
        if (record.quarantined) totals.quarantined++;
      }
      totals.commits++;
      if (totals.commits % 1_000 === 0) await tick();
    }
    if (stopped()) return undefined;
    await forEachBounded(
      buffers.map((buffer, shard) => ({ buffer, shard })),
      RECORD_WRITES,
      async ({ buffer, shard }) => {
        const bytes = Buffer.from(buffer.size === 0 ? '' : `${[...buffer.values()].join('\n')}\n`);
        totals.bytes += bytes.length;
        await stores.records.putRecords(plan.backfillId, shard, range.n, bytes);
      },
    );
    return totals;
  });
}
