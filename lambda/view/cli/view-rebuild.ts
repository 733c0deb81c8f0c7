/**
 * `catalog-sync view --rebuild`: the view built again from the mirror's history. `--workers 1` (the default) runs
 * the plan, ranges, shards and finish in this process (`rebuildView`); `--workers N` forks N worker processes that
 * run the same ranges, then the same shards (a barrier between the two), as a Step Functions map runs Lambdas; this
 * process plans, keeps the lease and finishes. Stopped or failed, the lease is given back and a rerun resumes.
 */
import { fileURLToPath } from 'node:url';
import { DEFAULT_BACKFILL_LEASE_SECONDS, SettingsError } from '../../contract/index.js';
import type { RebuildRange, RebuildShard } from '../../contract/view-rebuild.js';
import { ExitCode } from '../../runtime/cli/exit-code.js';
import type { StoreOptions } from '../../runtime/cli/options.js';
import type { PoolResult } from '../../runtime/cli/worker-pool.js';
import { holderGone, processHolder } from '../../stores/lease-holder.js';
import { ViewRebuildMismatchError, ViewRebuildRunningError } from '../errors.js';
import type { ViewStores } from '../open-folder.js';
import { closeRebuild, rebuildView, scopeRebuild, stoppedResult, type RebuildResult } from '../rebuild.js';
import type { RebuildScope } from '../rebuild/scope.js';
import { abandonRebuild, finishRebuild, releaseRebuild } from '../rebuild/finish.js';
import { planRebuild } from '../rebuild/plan.js';
import type { ViewTarget } from '../view-consumer.js';
import { printStale, rebuiltLine } from './rebuild-lines.js';
import type { RecordsPlace } from './view-stores.js';

/** What a rebuild's worker process is told when it starts: the parent's stores, the plan, the lease's holder. */
export interface RebuildWorkerOptions extends StoreOptions, RecordsPlace {
  readonly consumer: string;
  readonly rebuildId: string;
  readonly leaseHolder: string;
  /** Package indexes written at once (`--concurrency`). */
  readonly writes?: number;
  /** What the rebuild covers (the planner's look at the view's staleness). */
  readonly scope: RebuildScope;
}

/** The rebuild's flags, checked. */
export interface RebuildFlags {
  readonly consumer: string;
  readonly workers: number;
  readonly shards?: number;
  readonly abandon: boolean;
  readonly json: boolean;
  readonly concurrency?: number;
  /** `added`: only the packages that refilled widening id filter changes added (`--added`). */
  readonly only?: 'added';
}

/** Runs `view --rebuild`; prints the summary (or why it stopped) and sets the exit code. */
export async function runRebuildCommand(
  stores: ViewStores,
  target: ViewTarget,
  flags: RebuildFlags,
  storeOptions: StoreOptions & RecordsPlace,
  signal: AbortSignal,
): Promise<void> {
  const name = flags.consumer;
  if (flags.abandon) {
    const abandoned = await abandonRebuild(stores, { name });
    process.stderr.write(
      abandoned === undefined ? 'no unfinished view rebuild to abandon\n' : `abandoned view rebuild ${abandoned}\n`,
    );
  }
  const holder = processHolder();
  try {
    const result =
      flags.workers === 1
        ? await rebuildView(target, stores.mirror, stores.cursors, {
            name,
            signal,
            plans: stores.plans,
            records: stores.records,
            holder,
            holderGone,
            ...(flags.shards === undefined ? {} : { shards: flags.shards }),
            ...(flags.only === undefined ? {} : { only: flags.only }),
          })
        : await withWorkers(stores, flags, storeOptions, holder, signal);
    print(result, flags);
    if (!result.complete) process.exitCode = ExitCode.runFailed;
  } catch (error) {
    if (error instanceof ViewRebuildMismatchError)
      throw new SettingsError(error.differences.map(() => '--shards').join(', '), error.message, { cause: error });
    if (error instanceof ViewRebuildRunningError) {
      process.stderr.write(`catalog-sync: ${error.message}\n`);
      process.exitCode = ExitCode.runFailed;
      return;
    }
    throw error;
  }
}

