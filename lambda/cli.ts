import { Command, CommanderError, Option } from 'commander';
import { CatalogClient } from './catalog/catalog-client.js';
import type { CatalogIndex } from './catalog/index.js';
import { HttpClient } from './catalog/http-client.js';
import { redactUrl } from './contract/redact.js';
import { formatTimestamp, MIN_TIMESTAMP, parseTimestamp, type Ticks } from './contract/time.js';
import { collect, FLAG_NAMES, rawSettingsOf, type RunOptions, type StoreOptions } from './cli/options.js';
import { openStores } from './cli/open-stores.js';
import { ProgressReporter } from './cli/progress.js';
import { lagSeconds, runSlice, SyncError } from './sync/engine.js';
import { StoppedBy, type RunSummary } from './contract/run-summary.js';
import { DEFAULT_CONCURRENCY, DEFAULT_CURSOR_NAME, DEFAULT_MAX_COMMITS, DEFAULT_MAX_LEAVES, DEFAULT_SOURCE, parseSettings, SettingsError } from './contract/settings.js';
import { prefix as kuuidPrefix } from './ids/kuuid.js';
import { startAfterKey } from './ids/start-after.js';
import { commitsAfter, pagesAfter } from './sync/commit-stream.js';
import { listQuarantine, retryQuarantine } from './sync/quarantine.js';
import { VERSION } from './contract/index.js';
import { CatalogSyncError, ErrorCode } from './contract/errors.js';

/** Exit codes, as the README documents them. */
export const ExitCode = { done: 0, runFailed: 1, usage: 2 } as const;

/** Raised for usage errors that commander does not catch itself. */
class UsageError extends CatalogSyncError {
  override readonly name = 'UsageError';
  override get code(): ErrorCode {
    return ErrorCode.usage;
  }
}

const DEFAULT_DATA_DIR = './catalog-data';
const DEFAULT_POLL_SECONDS = 60;

function storeOptions(command: Command): Command {
  return command
    .option('--source <url>', 'service index or catalog index URL', DEFAULT_SOURCE)
    .option('--cursor-name <name>', 'cursor name (one table or folder holds many)', DEFAULT_CURSOR_NAME)
    .option('--cursor-table <table>', 'DynamoDB table of the cursor and run log (with --bucket)')
    .option('--bucket <bucket>', 'S3 bucket of the snapshots (with --cursor-table)')
    .option('--prefix <prefix>', 'key prefix in the bucket or folder', '')
    .option('--data-dir <dir>', 'folder of the embedded default (no --cursor-table/--bucket)', DEFAULT_DATA_DIR);
}

