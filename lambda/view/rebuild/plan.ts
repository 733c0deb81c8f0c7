/**
 * A rebuild's plan: the lease (one rebuild at a time per mirror, taken up again by a rerun), the bound (the last
 * manifest at or before the watermark), the listing of the manifests cut into ranges, and the items files the maps
 * (or the local workers) hand out.
 */
import { parseManifest } from '../../consumer/documents.js';
import { readWatermark } from '../../consumer/mirror.js';
import { BackfillStatus } from '../../contract/backfill.js';
import { manifestKey } from '../../contract/keys.js';
import { DEFAULT_BACKFILL_LEASE_SECONDS, SettingsError } from '../../contract/settings.js';
import { formatTimestamp, MIN_TIMESTAMP } from '../../contract/time.js';
import {
  DEFAULT_RANGE_MANIFESTS,
  DEFAULT_REBUILD_SHARDS,
  MAX_RANGE_MANIFESTS,
  MAX_REBUILD_SHARDS,
  VIEW_REBUILD_KIND,
  type RebuildRange,
  type RebuildShard,
  type ViewRebuildPlan,
} from '../../contract/view-rebuild.js';
import { id as newId } from '../../ids/kuuid.js';
import { takePlan, type PlanDifference } from '../../stores/plan-lease.js';
import { ViewRebuildMismatchError, ViewRebuildPlanError } from '../errors.js';
import { VIEW_CONSUMER } from '../view-keys.js';
import { cutManifestRanges, markStep } from './cut-manifests.js';
import { listManifestSlices } from './list-manifests.js';
import { rebuildPlanName, type RebuildStores } from './stores.js';

/** Options of {@link planRebuild}. */
export interface PlanRebuildOptions {
  /** The view consumer's name (default `view-latest`). */
  readonly name?: string;
  /** Shards (default {@link DEFAULT_REBUILD_SHARDS}); asked explicitly, a rerun must match the unfinished plan. */
  readonly shards?: number;
  /** Manifests a range holds (default {@link DEFAULT_RANGE_MANIFESTS}); asked explicitly, must match on a rerun. */
  readonly rangeManifests?: number;
  /** Ranges are cut smaller when they would be fewer than this (the local workers: every worker gets ranges). */
  readonly minRanges?: number;
  /** Who plans (the CLI: `<pid>@<host>`; on AWS the execution's ARN): its own live lease is taken again. */
  readonly holder?: string;
  /** True when a live lease's holder is known to be gone (a CLI process of this host that died). */
  readonly holderGone?: (holder: string) => boolean;
  /** Seconds the lease holds (default {@link DEFAULT_BACKFILL_LEASE_SECONDS}). */
  readonly leaseSeconds?: number;
  /** The listing: time slices at the start and listings in flight (default 1: a folder; S3: 64). */
  readonly slices?: number;
  readonly inFlight?: number;
  /** Stops the listing: no plan is made. */
  readonly signal?: AbortSignal;
  /** The id a new plan gets (default a new kuuid id). */
  readonly rebuildId?: string;
}

/** What {@link planRebuild} did: a plan to run, or the rebuild that holds the mirror's view. */
export type PlannedRebuild =
  | {
      readonly running: false;
      readonly plan: ViewRebuildPlan;
      readonly ranges: readonly RebuildRange[];
      readonly shards: readonly RebuildShard[];
      /** The mirror's unfinished plan was taken up again (same id, items and bound). */
      readonly resumed: boolean;
    }
  | {
      readonly running: true;
      readonly rebuildId: string;
      readonly holder: string | undefined;
      readonly leaseUntil: number | undefined;
      /** Its plan is still being made. */
      readonly planning: boolean;
    };

/**
 * Plans a rebuild of the mirror's view, or takes up its unfinished one (same id, items files read again, lease
 * taken). One at a time per mirror: while another holds the plan with a live lease, answers `running` (not an error:
 * the state machine ends as `AlreadyRunning`). A rerun asking other `shards` or `rangeManifests` than the unfinished
 * plan's is refused with {@link ViewRebuildMismatchError}. A plan whose items files are gone is abandoned and a new
 * one is made.
 *
 * A new plan's bound is the last manifest at or before the watermark read now; the manifests up to it are listed
 * and cut into ranges; the items files are written, then the plan item (the plan's commit point).
 */
