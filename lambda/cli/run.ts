import { Command, Option } from 'commander';
import { CatalogClient, HttpClient } from '../catalog/index.js';
import { DEFAULT_CONCURRENCY, DEFAULT_MAX_COMMITS, DEFAULT_MAX_LEAVES, MIN_TIMESTAMP, parseSettings, SettingsError, StoppedBy, type RunSummary, type Ticks } from '../contract/index.js';
import { runSlice, SyncError } from '../sync/index.js';
import { ExitCode } from './exit-code.js';
import { isEmptyPoll, printFollowLine, printSummary } from './format.js';
import { heldOffLine } from './held-off.js';
import { openStores } from './open-stores.js';
import { collect, FLAG_NAMES, rawSettingsOf, type RunOptions } from './options.js';
import { ProgressReporter } from './progress.js';
import { storeOptions } from './store-options.js';
import type { RunLogStore } from '../stores/types.js';
import { verboseHooks, verboseOption } from './verbose.js';

const DEFAULT_POLL_SECONDS = 60;

/** `catalog-sync run`: one bounded slice, or slice after slice with `--follow`. */
export function addRunCommand(program: Command): void {
  verboseOption(storeOptions(program.command('run')))
    .description('run one bounded slice of the catalog (or keep following with --follow)')
    .option('--depends-on <cursor>', 'a cursor this one must never pass (repeatable)', collect)
    .option('--start <timestamp>', 'cursor to start from when none is stored (a date alone: midnight UTC)', MIN_TIMESTAMP)
    .option('--max-commits <n>', `most commits in one run (default ${DEFAULT_MAX_COMMITS})`)
    .option('--max-leaves <n>', `most leaves in one run (default ${DEFAULT_MAX_LEAVES})`)
    .option('--concurrency <n>', `leaves in flight at once (default ${DEFAULT_CONCURRENCY})`)
    .option('--quarantine', 'set aside a leaf that keeps failing, and go on', false)
    .option('--allow-origin <origin>', 'another origin leaves or pages may come from (repeatable)', collect)
    .option('--time-budget <seconds>', 'stop after this many seconds: requests in flight are aborted, the last complete commit is checkpointed')
    .option('--follow', 'slice after slice until caught up, then poll: one line per slice that moved, nothing for an empty poll', false)
    .option('--poll-interval <seconds>', `seconds between polls with --follow (default ${DEFAULT_POLL_SECONDS})`)
    .option('--json', 'print each run summary as one JSON line (with --follow: each slice that moved)', false)
    .addOption(new Option('--no-progress', 'no progress bar even on a terminal'))
    .addHelpText(
      'after',
      `
Examples:
  catalog-sync run --max-commits 10
  catalog-sync run --follow --json
  catalog-sync run --source http://127.0.0.1:8080/v3/index.json --data-dir /tmp/mirror
  AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:8000 AWS_ENDPOINT_URL_S3=http://127.0.0.1:4569 S3_FORCE_PATH_STYLE=true \\
    catalog-sync run --cursor-table cursors --bucket mirror`,
    )
    .action(runCommand);
}

function timeBudgetDeadline(options: RunOptions): number | undefined {
  if (options.timeBudget === undefined) return undefined;
  if (!/^\d+(\.\d+)?$/.test(options.timeBudget) || Number(options.timeBudget) <= 0) {
    throw new SettingsError('--time-budget', `${JSON.stringify(options.timeBudget)} must be a positive number of seconds`);
  }
  return Date.now() + Number(options.timeBudget) * 1000;
}

