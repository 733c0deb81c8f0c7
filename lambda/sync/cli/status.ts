import type { Command } from 'commander';
import { CatalogClient, DEFAULT_HTTP_OPTIONS, HttpClient, type CatalogIndex } from '../../catalog/index.js';
import {
  BackfillStatus,
  formatTimestamp,
  parseSettings,
  redactUrl,
  SettingsError,
  type Ticks,
} from '../../contract/index.js';
import type { BackfillStore } from '../../stores/types.js';
import { commitsAfter, lagSeconds, pagesAfter } from '../index.js';
import { ExitCode } from '../../runtime/cli/exit-code.js';
import { describeRun } from './format.js';
import { formatDuration } from '../../runtime/cli/units.js';
import { withFolderSource } from '../../runtime/cli/folder-source.js';
import { openStores } from '../../runtime/cli/open-stores.js';
import { FLAG_NAMES, rawSettingsOf, type StoreOptions } from '../../runtime/cli/options.js';
import { storeOptions } from '../../runtime/cli/store-options.js';
import { verboseHooks, verboseOption } from './verbose.js';
import { describeViewStatus, readViewStatus } from './view-status.js';

/**
 * What `status --consumer <name>` prints instead: that named consumer's cursor, lag and holder, as `consumers` does.
 * The program (lambda/cli.ts) hands over the consumer wing's printer: the follower does not import the consumer.
 */
export type ConsumerStatusPrinter = (options: StoreOptions, names: readonly string[], json: boolean) => Promise<void>;

/** `catalog-sync status`: the cursor and the last runs (read locally), then the catalog head and the lag. */
export function addStatusCommand(program: Command, printConsumers: ConsumerStatusPrinter): void {
  verboseOption(storeOptions(program.command('status')))
    .description('print the cursor and the last runs, and the catalog head and the lag when the source answers')
    .option('--json', 'print one JSON line', false)
    .option(
      '--require-source',
      'exit 1 when the source does not answer (by default status still prints the stored state and exits 0)',
      false,
    )
    .option(
      '--consumer <name>',
      'a named consumer of the mirror instead: its cursor, lag behind watermark.json and holder, offline (as `consumers`)',
    )
    .addHelpText(
      'after',
      "\nExamples:\n  catalog-sync status\n  catalog-sync status --cursor-name search --json\n  catalog-sync status --require-source   # for a health check: exit 1 when the catalog cannot be read\n  catalog-sync status --consumer indexer  # a consumer's lag behind the mirror, no catalog request",
    )
    .action((options, command: Command) => statusCommand(options, command, printConsumers));
}

/** Attempts at the source's index: status answers with the stored state in seconds even when the source is down. */
const STATUS_ATTEMPTS = 2;

/** What the source said: the head and how far behind the cursor is, or why it did not answer. */
type SourceView =
  | {
      readonly ok: true;
      readonly index: CatalogIndex;
      readonly pending: { pages: number; leaves: number };
      readonly counted: { commits: number; leaves: number } | undefined;
    }
  | { readonly ok: false; readonly error: string };

async function readSource(catalog: CatalogClient, cursor: Ticks): Promise<SourceView> {
  try {
    const index = await catalog.getIndex();
    const behind = pagesAfter(index, cursor);
    const pending = { pages: behind.length, leaves: behind.reduce((n, entry) => n + entry.count, 0) };
    const counted = behind.length <= STATUS_COUNT_PAGES ? await countBehind(catalog, index, cursor) : undefined;
    return { ok: true, index, pending, counted };
  } catch (error) {
    return { ok: false, error: ((error as Error)?.message ?? String(error)).replace(/\s*\n\s*/g, ' ') };
  }
}