export async function planRebuild(stores: RebuildStores, options: PlanRebuildOptions = {}): Promise<PlannedRebuild> {
  const shards = checked('shards', options.shards, DEFAULT_REBUILD_SHARDS, MAX_REBUILD_SHARDS);
  const rangeManifests = checked(
    'rangeManifests',
    options.rangeManifests,
    DEFAULT_RANGE_MANIFESTS,
    MAX_RANGE_MANIFESTS,
  );
  const minRanges = checked('minRanges', options.minRanges, 1, MAX_RANGE_MANIFESTS);
  const name = options.name ?? VIEW_CONSUMER;
  const planName = rebuildPlanName(stores.mirror, name);
  const leaseMs = (options.leaseSeconds ?? DEFAULT_BACKFILL_LEASE_SECONDS) * 1000;
  const taken = await takePlan(stores.plans, planName, {
    newId: options.rebuildId ?? newId(),
    leaseMs,
    ...(options.holder === undefined ? {} : { holder: options.holder }),
    ...(options.holderGone === undefined ? {} : { holderGone: options.holderGone }),
    differences: (plan) => differencesOf(plan as ViewRebuildPlan, options),
    usable: async (plan) =>
      (await stores.records.getItems(plan.backfillId, 'ranges').catch(() => undefined)) !== undefined &&
      (await stores.records.getItems(plan.backfillId, 'shards').catch(() => undefined)) !== undefined,
  });
  if (taken.taken === 'mismatch') throw new ViewRebuildMismatchError(taken.planId, taken.differences);
  if (taken.taken === 'running')
    return {
      running: true,
      rebuildId: taken.planId,
      holder: taken.holder,
      leaseUntil: taken.leaseUntil,
      planning: taken.planning,
    };
  if (taken.taken === 'resumed') {
    const plan = taken.plan as ViewRebuildPlan;
    if (plan.kind !== VIEW_REBUILD_KIND)
      throw new ViewRebuildPlanError(`plan ${plan.backfillId} of ${planName} is not a view rebuild's`);
    const { ranges, shards: items } = await readItems(stores, plan);
    return { running: false, plan, ranges, shards: items, resumed: true };
  }
  try {
    return await planAnew(stores, taken.id, { ...options, name, shards, rangeManifests, minRanges }, planName, leaseMs);
  } catch (error) {
    // No plan: the next planner may claim the mirror at once.
    if ((await stores.plans.readPlan(planName, taken.id)) === undefined)
      await stores.plans.releaseActive(planName, taken.id).catch(() => undefined);
    throw error;
  }
}