async function runCommand(options: RunOptions): Promise<void> {
  const settings = parseSettings(rawSettingsOf(options), FLAG_NAMES);
  const deadline = timeBudgetDeadline(options);
  let pollSeconds = DEFAULT_POLL_SECONDS;
  if (options.pollInterval !== undefined) {
    if (!/^\d+(\.\d+)?$/.test(options.pollInterval) || Number(options.pollInterval) <= 0) {
      throw new SettingsError('--poll-interval', `${JSON.stringify(options.pollInterval)} must be a positive number of seconds`);
    }
    pollSeconds = Number(options.pollInterval);
  }
  const stores = await openStores(options, settings.concurrency);
  const http = new HttpClient({ connections: settings.concurrency });
  const verbose = verboseHooks(options.verbose, http);
  const catalog = new CatalogClient(http, settings.source, settings.allowedOrigins);
  const stop = new AbortController();
  const onSignal = (): void => {
    if (stop.signal.aborted) process.exit(130);
    stop.abort();
    if (!options.json) process.stderr.write('\nstopping: aborting requests in flight and checkpointing the last complete commit (Ctrl-C again to quit now)\n');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const progress = new ProgressReporter(process.stderr, {
    enabled: options.progress !== false && !options.json,
    maxCommits: settings.maxCommits,
    maxLeaves: settings.maxLeaves,
    ...(deadline === undefined ? {} : { deadline }),
  });
  try {
    for (;;) {
      let head: Ticks | undefined;
      let summary: RunSummary;
      try {
        summary = await runSlice(settings, {
          catalog,
          cursors: verbose.cursors(stores.cursors),
          ...(verbose.logger === undefined ? {} : { logger: verbose.logger }),
          snapshots: stores.snapshots,
          // Following: an empty poll (nothing new, nothing failed) is not logged as a run, so `runs` and `status`
          // show the slices that moved, not a no-op a minute.
          runLog: options.follow ? skippingEmptyPolls(stores.runLog) : stores.runLog,
          backfills: stores.backfills,
          signal: stop.signal,
          ...(deadline === undefined ? {} : { deadline }),
          onIndex: (ticks) => {
            head = ticks;
            progress.start(ticks);
          },
          onProgress: (p) => progress.update(p),
        });
      } catch (error) {
        progress.finish();
        if (error instanceof SyncError) {
          printSummary(error.summary, options.json === true, head);
          process.stderr.write(`catalog-sync: run failed: ${(error.cause as Error)?.message ?? error.message}\n`);
          process.exitCode = ExitCode.runFailed;
          return;
        }
        throw error;
      }
      progress.finish();
      if (!options.follow) printSummary(summary, options.json === true, head);
      // Following: one line per slice that moved, nothing for an empty poll.
      else if (!isEmptyPoll(summary)) printFollowLine(summary, options.json === true, head);
      // Held off: say by what and until when (stderr; stdout keeps its one summary line).
      if (!options.follow && !options.json && summary.stoppedBy === StoppedBy.backfill) {
        const line = await heldOffLine(stores.backfills, settings.cursorName);
        if (line !== undefined) process.stderr.write(`${line}\n`);
      }
      if (!options.follow || stop.signal.aborted) return;
      if (deadline !== undefined && Date.now() >= deadline) return;
      if (summary.stoppedBy === StoppedBy.lostRace) return;
      // Caught up, or a backfill of this cursor is running (it moves the cursor when done): poll.
      if (summary.caughtUp || summary.stoppedBy === StoppedBy.backfill) {
        // A time budget bounds the wait too: the last poll is not waited out past it.
        const wait = deadline === undefined ? pollSeconds * 1000 : Math.min(pollSeconds * 1000, Math.max(0, deadline - Date.now()));
        await abortableDelay(wait, stop.signal);
        if (stop.signal.aborted) return;
        if (deadline !== undefined && Date.now() >= deadline) return;
      }
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    stores.close();
    await http.close();
  }
}

/** The run log, less the empty polls of `run --follow`. */
function skippingEmptyPolls(runLog: RunLogStore): RunLogStore {
  return {
    appendRun: (summary, expiresAt) => (isEmptyPoll(summary) ? Promise.resolve() : runLog.appendRun(summary, expiresAt)),
    listRuns: (cursorName, query) => runLog.listRuns(cursorName, query),
  };
}

function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