async function statusCommand(
  options: StoreOptions & { json?: boolean; requireSource?: boolean; consumer?: string },
  command: Command,
  printConsumers: ConsumerStatusPrinter,
): Promise<void> {
  if (options.consumer !== undefined) {
    if (options.requireSource)
      throw new SettingsError('--require-source', "not with --consumer (a consumer's status reads no catalog)");
    return printConsumers(options, [options.consumer], options.json === true);
  }
  // A folder remembers its source: without --source, status compares the folder with it, not with nuget.org.
  options = await withFolderSource(options, command);
  const settings = parseSettings(rawSettingsOf(options), FLAG_NAMES);
  const stores = await openStores(options, 4, process.env, 'read');
  const http = new HttpClient({ connections: 4, retry: { ...DEFAULT_HTTP_OPTIONS.retry, attempts: STATUS_ATTEMPTS } });
  verboseHooks(options.verbose, http);
  try {
    // The stored state first, from the store alone: it never needs the network.
    const [cursor, runs, backfill, view] = await Promise.all([
      stores.cursors.read(settings.cursorName),
      stores.runLog.listRuns(settings.cursorName, { limit: 5 }),
      runningBackfill(stores.backfills, settings.cursorName),
      readViewStatus(stores.snapshots, settings.prefix),
    ]);
    const cursorTicks = cursor?.value ?? settings.startCursor;
    const source = await readSource(new CatalogClient(http, settings.source, settings.allowedOrigins), cursorTicks);
    const status = {
      cursorName: settings.cursorName,
      store: stores.where,
      cursor: cursor ? cursor.stored : null,
      cursorCommitId: cursor?.commitId ?? null,
      cursorUpdatedAt: cursor?.updatedAt ?? null,
      source: redactUrl(settings.source),
      sourceError: source.ok ? null : source.error,
      head: source.ok ? formatTimestamp(source.index.commitTicks) : null,
      // No cursor yet: nothing has been synced, and a lag from 0001-01-01 would say nothing.
      lagSeconds: source.ok && cursor ? lagSeconds(source.index.commitTicks, cursorTicks) : null,
      pagesBehind: source.ok ? source.pending.pages : null,
      leavesBehindAtMost: source.ok ? source.pending.leaves : null,
      commitsBehind: source.ok ? (source.counted?.commits ?? null) : null,
      leavesBehind: source.ok ? (source.counted?.leaves ?? null) : null,
      backfill,
      view,
      lastRuns: runs,
    };
    if (!source.ok && options.requireSource) process.exitCode = ExitCode.runFailed;
    if (options.json) {
      process.stdout.write(`${JSON.stringify(status)}\n`);
      return;
    }
    const moved = cursor
      ? [
          cursor.commitId && `commit ${cursor.commitId}`,
          cursor.updatedAt && `moved ${cursor.updatedAt}`,
          cursor.runId && `by run ${cursor.runId}`,
        ]
          .filter(Boolean)
          .join(', ')
      : '';
    process.stdout.write(
      cursor
        ? `cursor ${status.cursorName} (${status.store}): ${cursor.stored}\n${moved === '' ? '' : `  ${moved}\n`}`
        : `cursor ${status.cursorName} (${status.store}): no cursor yet (a run starts at ${formatTimestamp(cursorTicks)})\n`,
    );
    if (source.ok) {
      process.stdout.write(`catalog head: ${status.head} (${status.source})\n`);
      process.stdout.write(
        cursor
          ? `lag: ${formatDuration(status.lagSeconds!)}, ${describeBehind(source.pending, source.counted)}\n`
          : `to sync: ${describeBehind(source.pending, source.counted)}\n`,
      );
    } else {
      process.stdout.write(`catalog head: unknown: the source did not answer (${source.error})\n`);
    }
    if (backfill) process.stdout.write(`${describeBackfill(backfill)}\n`);
    if (view) process.stdout.write(`${describeViewStatus(view)}\n`);
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
async function countBehind(
  catalog: CatalogClient,
  index: CatalogIndex,
  cursor: Ticks,
): Promise<{ commits: number; leaves: number }> {
  let commits = 0;
  let leaves = 0;
  for await (const commit of commitsAfter(catalog, index, cursor, index.commitTicks)) {
    commits++;
    leaves += commit.items.length;
  }
  return { commits, leaves };
}

function describeBehind(
  pending: { pages: number; leaves: number },
  counted: { commits: number; leaves: number } | undefined,
): string {
  const count = (n: number, one: string, many: string): string =>
    `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
  if (counted?.commits === 0) return 'caught up';
  if (counted)
    return `${count(counted.commits, 'commit', 'commits')} (${count(counted.leaves, 'leaf', 'leaves')}) behind, on ${count(pending.pages, 'page', 'pages')}`;
  return `${count(pending.pages, 'page', 'pages')} and at most ${count(pending.leaves, 'leaf', 'leaves')} behind (commits are counted up to ${STATUS_COUNT_PAGES} pages behind)`;
}

/** A running backfill of a cursor, as `status` shows it. */
export interface BackfillStatusView {
  readonly backfillId: string;
  readonly start: string;
  readonly bound: string;
  readonly ranges: number;
  readonly rangesDone: number;
  /** Leaves stored so far, summed over the ranges (done or checkpointed). */
  readonly leavesStored: number;
  /** The plan's estimate of the leaves in all its ranges. */
  readonly leaves: number;
  readonly createdAt: string;
  readonly leaseUntil: string;
  /** False once the lease lapsed: the backfill died (a rerun resumes it), and followers are no longer held back. */
  readonly leaseLive: boolean;
}

/** The newest backfill of `cursorName` when it is running (not finished), with its ranges' progress; else null. */
async function runningBackfill(backfills: BackfillStore, cursorName: string): Promise<BackfillStatusView | null> {
  const plan = await backfills.newestPlan(cursorName);
  if (plan === undefined || plan.status !== BackfillStatus.running) return null;
  const ranges = await backfills.listRanges(cursorName, plan.backfillId);
  return {
    backfillId: plan.backfillId,
    start: plan.start,
    bound: plan.bound,
    ranges: plan.ranges,
    rangesDone: ranges.filter((range) => range.done).length,
    leavesStored: ranges.reduce((sum, range) => sum + range.leaves, 0),
    leaves: plan.leaves,
    createdAt: plan.createdAt,
    leaseUntil: new Date(plan.leaseUntil).toISOString(),
    leaseLive: plan.leaseUntil > Date.now(),
  };
}

function describeBackfill(backfill: BackfillStatusView): string {
  return (
    `backfill ${backfill.backfillId} running: ${backfill.rangesDone}/${backfill.ranges} ranges done, ` +
    `${backfill.leavesStored.toLocaleString('en-US')} of about ${backfill.leaves.toLocaleString('en-US')} leaves stored, ${backfill.start} -> ${backfill.bound}\n` +
    `  lease until ${backfill.leaseUntil} (${backfill.leaseLive ? 'live: followers wait' : 'lapsed: the backfill is not running; `catalog-sync backfill` resumes it'})`
  );
}