function program(): Command {
  const root = new Command('catalog-sync')
    .description('Follow a NuGet V3 catalog: every leaf snapshot to S3 or a local folder, crash-safe and resumable.')
    .version(VERSION, '-V, --version', 'print the version of catalog-sync')
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText(
      'after',
      `
Examples:
  catalog-sync run                                  sync a slice of nuget.org into ./catalog-data
  catalog-sync run --follow                         keep following nuget.org, Ctrl-C to stop
  catalog-sync status                               cursor, catalog head and lag
  catalog-sync run --cursor-table cursors --bucket my-mirror --max-commits 100

Exit codes: 0 done, 1 a run failed, 2 bad usage or settings.`,
    );

  storeOptions(root.command('run'))
    .description('run one bounded slice of the catalog (or keep following with --follow)')
    .option('--depends-on <cursor>', 'a cursor this one must never pass (repeatable)', collect)
    .option('--start <timestamp>', 'cursor to start from when none is stored', MIN_TIMESTAMP)
    .option('--max-commits <n>', `most commits in one run (default ${DEFAULT_MAX_COMMITS})`)
    .option('--max-leaves <n>', `most leaves in one run (default ${DEFAULT_MAX_LEAVES})`)
    .option('--concurrency <n>', `leaves in flight at once (default ${DEFAULT_CONCURRENCY})`)
    .option('--quarantine', 'set aside a leaf that keeps failing, and go on', false)
    .option('--allow-origin <origin>', 'another origin leaves or pages may come from (repeatable)', collect)
    .option('--time-budget <seconds>', 'stop after this many seconds: requests in flight are aborted, the last complete commit is checkpointed')
    .option('--follow', 'slice after slice until caught up, then poll', false)
    .option('--poll-interval <seconds>', `seconds between polls with --follow (default ${DEFAULT_POLL_SECONDS})`)
    .option('--json', 'print each run summary as one JSON line', false)
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

  storeOptions(root.command('status'))
    .description('print the cursor, the catalog head, the lag and the last runs')
    .option('--json', 'print one JSON line', false)
    .addHelpText('after', '\nExamples:\n  catalog-sync status\n  catalog-sync status --cursor-name search --json')
    .action(statusCommand);

  storeOptions(root.command('runs'))
    .description('list recent runs, newest first')
    .option('--since <date>', 'runs started at or after this time (ISO 8601 with Z)')
    .option('--until <date>', 'runs started at or before this second')
    .option('--limit <n>', 'most runs to list', '20')
    .option('--json', 'one JSON line per run', false)
    .addHelpText('after', '\nExamples:\n  catalog-sync runs --limit 5\n  catalog-sync runs --since 2026-11-01T00:00:00Z --json')
    .action(runsCommand);

  root
    .command('keys')
    .description('print the ListObjectsV2 StartAfter value that lists snapshots from a date on')
    .requiredOption('--since <date>', 'ISO 8601 date with Z')
    .option('--prefix <prefix>', 'key prefix in the bucket', '')
    .addHelpText('after', '\nExamples:\n  catalog-sync keys --since 2017-10-31T23:30:32Z\n  aws s3api list-objects-v2 --bucket my-mirror --start-after "$(catalog-sync keys --since 2024-01-01T00:00:00Z)"')
    .action((options: { since: string; prefix: string }) => {
      try {
        process.stdout.write(`${startAfterKey(options.since, options.prefix)}\n`);
      } catch (error) {
        throw new SettingsError('--since', (error as Error).message, { cause: error });
      }
    });

  storeOptions(root.command('quarantine'))
    .description('list the leaves set aside by --quarantine, oldest commit first')
    .option('--json', 'one JSON line per record', false)
    .addHelpText('after', '\nExamples:\n  catalog-sync quarantine\n  catalog-sync quarantine --cursor-table cursors --bucket mirror --json')
    .action(quarantineCommand);

  storeOptions(root.command('retry-quarantine'))
    .description('fetch quarantined leaves again and store those that now succeed')
    .option('--allow-origin <origin>', 'another origin leaves may come from (repeatable)', collect)
    .option('--json', 'one JSON line per record', false)
    .addHelpText('after', '\nExamples:\n  catalog-sync retry-quarantine\n  catalog-sync retry-quarantine --cursor-table cursors --bucket mirror')
    .action(retryQuarantineCommand);
  return root;
}

async function quarantineCommand(options: StoreOptions & { json?: boolean }): Promise<void> {
  const settings = parseSettings(rawSettingsOf(options), FLAG_NAMES);
  const stores = await openStores(options, 4);
  try {
    const records = await listQuarantine(stores.snapshots, settings.prefix);
    for (const record of records) {
      process.stdout.write(
        options.json
          ? `${JSON.stringify({ key: record.key, url: record.url, error: record.error, attempts: record.attempts, id: record.item.id, version: record.item.version, commitTimeStamp: formatTimestamp(record.item.commitTicks) })}\n`
          : `${record.key}\n  ${record.item.id} ${record.item.version} (commit ${formatTimestamp(record.item.commitTicks)}), ${record.attempts} attempt(s)\n  ${record.error}\n`,
      );
    }
    if (!options.json) process.stdout.write(`${records.length} quarantined leaf(s)\n`);
  } finally {
    stores.close();
  }
}

