import { type Command, Option } from 'commander';
import { CatalogClient, HttpClient } from '../../catalog/index.js';
import {
  DEFAULT_CONCURRENCY,
  DEFAULT_MAX_COMMITS,
  DEFAULT_MAX_LEAVES,
  leafMemoryBudget,
  MIN_TIMESTAMP,
  parseSettings,
  processMemory,
  StoppedBy,
  type RunSummary,
  type Ticks,
} from '../../contract/index.js';
import { LeafMemory, runSlice, SyncError } from '../index.js';
import { ExitCode } from '../../runtime/cli/exit-code.js';
import { rememberSource, withFolderSource } from '../../runtime/cli/folder-source.js';
import { FollowBackoff, followCanRetry } from './follow-retry.js';
import { noteIgnoredStart, printFailure, printOutage } from './run-messages.js';
import { parseSecondsFlag, parseTimeFlag, runCeiling } from '../../runtime/cli/time-flags.js';
import { isEmptyPoll, isPollingStop, printFollowLine, printSummary, type StopCause } from './format.js';
import { FollowTotals, FollowWaitNotice } from './follow-status.js';
import { heldOffLine } from './held-off.js';
import { openStores } from '../../runtime/cli/open-stores.js';
import { checkIdFilterFlags, idFilterOptions } from './id-filter-flags.js';
import { collect, FLAG_NAMES, rawSettingsOf, type RunOptions } from '../../runtime/cli/options.js';
import { ProgressReporter } from './progress.js';
import { storeOptions } from '../../runtime/cli/store-options.js';
import type { RunLogStore } from '../../stores/types.js';
import { verboseHooks, verboseOption } from './verbose.js';

const DEFAULT_POLL_SECONDS = 60;

/** `catalog-sync run`: one bounded slice, or slice after slice with `--follow`. */
export function addRunCommand(program: Command): void {
  verboseOption(idFilterOptions(storeOptions(program.command('run'))))
    .description('run one bounded slice of the catalog (or keep following with --follow)')
    .option('--depends-on <cursor>', 'a cursor this one must never pass (repeatable)', collect)
    .option(
      '--start <timestamp>',
      'cursor to start from when none is stored (a date alone: midnight UTC)',
      MIN_TIMESTAMP,
    )
    .option('--max-commits <n>', `most commits in one run (default ${DEFAULT_MAX_COMMITS})`)
    .option('--max-leaves <n>', `most leaves in one run (default ${DEFAULT_MAX_LEAVES})`)
    .option('--concurrency <n>', `leaves in flight at once (default ${DEFAULT_CONCURRENCY})`)
    .option('--quarantine', 'set aside a leaf that keeps failing, and go on', false)
    .option('--allow-origin <origin>', 'another origin leaves or pages may come from (repeatable)', collect)
    .option(
      '--until <timestamp>',
      'take no commit after this time (a date alone: midnight UTC); with --follow, stop once it is reached',
    )
    .option(
      '--delay <duration>',
      "stay this far behind the clock: take no commit newer than now minus it (90s, 10m, 2h; as NuGetMirror's delay)",
    )
    .option(
      '--time-budget <seconds>',
      'stop after this many seconds: requests in flight are aborted, the last complete commit is checkpointed',
    )
    .option(
      '--follow',
      'slice after slice until caught up, then poll: one line per slice that moved, nothing for an empty poll',
      false,
    )
    .option('--poll-interval <seconds>', `seconds between polls with --follow (default ${DEFAULT_POLL_SECONDS})`)
    .option('--json', 'print each run summary as one JSON line (with --follow: each slice that moved)', false)
    .addOption(new Option('--no-progress', 'no progress bar even on a terminal'))
    .addHelpText(
      'after',
      `
Examples:
  catalog-sync run --max-commits 10
  catalog-sync run --follow --json
  catalog-sync run --follow --delay 10m           # stay 10 minutes behind the head, as NuGetMirror does
  catalog-sync run --until 2024-01-01 --max-commits 100000
  catalog-sync run --source http://127.0.0.1:8080/v3/index.json --data-dir /tmp/mirror
  AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:8000 AWS_ENDPOINT_URL_S3=http://127.0.0.1:4569 S3_FORCE_PATH_STYLE=true \\
    catalog-sync run --cursor-table cursors --bucket mirror`,
    )
    .action(runCommand);
}

function timeBudgetDeadline(options: RunOptions): number | undefined {
  if (options.timeBudget === undefined) return undefined;
  return Date.now() + parseSecondsFlag('--time-budget', options.timeBudget) * 1000;
}

