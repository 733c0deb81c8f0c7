/**
 * Phase 2 of a rebuild, one shard at a time: its record objects read in range order and folded (the one fold, last
 * wins), then per package the bodies of its identities' latest details leaves read, its index built and written
 * with the stale-writer guard (an index of a newer commit, written meanwhile by upkeep, is kept; one of the same
 * commit is replaced, so a damaged one is repaired), and its quarantined entries refreshed. A shard is atomic:
 * stopped, it is run again whole, and an index already written is found equal and not written again.
 */
import { MirrorLeaf, type Mirror } from '../../consumer/mirror.js';
import type { BackfillTotals } from '../../contract/backfill.js';
import type { RebuildShard, ViewRebuildPlan } from '../../contract/view-rebuild.js';
import { forEachBounded, limiter } from '../commit-leaves.js';
import { ViewRebuildPlanError } from '../errors.js';
import { bodiesNeeded, foldRecord, indexOf, type FoldedPackage } from '../fold.js';
import { writeGuarded, type GuardedWriteOptions } from '../guarded-write.js';
import { leafFieldsOf, type LeafFields } from '../leaf-fields.js';
import { decodeLeafRecord, type LeafRecord } from '../leaf-record.js';
import { refreshQuarantinedEntry } from '../quarantine-refresh.js';
import type { ViewDocuments } from '../view-documents.js';
import { packageIndexKey } from '../view-keys.js';
import { writeOverNewer } from '../stale-rebuild.js';
import { itemRun, type ItemOptions, type ItemOutcome } from './item-run.js';
import { addedByScope, type RebuildScope } from './scope.js';
import type { RebuildStores } from './stores.js';

/** Leaf bodies a shard reads at once, by default. */
export const DEFAULT_REBUILD_READS = 64;
/** Package indexes a shard writes at once (each one GET and one PUT), by default. */
export const DEFAULT_REBUILD_WRITES = 64;

/** Options of {@link runIndexShard}. */
export interface ShardOptions extends ItemOptions {
  /** Leaf bodies read at once (default {@link DEFAULT_REBUILD_READS}). */
  readonly reads?: number;
  /** Package indexes written at once (default {@link DEFAULT_REBUILD_WRITES}). */
  readonly writes?: number;
  /** Tests: see {@link GuardedWriteOptions.beforeWrite}. */
  readonly beforeWrite?: GuardedWriteOptions['beforeWrite'];
  /** The refilled id filter changes it clears: a newer index of a package they added is merged, not kept. */
  readonly scope?: RebuildScope;
}

/** What a shard did; its item stores it in a range's counters (see {@link shardTotals}). */
export interface ShardCounts {
  readonly packages: number;
  /** Records folded. */
  readonly records: number;
  /** Indexes written, and indexes found at their commit or a newer one. */
  readonly written: number;
  readonly current: number;
  /** Leaf bodies read: one per identity whose latest leaf is a details leaf not set aside. */
  readonly bodiesRead: number;
}

/**
 * A shard's counts in its item's counters (named for a backfill's range): `commits` = packages, `leaves` = records,
 * `deletes` = indexes written, `quarantined` = indexes already current, `bytes` = leaf bodies read.
 */
export function shardTotals(counts: ShardCounts): BackfillTotals {
  return {
    commits: counts.packages,
    leaves: counts.records,
    deletes: counts.written,
    quarantined: counts.current,
    bytes: counts.bodiesRead,
  };
}

/** {@link shardTotals} read back. */
export function shardCounts(totals: BackfillTotals): ShardCounts {
  return {
    packages: totals.commits,
    records: totals.leaves,
    written: totals.deletes,
    current: totals.quarantined,
    bodiesRead: totals.bytes,
  };
}

/** Runs shard `item` of `plan`: folds its records, writes its packages' indexes, marks it done. */
export async function runIndexShard(
  stores: RebuildStores,
  plan: ViewRebuildPlan,
  item: RebuildShard,
  options: ShardOptions = {},
): Promise<ItemOutcome> {
  return itemRun(stores, plan, item.n, options, async ({ stopped, tick }) => {
    const packages = new Map<string, FoldedPackage>();
    let records = 0;
    for (let range = 0; range < plan.ranges; range++) {
      const bytes = await stores.records.getRecords(plan.backfillId, item.shard, range);
      if (bytes === undefined)
        throw new ViewRebuildPlanError(
          `${stores.records.recordsKey(plan.backfillId, item.shard, range)}: the records of range ${range} for shard ${item.shard} are not stored, though the range is done; abandon the rebuild and run it again (\`catalog-sync view --rebuild --abandon\`)`,
        );
      for (const line of bytes.toString('utf8').split('\n')) {
        if (line === '') continue;
        const record = decodeLeafRecord(line, plan.prefix);
        const lowerId = record.id.toLowerCase();
        packages.set(lowerId, foldRecord(packages.get(lowerId), record));
        records++;
      }
    }
    const counts = { packages: packages.size, records, written: 0, current: 0, bodiesRead: 0 };
    const read = limiter(options.reads ?? DEFAULT_REBUILD_READS);
    const guard = options.beforeWrite === undefined ? {} : { beforeWrite: options.beforeWrite };
    const added = addedByScope(options.scope);
    let done = 0;
    await forEachBounded(packages.values(), options.writes ?? DEFAULT_REBUILD_WRITES, async (folded) => {
      if (stopped()) return;
      const outcome = await writePackage(stores.documents, stores.mirror, folded, read, guard, {
        added,
        bound: plan.boundKey ?? '',
      });
      counts[outcome.outcome]++;
      counts.bodiesRead += outcome.bodiesRead;
      if (++done % 256 === 0) await tick();
    });
    return stopped() && done < packages.size ? undefined : shardTotals(counts);
  });
}

/** Reads the bodies of a package's latest details leaves and writes its index; what was written and read. */
async function writePackage(
  documents: ViewDocuments,
  mirror: Mirror,
  folded: FoldedPackage,
  read: <R>(task: () => Promise<R>) => Promise<R>,
  guard: GuardedWriteOptions,
  stale: { readonly added: (lowerId: string) => boolean; readonly bound: string },
): Promise<{ outcome: 'written' | 'current'; bodiesRead: number }> {
  const needed = bodiesNeeded(folded);
  const fields = new Map<LeafRecord, LeafFields>();
  await Promise.all(
    needed.map(async (record) => {
      // Read as upkeep reads it (same errors for a leaf the manifest lists but the mirror lacks).
      const body = await read(() =>
        new MirrorLeaf(
          { key: record.key, id: record.id, version: record.version, type: record.type },
          mirror,
          record.commitKey,
        ).json(),
      );
      fields.set(record, leafFieldsOf(body));
    }),
  );
  const index = indexOf(folded, fields);
  const key = packageIndexKey(mirror.prefix, index.id);
  let outcome = await writeGuarded(documents, key, index.commitKey, () => index, { ...guard, replaceSame: true });
  // An added package's newer index was written by upkeep over the incomplete one: merged, not kept as it is.
  if (outcome === 'current' && stale.added(index.id.toLowerCase()))
    outcome = await writeOverNewer(documents, key, index, stale.bound);
  // A set-aside leaf stored since (retry-quarantine) is read like any other: as upkeep does after its write (an
  // index kept because a newer one was there was looked at by its own writer).
  if (outcome === 'written')
    for (const entry of index.versions)
      if (entry.quarantined)
        await refreshQuarantinedEntry(documents, key, entry.leaf, (leafKey) => mirror.store.getBytes(leafKey));
  return { outcome, bodiesRead: needed.length };
}