async function retryQuarantineCommand(options: StoreOptions & { allowOrigin?: string[]; json?: boolean }): Promise<void> {
  const settings = parseSettings(rawSettingsOf(options), FLAG_NAMES);
  const stores = await openStores(options, 4);
  const http = new HttpClient({ connections: 4 });
  try {
    const catalog = new CatalogClient(http, settings.source, settings.allowedOrigins);
    const outcomes = await retryQuarantine(catalog, stores.snapshots, settings.prefix);
    for (const outcome of outcomes) {
      process.stdout.write(options.json ? `${JSON.stringify(outcome)}\n` : `${outcome.outcome}: ${outcome.key}${outcome.error ? `\n  ${outcome.error}` : ''}\n`);
    }
    const failing = outcomes.filter((outcome) => outcome.outcome === 'still-failing').length;
    if (!options.json) process.stdout.write(`${outcomes.length - failing} stored, ${failing} still failing\n`);
    if (failing > 0) process.exitCode = ExitCode.runFailed;
  } finally {
    stores.close();
    await http.close();
  }
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
          cursors: stores.cursors,
          snapshots: stores.snapshots,
          runLog: stores.runLog,
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
      printSummary(summary, options.json === true, head);
      if (!options.follow || stop.signal.aborted) return;
      if (deadline !== undefined && Date.now() >= deadline) return;
      if (summary.stoppedBy === StoppedBy.lostRace) return;
      if (summary.caughtUp) {
        await abortableDelay(pollSeconds * 1000, stop.signal);
        if (stop.signal.aborted) return;
      }
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    stores.close();
    await http.close();
  }
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

function printSummary(summary: RunSummary, json: boolean, head: Ticks | undefined): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    return;
  }
  const lag = head === undefined ? '' : `, lag ${formatDuration(lagSeconds(head, parseTimestamp(summary.cursorAfter)))}`;
  process.stdout.write(
    `${summary.stoppedBy}: ${summary.commits} commits, ${summary.leaves} leaves (${summary.deletes} deletes, ${summary.quarantined} quarantined), ` +
      `${formatBytes(summary.bytes)} in ${(summary.durationMs / 1000).toFixed(1)} s\n` +
      `cursor ${summary.cursorName}: ${summary.cursorBefore} -> ${summary.cursorAfter}${lag}\n`,
  );
}

async function statusCommand(options: StoreOptions & { json?: boolean }): Promise<void> {
  const settings = parseSettings(rawSettingsOf(options), FLAG_NAMES);
  const stores = await openStores(options, 4);
  const http = new HttpClient({ connections: 4 });
  try {
    const catalog = new CatalogClient(http, settings.source, settings.allowedOrigins);
    const [cursor, index, runs] = await Promise.all([
      stores.cursors.read(settings.cursorName),
      catalog.getIndex(),
      stores.runLog.listRuns(settings.cursorName, { limit: 5 }),
    ]);
    const cursorTicks = cursor?.value ?? settings.startCursor;
    const behind = pagesAfter(index, cursorTicks);
    const pending = { pages: behind.length, leaves: behind.reduce((n, entry) => n + entry.count, 0) };
    const counted = behind.length <= STATUS_COUNT_PAGES ? await countBehind(catalog, index, cursorTicks) : undefined;
    const status = {
      cursorName: settings.cursorName,
      store: stores.where,
      cursor: cursor ? cursor.stored : null,
      cursorUpdatedAt: cursor?.updatedAt ?? null,
      head: formatTimestamp(index.commitTicks),
      lagSeconds: lagSeconds(index.commitTicks, cursorTicks),
      pagesBehind: pending.pages,
      leavesBehindAtMost: pending.leaves,
      commitsBehind: counted?.commits ?? null,
      leavesBehind: counted?.leaves ?? null,
      lastRuns: runs,
    };
    if (options.json) {
      process.stdout.write(`${JSON.stringify(status)}\n`);
      return;
    }
    process.stdout.write(
      `cursor ${status.cursorName} (${status.store}): ${status.cursor ?? 'none stored (starts at ' + formatTimestamp(cursorTicks) + ')'}\n` +
        `catalog head: ${status.head} (${redactUrl(settings.source)})\n` +
        `lag: ${formatDuration(status.lagSeconds)}, ${describeBehind(pending, counted)}\n`,
    );
    if (runs.length === 0) process.stdout.write('no runs recorded\n');
    else {
      process.stdout.write('last runs:\n');
      for (const run of runs) process.stdout.write(`  ${describeRun(run)}\n`);
    }
  } finally {
    stores.close();
    await http.close();
  }
}