/** The plan in this process, its items in `flags.workers` worker processes, its finish here. */
async function withWorkers(
  stores: ViewStores,
  flags: RebuildFlags,
  storeOptions: StoreOptions & RecordsPlace,
  holder: string,
  signal: AbortSignal,
): Promise<RebuildResult> {
  const name = flags.consumer;
  const scoped = await scopeRebuild(stores, stores.mirror, stores.cursors, name, flags.only);
  if (scoped.nothing !== undefined) return scoped.nothing;
  const planned = await planRebuild(stores, {
    name,
    holder,
    holderGone,
    // Every worker gets ranges of its own, four each.
    minRanges: flags.workers * 4,
    ...(flags.shards === undefined ? {} : { shards: flags.shards }),
  });
  if (planned.running) throw new ViewRebuildRunningError(planned.rebuildId, planned.holder, planned.leaseUntil);
  const { plan, ranges, shards, resumed } = planned;
  const ref = { rebuildId: plan.backfillId, name };
  const leaseMs = DEFAULT_BACKFILL_LEASE_SECONDS * 1000;
  // The lease keeps upkeep waiting while this process lives; a killed rebuild lets it lapse.
  const lease = setInterval(
    () => void stores.plans.renewLease(plan.cursorName, plan.backfillId, Date.now() + leaseMs, holder).catch(() => {}),
    Math.min(60_000, leaseMs / 3),
  ).unref();
  let finished = false;
  try {
    const states = await stores.plans.listRanges(plan.cursorName, plan.backfillId);
    const done = new Set(states.filter((state) => state.done).map((state) => state.n));
    const stages = [
      ranges.filter((range) => !done.has(range.n)).map((range) => ({ ...range, weight: range.manifests })),
      shards.filter((shard) => !done.has(shard.n)).map((shard) => ({ ...shard, weight: 1 })),
    ];
    const result = signal.aborted
      ? ({ kind: 'stopped' } as const)
      : await runPool(stages, flags, storeOptions, plan.backfillId, holder, scoped.scope, signal);
    if (result.kind === 'failed')
      throw new Error(
        result.n === -1
          ? `no worker process could start: ${result.message}`
          : `item ${result.n} of view rebuild ${plan.backfillId} failed ${result.attempts} times: ${result.message}; the cursor did not move, run \`catalog-sync view --rebuild\` again to retry (done items are skipped)`,
      );
    if (result.kind === 'stopped') {
      const after = await stores.plans.listRanges(plan.cursorName, plan.backfillId);
      const doneNow = after.filter((state) => state.done).map((state) => ({ n: state.n, totals: state }));
      return stoppedResult(plan.backfillId, doneNow, plan.ranges, plan.shards, resumed, plan.boundKey);
    }
    const summary = await finishRebuild(stores, { ...ref, keepCursor: flags.only === 'added' });
    finished = true;
    return await closeRebuild(scoped, summary, resumed);
  } finally {
    clearInterval(lease);
    if (!finished) await releaseRebuild(stores, ref).catch(() => undefined);
  }
}

/** The worker processes over the two stages; a stop of `signal` stops them. */
async function runPool(
  stages: ((RebuildRange | RebuildShard) & { weight: number })[][],
  flags: RebuildFlags,
  storeOptions: StoreOptions & RecordsPlace,
  rebuildId: string,
  holder: string,
  scope: RebuildScope,
  signal: AbortSignal,
): Promise<PoolResult> {
  // Loaded here, not with the command: it brings child_process, which no other command needs.
  const { WorkerPool } = await import('../../runtime/cli/worker-pool.js');
  const options: RebuildWorkerOptions = {
    ...storeOptions,
    consumer: flags.consumer,
    rebuildId,
    leaseHolder: holder,
    scope,
    ...(flags.concurrency === undefined ? {} : { writes: flags.concurrency }),
  };
  const pool = new WorkerPool(
    fileURLToPath(new URL('./view-rebuild-child.js', import.meta.url)),
    stages,
    flags.workers,
    options,
    {
      onProgress: () => undefined,
      onItemDone: () => undefined,
      onItemFailed: (n, attempt, message) =>
        void process.stderr.write(`view rebuild: item ${n} failed (attempt ${attempt}): ${message}\n`),
    },
  );
  const stop = (): void => pool.stop();
  signal.addEventListener('abort', stop, { once: true });
  try {
    return await pool.done;
  } finally {
    signal.removeEventListener('abort', stop);
  }
}

function print(result: RebuildResult, flags: RebuildFlags): void {
  const added = flags.only === 'added';
  process.stdout.write(flags.json ? `${JSON.stringify(result)}\n` : `${rebuiltLine(flags.consumer, result, added)}\n`);
  if (!flags.json) printStale(flags.consumer, result.stale);
}
