import { availableParallelism } from 'node:os';
import { type Command, Option } from 'commander';
import { CatalogClient, HttpClient } from '../../catalog/index.js';
import {
  type BackfillRange,
  DEFAULT_BACKFILL_LEASE_SECONDS,
  LEAF_MEMORY_ENV,
  leafMemoryBudget,
  processMemory,
  DEFAULT_CONCURRENCY,
  DEFAULT_RANGE_LEAVES,
  formatTimestamp,
  MAX_RANGE_LEAVES,
  MIN_TIMESTAMP,
  parseSettings,
  parseTimeInput,
  parseTimestamp,
  SettingsError,
  type Ticks,
} from '../../contract/index.js';
import {
  abandonBackfill,
  BackfillMismatchError,
  catalogHeadOrUnknown,
  finishBackfill,
  planBackfill,
  releaseBackfillLease,
  type RangeOutcome,
} from '../index.js';
import type { WorkerOptions } from './backfill-messages.js';
import { rememberSource, withFolderSource } from '../../runtime/cli/folder-source.js';
import { fileURLToPath } from 'node:url';
import type { WorkerPool } from '../../runtime/cli/worker-pool.js';
import { BackfillProgress } from './backfill-progress.js';
import { holderGone, processHolder } from '../../stores/lease-holder.js';
import { ExitCode } from '../../runtime/cli/exit-code.js';
import { printSummary } from '../../sync/cli/format.js';
import { openStores } from '../../runtime/cli/open-stores.js';
import { checkIdFilterFlags, idFilterOptions } from '../../sync/cli/id-filter-flags.js';
import { readIdFilterRecord } from '../../sync/filter-record.js';
import {
  collect,
  FLAG_NAMES,
  pickDefined,
  rawSettingsOf,
  STORE_OPTION_KEYS,
  type StoreOptions,
} from '../../runtime/cli/options.js';
import { storeOptions } from '../../runtime/cli/store-options.js';
import { verboseHooks, verboseOption } from '../../sync/cli/verbose.js';

/** Options of `catalog-sync backfill`. */
export interface BackfillOptions extends StoreOptions {
  workers?: string;
  until?: string;
  rangeLeaves?: string;
  start?: string;
  concurrency?: string;
  quarantine?: boolean;
  allowOrigin?: string[];
  include?: string[];
  exclude?: string[];
  refilter?: boolean;
  stateMachine?: string;
  abandon?: boolean;
  json?: boolean;
  progress?: boolean;
}

/**
 * What runs after a backfill that refilled a widening id filter change (`filter.json`'s `refilledBy`): the program
 * (lambda/cli.ts) hands over the latest view's rebuild of the packages it added; the backfill does not import the view.
 */
export type AfterRefill = (options: StoreOptions) => Promise<void>;

/** Most worker processes: more than this on one machine only adds contention. */
const MAX_WORKERS = 256;

/** `catalog-sync backfill`: the catalog up to now (or --until) in ranges run by N worker processes. */
export function addBackfillCommand(program: Command, afterRefill?: AfterRefill): void {
  verboseOption(idFilterOptions(storeOptions(program.command('backfill'))))
    .description('store the catalog up to its head (or --until) fast: ranges of pages run by parallel worker processes')
    .option('--workers <n>', 'worker processes (default: the number of cores)')
    .option('--depends-on <cursor>', 'a cursor this one must never pass: B is at most its value (repeatable)', collect)
    .option(
      '--until <timestamp>',
      'the bound B: store commits up to this time (default: the catalog head when planned)',
    )
    .option(
      '--range-leaves <n>',
      `leaves per range when planning (default ${DEFAULT_RANGE_LEAVES}, at most ${MAX_RANGE_LEAVES})`,
    )
    .option(
      '--start <timestamp>',
      'cursor to start from when none is stored (a date alone: midnight UTC)',
      MIN_TIMESTAMP,
    )
    .option('--concurrency <n>', `leaves in flight at once in each worker (default ${DEFAULT_CONCURRENCY})`)
    .option('--quarantine', 'set aside a leaf that keeps failing, and go on', false)
    .option('--allow-origin <origin>', 'another origin leaves or pages may come from (repeatable)', collect)
    .option(
      '--state-machine <arn>',
      'start the CatalogBackfill state machine on AWS instead, and print the execution ARN',
    )
    .option(
      '--abandon',
      'abandon the unfinished backfill of the cursor first (what it stored stays), then plan anew',
      false,
    )
    .option('--json', 'print the summary as one JSON line', false)
    .addOption(new Option('--no-progress', 'no progress bar even on a terminal'))
    .addHelpText(
      'after',
      `
A rerun resumes an unfinished backfill (same plan, done ranges skipped); while one runs, \`run\` of the same
cursor returns at once with stoppedBy "backfill". The cursor moves to B only when every range is done.
One backfill of a cursor at a time: while another runs (here, elsewhere or on AWS), this one exits 1 naming it.
A rerun with another --until or --range-leaves than the unfinished plan's exits 2 naming both: run it without
them to resume, or add --abandon to plan anew.

Examples:
  catalog-sync backfill                                 nuget.org up to now into ./catalog-data
  catalog-sync backfill --workers 8 --json
  catalog-sync backfill --until 2020-01-01T00:00:00Z --cursor-table cursors --bucket my-mirror
  catalog-sync backfill --state-machine arn:aws:states:us-east-1:123456789012:stateMachine:CatalogBackfill`,
    )
    .action((options: BackfillOptions, command: Command) => backfillCommand(options, command, afterRefill));
}