async function runCommand(given: RunOptions, command: Command): Promise<void> {
  const options = await withFolderSource(given, command);
  const startGiven = command.getOptionValueSource('start') === 'cli';
  if (startGiven && options.start !== undefined) parseTimeFlag('--start', options.start);
  const settings = parseSettings(rawSettingsOf(options), FLAG_NAMES);
  const deadline = timeBudgetDeadline(options);
  const pollSeconds =
    options.pollInterval === undefined
      ? DEFAULT_POLL_SECONDS
      : parseSecondsFlag('--poll-interval', options.pollInterval);
  const ceiling = runCeiling(options.until, options.delay);
  const stores = await openStores(options, settings.concurrency);
  if (startGiven) noteIgnoredStart(settings, await stores.cursors.read(settings.cursorName));
  await checkIdFilterFlags(stores, settings, options);
  // The folder remembers a source once a run has read its catalog, not before: a run that failed to reach a mistyped
  // source leaves the folder's memory as it was (its cursor never moved).
  let catalogRead = false;
  let sourceRemembered = options.cursorTable !== undefined;
  const rememberReadSource = async (): Promise<void> => {
    if (sourceRemembered || !catalogRead) return;
    sourceRemembered = true;
    await rememberSource(options.dataDir, settings.cursorName, settings.source);
  };
  const http = new HttpClient({ connections: settings.concurrency });
  const verbose = verboseHooks(options.verbose, http);
  const catalog = new CatalogClient(http, settings.source, settings.allowedOrigins);
  // Leaf bodies in flight: a quarter of this process's memory, or LEAF_MEMORY_MB (contract/leaf-memory.ts).
  const leafMemory = new LeafMemory(leafMemoryBudget(process.env, processMemory()));
  const stop = new AbortController();
  // Failed slices of `--follow` in a row: it waits longer after each (from 1 s, or the poll interval when shorter,
  // to 5 min, or the poll interval when longer) and says so once per outage.
  let setupProven = false;
  const backoff = new FollowBackoff(Math.min(1, pollSeconds) * 1000, Math.max(300, pollSeconds) * 1000);
  // Waiting between polls of --follow: no request is in flight, so stopping is only stopping.
  let polling = false;
  const onSignal = (): void => {
    if (stop.signal.aborted) process.exit(130);
    stop.abort();
    if (!options.json)
      process.stderr.write(
        polling
          ? '\nstopping\n'
          : '\nstopping: aborting requests in flight and checkpointing the last complete commit (Ctrl-C again to quit now)\n',
      );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  /** The bound the user set, in words, for a run that stopped there (`until`). */
  const cause: StopCause = ceiling === undefined ? {} : { ceiling: ceiling.describe };
  const progress = new ProgressReporter(process.stderr, {
    enabled: options.progress !== false && !options.json,
    maxCommits: settings.maxCommits,
    maxLeaves: settings.maxLeaves,
    ...(deadline === undefined ? {} : { deadline }),
  });
  // Following, for a person: said once caught up and waiting (so quiet is not taken for stuck); the whole follow
  // added up when it ends (a Ctrl-C too).
  const notice = new FollowWaitNotice(process.stderr, {
    enabled: options.follow === true && !options.json,
    inPlace: process.stderr.isTTY === true && options.progress !== false,
    pollSeconds,
  });
  const totals = new FollowTotals();
  let lastHead: Ticks | undefined;
  let failed = false;
  try {
    for (;;) {
      let head: Ticks | undefined;
      let summary: RunSummary;
      const bound = ceiling?.at();
      try {
        summary = await runSlice(settings, {
          catalog,
          cursors: verbose.cursors(stores.cursors),
          ...(verbose.logger === undefined ? {} : { logger: verbose.logger }),
          snapshots: stores.snapshots,
          // Following: an empty poll (nothing new, nothing failed) is not logged as a run, so `runs` and `status`
          // show the slices that moved, not a no-op a minute.
          runLog: options.follow ? skippingEmptyPolls(stores.runLog, stop.signal) : stores.runLog,
          backfills: stores.backfills,
          leafMemory,
          signal: stop.signal,
          ...(deadline === undefined ? {} : { deadline }),
          ...(bound === undefined ? {} : { ceiling: bound }),
          onIndex: (ticks) => {
            head = ticks;
            lastHead = ticks;
            catalogRead = true;
            progress.start(ticks);
          },
          onProgress: (p) => {
            notice.done();
            progress.update(p);
          },
        });
      } catch (error) {
        progress.finish();
        notice.done();
        await rememberReadSource();
        if (!(error instanceof SyncError)) throw error;
        totals.add(error.summary);
        const retry =
          options.follow === true &&
          !stop.signal.aborted &&
          followCanRetry(error.cause, { setupProven }) &&
          (deadline === undefined || Date.now() < deadline);
        if (!retry) {
          failed = true;
          process.exitCode = printFailure(error, options, head, cause);
          return;
        }
        // Following through an outage: the slice's summary if it moved, one line when the outage begins, then wait.
        if (error.summary.commits > 0) printFollowLine(error.summary, options.json === true, head);
        const wait = backoff.failed();
        if (backoff.outageFailures === 1) printOutage(error, wait);
        process.exitCode = ExitCode.runFailed;
        await abortableDelay(
          deadline === undefined ? wait : Math.min(wait, Math.max(0, deadline - Date.now())),
          stop.signal,
        );
        if (stop.signal.aborted || (deadline !== undefined && Date.now() >= deadline)) return;
        continue;
      }
      progress.finish();
      await rememberReadSource();
      totals.add(summary);
      if (!isEmptyPoll(summary)) notice.done();
      setupProven = true;
      if (backoff.outageFailures > 0) {
        process.stderr.write(
          `catalog-sync: recovered after ${backoff.outageFailures} failed slice${backoff.outageFailures === 1 ? '' : 's'} (${Math.round(backoff.outageMs() / 1000)} s); following again\n`,
        );
        backoff.reset();
        process.exitCode = ExitCode.done;
      }
      if (!options.follow) printSummary(summary, options.json === true, head, cause);
      // Following: one line per slice that moved, nothing for an empty poll.
      else if (!isEmptyPoll(summary) && !interruptedPoll(summary, stop.signal))
        printFollowLine(summary, options.json === true, head, cause);
      // Held off: say by what and until when (stderr; stdout keeps its one summary line).
      if (!options.follow && !options.json && summary.stoppedBy === StoppedBy.backfill) {
        const line = await heldOffLine(stores.backfills, settings.cursorName);
        if (line !== undefined) process.stderr.write(`${line}\n`);
      }
      if (!options.follow || stop.signal.aborted) return;
      // `--until` reached below the head: a follower has nothing more to wait for (`--delay`'s bound moves: it polls).
      if (ceiling?.fixed && summary.stoppedBy === StoppedBy.until) return;
      if (deadline !== undefined && Date.now() >= deadline) return;
      if (summary.stoppedBy === StoppedBy.lostRace) return;
      // Caught up (to the head, or to --delay behind it), or a backfill of this cursor is running (it moves the cursor
      // when done): poll.
      if (summary.caughtUp || isPollingStop(summary)) {
        // A time budget bounds the wait too: the last poll is not waited out past it.
        const wait =
          deadline === undefined
            ? pollSeconds * 1000
            : Math.min(pollSeconds * 1000, Math.max(0, deadline - Date.now()));
        notice.waiting(summary, cause, Date.now() + wait);
        polling = true;
        await abortableDelay(wait, stop.signal);
        polling = false;
        if (stop.signal.aborted) return;
        if (deadline !== undefined && Date.now() >= deadline) return;
      }
    }
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    notice.done();
    if (options.follow && !options.json && !failed) {
      const total = totals.summary(
        stop.signal.aborted
          ? StoppedBy.interrupted
          : deadline !== undefined && Date.now() >= deadline
            ? StoppedBy.timeBudget
            : undefined,
      );
      if (total !== undefined) printSummary(total, false, lastHead, cause);
    }
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    stores.close();
    await http.close();
  }
}

/** A poll of `run --follow` cut short by Ctrl-C before it found anything: as empty as an empty poll. */
function interruptedPoll(summary: RunSummary, signal: AbortSignal): boolean {
  return signal.aborted && summary.commits === 0 && summary.error === undefined;
}

/** The run log, less the empty polls of `run --follow` (and a poll Ctrl-C cut short before it found anything). */
function skippingEmptyPolls(runLog: RunLogStore, signal: AbortSignal): RunLogStore {
  return {
    appendRun: (summary, expiresAt, options) =>
      isEmptyPoll(summary) || interruptedPoll(summary, signal)
        ? Promise.resolve()
        : runLog.appendRun(summary, expiresAt, options),
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