/** Pages behind the cursor that `status` reads to count commits and leaves exactly; past this it estimates. */
const STATUS_COUNT_PAGES = 10;

/** Commits and leaves after `cursor`, up to the head, read from the pages as a run would read them. */
async function countBehind(catalog: CatalogClient, index: CatalogIndex, cursor: Ticks): Promise<{ commits: number; leaves: number }> {
  let commits = 0;
  let leaves = 0;
  for await (const commit of commitsAfter(catalog, index, cursor, index.commitTicks)) {
    commits++;
    leaves += commit.items.length;
  }
  return { commits, leaves };
}

function describeBehind(pending: { pages: number; leaves: number }, counted: { commits: number; leaves: number } | undefined): string {
  const count = (n: number, one: string, many: string): string => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
  if (counted?.commits === 0) return 'caught up';
  if (counted) return `${count(counted.commits, 'commit', 'commits')} (${count(counted.leaves, 'leaf', 'leaves')}) behind, on ${count(pending.pages, 'page', 'pages')}`;
  return `${count(pending.pages, 'page', 'pages')} and at most ${count(pending.leaves, 'leaf', 'leaves')} behind (commits are counted up to ${STATUS_COUNT_PAGES} pages behind)`;
}

async function runsCommand(options: StoreOptions & { since?: string; until?: string; limit: string; json?: boolean }): Promise<void> {
  const settings = parseSettings(rawSettingsOf(options), FLAG_NAMES);
  if (!/^\d+$/.test(options.limit) || Number(options.limit) < 1 || Number(options.limit) > 10_000) {
    throw new SettingsError('--limit', `${JSON.stringify(options.limit)} must be a whole number from 1 to 10000`);
  }
  const bound = (flag: string, value: string | undefined): string | undefined => {
    if (value === undefined) return undefined;
    try {
      return kuuidPrefix(value);
    } catch (error) {
      throw new SettingsError(flag, (error as Error).message, { cause: error });
    }
  };
  const fromId = bound('--since', options.since);
  const toId = bound('--until', options.until);
  const stores = await openStores(options, 4);
  const runs = await stores.runLog.listRuns(settings.cursorName, {
    limit: Number(options.limit),
    ...(fromId === undefined ? {} : { fromId }),
    ...(toId === undefined ? {} : { toId }),
  });
  stores.close();
  for (const run of runs) process.stdout.write(`${options.json ? JSON.stringify(run) : describeRun(run)}\n`);
  if (!options.json && runs.length === 0) process.stdout.write('no runs recorded\n');
}

function describeRun(run: RunSummary): string {
  return `${run.runId}  ${run.stoppedBy.padEnd(11)} ${String(run.commits).padStart(6)} commits ${String(run.leaves).padStart(7)} leaves  ${run.cursorBefore} -> ${run.cursorAfter}  ${(run.durationMs / 1000).toFixed(1)} s`;
}

function formatDuration(seconds: number): string {
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  if (seconds < 3600) return `${(seconds / 60).toFixed(1)} min`;
  if (seconds < 86_400 * 2) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86_400).toFixed(1)} days`;
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** Runs the CLI with `argv` (as `process.argv`); resolves to the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const root = program();
  root.exitOverride();
  for (const command of root.commands) command.exitOverride();
  try {
    await root.parseAsync([...argv]);
    return typeof process.exitCode === 'number' ? process.exitCode : ExitCode.done;
  } catch (error) {
    if (error instanceof CommanderError) {
      // `--help` exits 0; help shown because no command was given (`catalog-sync` alone) is bad usage.
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return ExitCode.done;
      if (error.code === 'commander.help') return error.exitCode === 0 ? ExitCode.done : ExitCode.usage;
      return ExitCode.usage;
    }
    if (error instanceof SettingsError || error instanceof UsageError) {
      process.stderr.write(`catalog-sync: ${error.message}\n`);
      return ExitCode.usage;
    }
    process.stderr.write(`catalog-sync: ${(error as Error)?.message ?? String(error)}\n`);
    return ExitCode.runFailed;
  }
}