/** The flags' values, checked: every error names its flag. */
interface Checked {
  workers: number;
  until: Ticks | undefined;
  rangeLeaves: number | undefined;
}

function positiveInteger(flag: string, value: string, max: number): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > max) {
    throw new SettingsError(flag, `${JSON.stringify(value)} must be a whole number from 1 to ${max}`);
  }
  return Number(value);
}

export function checkBackfillOptions(options: BackfillOptions): Checked {
  const workers =
    options.workers === undefined
      ? Math.min(MAX_WORKERS, availableParallelism())
      : positiveInteger('--workers', options.workers, MAX_WORKERS);
  let until: Ticks | undefined;
  if (options.until !== undefined) {
    try {
      until = parseTimeInput(options.until);
    } catch (error) {
      throw new SettingsError(
        '--until',
        `${JSON.stringify(options.until)} is not a timestamp (ISO 8601 with Z, e.g. 2024-01-01T00:00:00Z, or a date alone, 2024-01-01, meaning midnight UTC)`,
        { cause: error },
      );
    }
  }
  const rangeLeaves =
    options.rangeLeaves === undefined
      ? undefined
      : positiveInteger('--range-leaves', options.rangeLeaves, MAX_RANGE_LEAVES);
  return { workers, until, rangeLeaves };
}

