/**
 * The whole view built again from the mirror's history, in-process: the distributed rebuild's plan, then every
 * range, then every shard, then its finish, one after another in this process (`view --rebuild --workers 1`, the
 * library). The same functions run in a Lambda and in the CLI's worker processes, so the bytes are the same.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Mirror } from '../consumer/mirror.js';
import { checkMirror } from '../consumer/mirror-place.js';
import type { BackfillTotals } from '../contract/backfill.js';
import type { RebuildRange, RebuildShard } from '../contract/view-rebuild.js';
import { STATE_DIR } from '../stores/local-folder.js';
import type { BackfillStore, CursorStore } from '../stores/types.js';
import { ViewError, ViewRebuildRunningError } from './errors.js';
import { finishRebuild, releaseRebuild, type RebuildSummary } from './rebuild/finish.js';
import type { ItemOutcome } from './rebuild/item-run.js';
import { planRebuild } from './rebuild/plan.js';
import { FolderRecordStore, type RecordStore } from './rebuild/record-store.js';
import { runRecordsRange } from './rebuild/records.js';
import { runIndexShard, shardCounts } from './rebuild/shard.js';
import type { RebuildStores } from './rebuild/stores.js';
import type { RebuildScope } from './rebuild/scope.js';
import {
  finishStaleRebuild,
  prepareStaleRebuild,
  type StaleRebuild,
  type StaleRebuildTarget,
} from './stale-rebuild.js';
import type { ViewStaleness } from './staleness.js';
import type { ViewTarget } from './view-consumer.js';
import { VIEW_CONSUMER } from './view-keys.js';

export { DEFAULT_REBUILD_READS } from './rebuild/shard.js';

/** What {@link rebuildView} did: its finish's summary, or, stopped, what its done items did. */
export interface RebuildResult extends Omit<RebuildSummary, 'cursorBefore' | 'cursorAfter' | 'durationMs'> {
  /** False when `signal` stopped it before every index was written (the cursor is then left where it was). */
  readonly complete: boolean;
  /** The mirror's unfinished rebuild was taken up again. */
  readonly resumed: boolean;
  /** The id filter changes the view still lacks leaves for after it (staleness.ts); empty: the view is whole. */
  readonly stale: ViewStaleness[];
}

/** Options of {@link rebuildView}. */
export interface RebuildOptions {
  /** The view consumer's cursor name (default `view-latest`). */
  readonly name?: string;
  /** Stops the rebuild between manifests and between packages; what is done stays done, a rerun resumes. */
  readonly signal?: AbortSignal;
  /** Leaf bodies read at once (default 64). */
  readonly reads?: number;
  /** Shards (default 64): one record file per range, folded in memory one at a time. */
  readonly shards?: number;
  /** Manifests a range holds (default 25,000): its records are held in memory until written. */
  readonly rangeManifests?: number;
  /** Ranges are cut smaller when they would be fewer than this. */
  readonly minRanges?: number;
  /**
   * Where the plan and its item states are kept (default: `cursors` when it is also a plan store, as DynamoStore
   * and the folder's LocalStore are).
   */
  readonly plans?: BackfillStore;
  /**
   * Where the records go (default: the folder `tempDir`, else `view-rebuild` in the mirror folder's state folder,
   * else in the system's temporary folder).
   */
  readonly records?: RecordStore;
  /** The folder the records go to (see `records`). */
  readonly tempDir?: string;
  /** Who runs it (the CLI: `<pid>@<host>`): its own lease is taken again; a holder known gone is taken over. */
  readonly holder?: string;
  readonly holderGone?: (holder: string) => boolean;
  /** Called after each item: progress (and, in tests, a crash point). */
  readonly onItem?: (outcome: ItemOutcome) => void;
  /**
   * `added`: only the packages that stale id filter changes added, once their refill is done (`view --rebuild
   * --added`); every manifest is read, only their bodies, and the cursor is left where it is.
   */
  readonly only?: 'added';
}

/** A rebuild's place in the view's staleness: what it clears, its scope, or the answer that there is nothing to do. */
export interface ScopedRebuild {
  readonly where: StaleRebuildTarget;
  readonly stale: StaleRebuild;
  readonly scope: RebuildScope;
  /** `only: 'added'` with no refilled change to clear: the answer, nothing planned. */
  readonly nothing?: RebuildResult;
}

/** Looks at the view's staleness before a rebuild plans anything (the in-process rebuild and `--workers` alike). */
export async function scopeRebuild(
  target: ViewTarget,
  mirror: Mirror,
  cursors: CursorStore,
  name: string,
  only: 'added' | undefined,
): Promise<ScopedRebuild> {
  const where = { documents: target.documents, prefix: target.prefix, mirror, cursors, name };
  const stale = await prepareStaleRebuild(where);
  const scope: RebuildScope = { ...(only === undefined ? {} : { only }), refilled: stale.refilled };
  if (only !== 'added' || stale.cleared.size > 0) return { where, stale, scope };
  const left = await finishStaleRebuild(where, stale, { upTo: null, only });
  const nothing: RebuildResult = {
    rebuildId: '',
    commits: 0,
    leaves: 0,
    packages: 0,
    written: 0,
    current: 0,
    bodiesRead: 0,
    commitKey: null,
    cursorMoved: false,
    ranges: 0,
    shards: 0,
    complete: true,
    resumed: false,
    stale: left,
  };
  return { where, stale, scope, nothing };
}