async function planAnew(
  stores: RebuildStores,
  rebuildId: string,
  options: PlanRebuildOptions & { name: string; shards: number; rangeManifests: number; minRanges: number },
  planName: string,
  leaseMs: number,
): Promise<PlannedRebuild> {
  const { mirror } = stores;
  const watermark = await readWatermark(mirror);
  const list = (step: number) =>
    watermark === undefined
      ? Promise.resolve([])
      : listManifestSlices(mirror, watermark.commitKey, {
          step,
          ...(options.slices === undefined ? {} : { slices: options.slices }),
          ...(options.inFlight === undefined ? {} : { inFlight: options.inFlight }),
          ...(options.signal === undefined ? {} : { signal: options.signal }),
        });
  let step = markStep(options.rangeManifests);
  let slices = await list(step);
  const listed = slices.reduce((sum, slice) => sum + slice.count, 0);
  const size = Math.min(options.rangeManifests, Math.max(1, Math.ceil(listed / options.minRanges)));
  // Ranges smaller than the marks allow (a small mirror, many workers): listed again with marks close enough.
  if (markStep(size) < step) {
    step = markStep(size);
    slices = await list(step);
  }
  const ranges = cutManifestRanges(slices, size);
  const manifests = ranges.reduce((sum, range) => sum + range.manifests, 0);
  const boundKey = ranges.at(-1)?.hi ?? null;
  const bound = boundKey === null ? undefined : await boundCommit(stores, boundKey);
  const items: RebuildShard[] = Array.from({ length: options.shards }, (_, shard) => ({
    n: ranges.length + shard,
    shard,
  }));
  const cursor = await stores.cursors.read(planName);
  const plan: ViewRebuildPlan = {
    backfillId: rebuildId,
    cursorName: planName,
    source: mirror.where,
    prefix: mirror.prefix,
    start: cursor === undefined ? MIN_TIMESTAMP : formatTimestamp(cursor.value),
    bound: bound?.commitTimeStamp ?? MIN_TIMESTAMP,
    ranges: ranges.length,
    leaves: 0,
    createdAt: new Date().toISOString(),
    status: BackfillStatus.running,
    leaseUntil: Date.now() + leaseMs,
    ...(options.holder === undefined ? {} : { leaseHolder: options.holder }),
    kind: VIEW_REBUILD_KIND,
    consumer: options.name,
    shards: options.shards,
    rangeManifests: options.rangeManifests,
    manifests,
    boundKey,
    boundCommitId: bound?.commitId ?? null,
  };
  await stores.records.putItems(rebuildId, 'ranges', ranges);
  await stores.records.putItems(rebuildId, 'shards', items);
  if (!(await stores.plans.createPlan(plan)))
    throw new ViewRebuildPlanError(`view rebuild ${rebuildId} of ${planName} exists already`);
  return { running: false, plan, ranges, shards: items, resumed: false };
}

/** The bound's commit id and timestamp, from its manifest (the cursor is moved to it at the end). */
async function boundCommit(
  stores: RebuildStores,
  boundKey: string,
): Promise<{ commitId: string; commitTimeStamp: string }> {
  const key = manifestKey(stores.mirror.prefix, boundKey);
  const where = `${stores.mirror.where} ${key}`;
  const bytes = await stores.mirror.store.getBytes(key);
  if (bytes === undefined) throw new ViewRebuildPlanError(`${where}: listed but gone when read`);
  const manifest = parseManifest(bytes, boundKey, where);
  return { commitId: manifest.commitId, commitTimeStamp: manifest.commitTimeStamp };
}

/** A plan's items, from its items files. */
export async function readItems(
  stores: RebuildStores,
  plan: ViewRebuildPlan,
): Promise<{ ranges: RebuildRange[]; shards: RebuildShard[] }> {
  const ranges = await stores.records.getItems(plan.backfillId, 'ranges');
  const shards = await stores.records.getItems(plan.backfillId, 'shards');
  if (ranges?.length !== plan.ranges || shards?.length !== plan.shards)
    throw new ViewRebuildPlanError(
      `view rebuild ${plan.backfillId}: its items files (${stores.records.itemsKey(plan.backfillId, 'ranges')}, ${stores.records.itemsKey(plan.backfillId, 'shards')}) are missing or do not list ${plan.ranges} ranges and ${plan.shards} shards; abandon it to plan anew (\`catalog-sync view --rebuild --abandon\`)`,
    );
  return { ranges: ranges as RebuildRange[], shards: shards as RebuildShard[] };
}

function differencesOf(plan: ViewRebuildPlan, options: PlanRebuildOptions): PlanDifference[] {
  const differences: PlanDifference[] = [];
  if (options.shards !== undefined && plan.shards !== options.shards)
    differences.push({ name: 'shards', plan: String(plan.shards), asked: String(options.shards) });
  if (options.rangeManifests !== undefined && plan.rangeManifests !== options.rangeManifests)
    differences.push({
      name: 'rangeManifests',
      plan: String(plan.rangeManifests),
      asked: String(options.rangeManifests),
    });
  return differences;
}

function checked(name: string, value: number | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (!(Number.isSafeInteger(value) && value >= 1 && value <= max))
    throw new SettingsError(name, `must be a whole number from 1 to ${max} (got ${JSON.stringify(value)})`);
  return value;
}