async function backfillCommand(given: BackfillOptions, command: Command, afterRefill?: AfterRefill): Promise<void> {
  const options = await withFolderSource(given, command);
  const checked = checkBackfillOptions(options);
  if (options.stateMachine !== undefined) {
    // The state machine's functions filter by their own INCLUDE_IDS/EXCLUDE_IDS (the construct's includeIds/excludeIds).
    if (options.include !== undefined || options.exclude !== undefined || options.refilter) {
      throw new SettingsError(
        '--include/--exclude',
        "with --state-machine, the filter is the construct's (includeIds/excludeIds): deploy it there",
      );
    }
    await startStateMachine(options.stateMachine, options, checked);
    return;
  }
  const settings = parseSettings(rawSettingsOf(options), FLAG_NAMES);
  const stores = await openStores(options, settings.concurrency);
  await checkIdFilterFlags(stores, settings, options);
  // Remembered once the catalog was read (a new plan) or the cursor moved (finished), not before: see run.ts.
  const remember = (): Promise<void> =>
    options.cursorTable === undefined
      ? rememberSource(options.dataDir, settings.cursorName, settings.source)
      : Promise.resolve();
  const http = new HttpClient({ connections: 4 });
  verboseHooks(options.verbose, http);
  const catalog = new CatalogClient(http, settings.source, settings.allowedOrigins);
  const deps = {
    catalog,
    cursors: stores.cursors,
    snapshots: stores.snapshots,
    runLog: stores.runLog,
    backfills: stores.backfills,
  };
  const leaseMs = DEFAULT_BACKFILL_LEASE_SECONDS * 1000;
  let pool: WorkerPool<BackfillRange & { weight: number }, RangeOutcome, WorkerOptions> | undefined;
  let signals = 0;
  const onSignal = (): void => {
    if (++signals > 1) {
      pool?.kill();
      process.exit(130);
    }
    pool?.stop();
    if (!options.json)
      process.stderr.write('\nstopping: each worker checkpoints its range (Ctrl-C again to quit now)\n');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let lease: NodeJS.Timeout | undefined;
  let held: string | undefined;
  let refilled = false;
  try {
    if (options.abandon) {
      const abandoned = await abandonBackfill(settings, deps);
      process.stderr.write(
        abandoned === undefined
          ? 'no unfinished backfill to abandon\n'
          : `abandoned backfill ${abandoned.backfillId} (planned ${abandoned.createdAt}, B ${abandoned.bound}); planning anew\n`,
      );
    }
    const holder = processHolder();
    const { plan, ranges, resumed } = await planBackfill(settings, deps, {
      ...(checked.until === undefined ? {} : { until: checked.until }),
      ...(checked.rangeLeaves === undefined ? {} : { rangeLeaves: checked.rangeLeaves }),
      holder,
      holderGone,
    }).catch((error: unknown) => {
      // Bad usage (exit 2), naming the flags that differ.
      if (error instanceof BackfillMismatchError) {
        throw new SettingsError(
          error.differences.map((d) => (d.name === 'until' ? '--until' : '--range-leaves')).join(', '),
          error.message,
          { cause: error },
        );
      }
      throw error;
    });
    held = plan.backfillId;
    if (!resumed) await remember();
    const states = await stores.backfills.listRanges(settings.cursorName, plan.backfillId);
    const done = new Set(states.filter((state) => state.done).map((state) => state.n));
    const progress = new BackfillProgress(process.stderr, !options.json && options.progress !== false, plan);
    progress.planned(
      resumed,
      done.size,
      states.filter((state) => state.done).reduce((sum, state) => sum + state.leaves, 0),
    );
    // The plan's lease keeps followers of the cursor away while this process lives; a killed backfill lets it lapse.
    lease = setInterval(
      () => {
        stores.backfills
          .renewLease(settings.cursorName, plan.backfillId, Date.now() + leaseMs, holder)
          .catch(() => undefined);
      },
      Math.min(60_000, leaseMs / 3),
    ).unref();
    // Loaded here, not with the command: it brings child_process, which no other command needs.
    const { WorkerPool } = await import('../../runtime/cli/worker-pool.js');
    if (signals === 0) {
      // Each worker's share of the parent's leaf memory budget.
      const budget = leafMemoryBudget(process.env, processMemory());
      pool = new WorkerPool(
        fileURLToPath(new URL('./backfill-child.js', import.meta.url)),
        [ranges.filter((range) => !done.has(range.n)).map((range) => ({ ...range, weight: range.leaves }))],
        checked.workers,
        { ...workerOptions(options), leaseHolder: holder },
        {
          onProgress: (n, leaves) => progress.onProgress(n, leaves),
          onItemDone: (outcome) => progress.onRangeDone(outcome),
          onItemFailed: (n, attempt, message) => progress.onRangeFailed(n, attempt, message),
        },
        {
          ...process.env,
          [LEAF_MEMORY_ENV]: String(Math.max(1, Math.floor(budget.bytes / checked.workers / 1024 / 1024))),
        },
      );
    }
    const result = pool === undefined ? ({ kind: 'stopped' } as const) : await pool.done;
    progress.finish();
    if (result.kind === 'failed') {
      const what =
        result.n === -1
          ? 'no worker process could start'
          : `range ${result.n} of backfill ${plan.backfillId} failed ${result.attempts} times`;
      process.stderr.write(
        `catalog-sync: backfill failed: ${what}: ${result.message}\nThe cursor did not move; run \`catalog-sync backfill\` again to retry (done ranges are skipped).\n`,
      );
      process.exitCode = ExitCode.runFailed;
      return;
    }
    if (result.kind === 'stopped' || signals > 0) {
      const after = await stores.backfills.listRanges(settings.cursorName, plan.backfillId);
      const doneNow = after.filter((state) => state.done).length;
      process.stderr.write(
        `catalog-sync: backfill ${plan.backfillId} stopped: ${doneNow} of ${plan.ranges} ranges done, the others checkpointed; ` +
          'the cursor did not move. Run `catalog-sync backfill` again to resume.\n',
      );
      process.exitCode = ExitCode.runFailed;
      return;
    }
    progress.line(`finishing backfill ${plan.backfillId}`);
    // With --until (this one's, or the resumed plan's) the catalog goes on past B: the head now says how much lag is
    // left, and whether the backfill stopped at its bound (`until`) or at the head (`caught-up`).
    const head = plan.until === undefined ? undefined : await catalogHeadOrUnknown(catalog);
    const summary = await finishBackfill(settings, deps, plan.backfillId, head === undefined ? {} : { head });
    held = undefined;
    await remember();
    printSummary(
      summary,
      options.json === true,
      head ?? parseTimestamp(plan.bound),
      plan.until === undefined ? {} : { ceiling: `--until ${options.until ?? plan.until}` },
    );
    const { history } = await readIdFilterRecord(stores.snapshots, settings.prefix);
    refilled = history.some((change) => change.refilledBy === plan.backfillId);
  } finally {
    if (lease) clearInterval(lease);
    // Stopped or failed (not finished): give the lease back, so the follower goes on and a rerun resumes at once.
    if (held !== undefined) await releaseBackfillLease(settings, deps, held).catch(() => undefined);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    stores.close();
    await http.close();
  }
  // Once the backfill's own stores are closed: the view opens its own.
  if (refilled && afterRefill !== undefined) await afterRefill(options);
}

function workerOptions(options: BackfillOptions): WorkerOptions {
  return pickDefined(options, [
    ...STORE_OPTION_KEYS,
    'start',
    'concurrency',
    'quarantine',
    'allowOrigin',
    'include',
    'exclude',
  ]) as WorkerOptions;
}

async function startStateMachine(arn: string, options: BackfillOptions, checked: Checked): Promise<void> {
  // Loaded only here: it loads the AWS SDK's Step Functions client. It checks the ARN (an error naming --state-machine).
  const { startBackfillExecution } = await import('../lambda/start-execution.js');
  const { executionArn } = await startBackfillExecution(arn, {
    ...(checked.until === undefined ? {} : { until: formatTimestamp(checked.until) }),
    ...(checked.rangeLeaves === undefined ? {} : { rangeLeaves: checked.rangeLeaves }),
    ...(options.abandon ? { abandon: true } : {}),
  });
  process.stdout.write(options.json ? `${JSON.stringify({ executionArn })}\n` : `started ${executionArn}\n`);
}