/** After a finish: the stale changes it cleared marked in `view.json`; the rebuild's result. */
export async function closeRebuild(
  scoped: ScopedRebuild,
  summary: RebuildSummary,
  resumed: boolean,
): Promise<RebuildResult> {
  const { only } = scoped.scope;
  const left = await finishStaleRebuild(scoped.where, scoped.stale, {
    upTo: summary.commitKey,
    ...(only === undefined ? {} : { only }),
  });
  const { cursorBefore: _before, cursorAfter: _after, durationMs: _ms, ...rest } = summary;
  return { ...rest, complete: true, resumed, stale: left };
}

/**
 * Builds the whole view from the mirror's history up to the watermark, giving the bytes the incremental upkeep
 * gives, resumable: plans (or takes up the mirror's unfinished rebuild), runs every range (manifests to per-shard
 * records), every shard (fold, latest bodies, guarded index writes), then finishes (the consumer's cursor moved up
 * to the bound). Stopped or failed, its lease is given back and what is done stays done for the next run.
 *
 * @throws {@link ViewRebuildRunningError} when another rebuild of the mirror holds a live lease.
 */
export async function rebuildView(
  target: ViewTarget,
  mirror: Mirror,
  cursors: CursorStore,
  options: RebuildOptions = {},
): Promise<RebuildResult> {
  const name = options.name ?? VIEW_CONSUMER;
  // A place that holds no mirror is said so before anything is planned or written (NoMirrorError).
  await checkMirror(mirror);
  const scoped = await scopeRebuild(target, mirror, cursors, name, options.only);
  if (scoped.nothing !== undefined) return scoped.nothing;
  const stores: RebuildStores = {
    mirror,
    cursors,
    plans: options.plans ?? plansOf(cursors),
    records: options.records ?? new FolderRecordStore(recordsDir(mirror, options.tempDir)),
    documents: target.documents,
  };
  const planned = await planRebuild(stores, {
    name,
    ...pick(options, ['shards', 'rangeManifests', 'minRanges', 'holder', 'holderGone']),
  });
  if (planned.running) throw new ViewRebuildRunningError(planned.rebuildId, planned.holder, planned.leaseUntil);
  const { plan, ranges, shards, resumed } = planned;
  const itemOptions = {
    ...pick(options, ['signal', 'holder', 'reads']),
    ...(target.concurrency === undefined ? {} : { writes: target.concurrency }),
    ...(target.beforeWrite === undefined ? {} : { beforeWrite: target.beforeWrite }),
    scope: scoped.scope,
  };
  const outcomes: ItemOutcome[] = [];
  try {
    for (const item of [...ranges, ...shards] as (RebuildRange | RebuildShard)[]) {
      const outcome =
        'shard' in item
          ? await runIndexShard(stores, plan, item, itemOptions)
          : await runRecordsRange(stores, plan, item, itemOptions);
      outcomes.push(outcome);
      options.onItem?.(outcome);
      if (!outcome.done) {
        await releaseRebuild(stores, { rebuildId: plan.backfillId, name });
        return stoppedResult(plan.backfillId, outcomes, ranges.length, shards.length, resumed, plan.boundKey);
      }
    }
    const summary = await finishRebuild(stores, {
      rebuildId: plan.backfillId,
      name,
      keepCursor: options.only === 'added',
    });
    return await closeRebuild(scoped, summary, resumed);
  } catch (error) {
    await releaseRebuild(stores, { rebuildId: plan.backfillId, name }).catch(() => undefined);
    throw error;
  }
}

/** The plan store of `cursors`, when it is one. */
function plansOf(cursors: CursorStore): BackfillStore {
  const store = cursors as Partial<BackfillStore>;
  if (typeof store.createPlan !== 'function' || typeof store.claimActive !== 'function')
    throw new ViewError(
      'rebuildView needs a plan store: give options.plans, or a cursor store that keeps plans (DynamoStore, LocalStore)',
    );
  return cursors as CursorStore & BackfillStore;
}

/** The folder the records go to by default. */
function recordsDir(mirror: Mirror, tempDir: string | undefined): string {
  if (tempDir !== undefined) return tempDir;
  if (mirror.folder !== undefined) return join(mirror.folder, STATE_DIR, 'view-rebuild');
  return join(tmpdir(), 'catalog-sync-view-rebuild');
}

/** The result of a rebuild stopped with these items done (each item's `n` and counters). */
export function stoppedResult(
  rebuildId: string,
  outcomes: readonly { readonly n: number; readonly totals: BackfillTotals }[],
  ranges: number,
  shards: number,
  resumed: boolean,
  commitKey: string | null,
): RebuildResult {
  const result = { commits: 0, leaves: 0, packages: 0, written: 0, current: 0, bodiesRead: 0 };
  for (const { n, totals } of outcomes) {
    if (n < ranges) {
      result.commits += totals.commits;
      result.leaves += totals.leaves;
      continue;
    }
    const counts = shardCounts(totals);
    result.packages += counts.packages;
    result.written += counts.written;
    result.current += counts.current;
    result.bodiesRead += counts.bodiesRead;
  }
  return { rebuildId, ...result, commitKey, cursorMoved: false, ranges, shards, complete: false, resumed, stale: [] };
}

function pick<T extends object, K extends keyof T>(value: T, keys: readonly K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const key of keys) if (value[key] !== undefined) out[key] = value[key];
  return out;
}
