import { resolve } from 'node:path';
import type { Command } from 'commander';
import { ConsumerError } from '../../consumer/errors.js';
import { DEFAULT_READ_AHEAD } from '../../consumer/reader.js';
import { DEFAULT_CURSOR_NAME, SettingsError } from '../../contract/index.js';
import type { ViewStores } from '../open-folder.js';
import { openViewStores } from './view-stores.js';
import { keepView } from '../view-consumer.js';
import { rebuildView } from '../rebuild.js';
import type { ViewStaleness } from '../staleness.js';
import { printStale, rebuiltLine } from './rebuild-lines.js';
import { runRebuildCommand } from './view-rebuild.js';
import { keepViewAfterRebuilds } from './view-wait.js';
import { VIEW_CONSUMER } from '../view-keys.js';
import { viewRefresher } from '../quarantine-refresh.js';
import type { PageItem } from '../../catalog/index.js';
import type { SnapshotReader } from '../../stores/types.js';
import { pollIntervalMs, wholeNumber } from '../../consumer/cli/changes.js';
import { leaseOf, reportStop } from '../../consumer/cli/changes-consumer.js';
import { ExitCode } from '../../runtime/cli/exit-code.js';
import { stopOnSignal } from '../../runtime/cli/stop-on-signal.js';
import { checkDataDir } from '../../runtime/cli/open-stores.js';
import { pickDefined, STORE_OPTION_KEYS, type StoreOptions } from '../../runtime/cli/options.js';
import { storeOptions } from '../../runtime/cli/store-options.js';
import { requireMirror } from '../../consumer/cli/mirror-place.js';
import { readConsumerCursor } from '../../consumer/consumer-cursors.js';
import { holderGone, processHolder } from '../../stores/lease-holder.js';
import { rebuildStartOptions, startViewRebuild } from './view-rebuild-start.js';

/** Options of `catalog-sync view`. */
interface ViewOptions extends StoreOptions {
  rebuild?: boolean;
  added?: boolean;
  follow?: boolean;
  pollInterval?: string;
  consumer: string;
  concurrency?: string;
  shards?: string;
  tempDir?: string;
  workers?: string;
  abandon?: boolean;
  json?: boolean;
  stateMachine?: string;
  wait?: boolean;
}

/** `catalog-sync view`: keep the latest view (`packages/{id}/index.json`) up to the watermark, or rebuild it. */
export function addViewCommand(program: Command): void {
  rebuildStartOptions(storeOptions(program.command('view')))
    .description(
      "keep the latest view of every package (packages/{id}/index.json) up to the mirror's watermark, as the consumer view-latest",
    )
    .option(
      '--rebuild',
      "build the whole view again from the mirror's history (same bytes as the upkeep), then move the consumer's cursor",
      false,
    )
    .option(
      '--added',
      'with --rebuild: only the packages a widening --refilter added, once their refill backfill is done (the cursor stays)',
      false,
    )
    .option('--follow', 'keep going: apply commits as the watermark moves (Ctrl-C to stop)', false)
    .option('--poll-interval <seconds>', 'longest wait between two reads of watermark.json with --follow (default 30)')
    .option('--consumer <name>', "the view consumer's cursor name", VIEW_CONSUMER)
    .option(
      '--concurrency <n>',
      'requests in flight: leaf bodies and index reads and writes together (default 256); with --rebuild, package indexes written at once (default 64)',
    )
    .option(
      '--workers <n>',
      'with --rebuild: worker processes that run its ranges, then its shards (default 1: all in this process)',
    )
    .option(
      '--shards <n>',
      "with --rebuild: shards the manifests' leaves are spread over, one folded in memory at a time (default 64)",
    )
    .option(
      '--temp-dir <folder>',
      "with --rebuild: where its records go (default the mirror's own place: the folder's .catalog-sync/view-rebuild/, or the bucket's view-rebuild/; about 60 bytes a leaf)",
    )
    .option('--abandon', "with --rebuild: abandon the mirror's unfinished rebuild first and start anew", false)
    .option('--json', 'print the summary as one JSON line', false)
    .addHelpText(
      'after',
      `
Examples:
  catalog-sync view                      # bring the view up to the watermark
  catalog-sync view --follow             # and keep it there
  catalog-sync view --rebuild            # from the history (a stopped rebuild resumes)
  catalog-sync view --rebuild --workers 2   # with 2 worker processes
  catalog-sync view --rebuild --added    # after a widening --refilter and its refill: the packages it added
  catalog-sync view --rebuild --state-machine <ARN> --wait   # on AWS (CatalogSync's viewRebuild)
  catalog-sync latest Newtonsoft.Json    # a package's current versions`,
    )
    .action(viewCommand);
}

/** `catalog-sync latest <id>`: a package's current versions, from the view. */
export function addLatestCommand(program: Command): void {
  storeOptions(program.command('latest <id>'))
    .description(
      "print a package's current versions from the latest view (lowest version first by SemVer precedence, as in its index.json; deleted versions marked)",
    )
    .option('--json', 'print the stored index.json (its versions in the same order)', false)
    .action(latestCommand);
}

/**
 * `retry-quarantine`'s hook (lambda/cli.ts hands it over): each leaf stored again refreshes its entry in the latest
 * view, where the mirror has one.
 */
export async function viewAfterStored(
  options: StoreOptions,
  prefix: string,
  reader: SnapshotReader,
): Promise<{ afterStored: (leafKey: string, item: PageItem) => Promise<boolean>; close(): void }> {
  const view = await openViewDocuments(options);
  return { afterStored: viewRefresher(view.documents, prefix, reader), close: view.close };
}

/** The view's documents of the store the options name (for `retry-quarantine`, which keeps the view's entries true). */
export async function openViewDocuments(options: StoreOptions): Promise<Pick<ViewStores, 'documents' | 'close'>> {
  const stores = await openViewStores(options, 'write');
  return { documents: stores.documents, close: stores.close };
}

async function viewCommand(options: ViewOptions): Promise<void> {
  if (options.stateMachine !== undefined || options.wait) return startViewRebuild(options);
  const concurrency = wholeNumber('--concurrency', options.concurrency);
  const maxPollMs = pollIntervalMs(options.pollInterval);
  if (options.rebuild && options.follow)
    throw new SettingsError('--rebuild', 'give --rebuild or --follow, not both (after a rebuild, run view --follow)');
  const shards = wholeNumber('--shards', options.shards);
  const workers = wholeNumber('--workers', options.workers);
  if (workers !== undefined && workers < 1) throw new SettingsError('--workers', `must be at least 1 (got ${workers})`);
  if (!options.rebuild) {
    const flag = [
      ['--shards', shards],
      ['--temp-dir', options.tempDir],
      ['--workers', workers],
      ['--abandon', options.abandon || undefined],
      ['--added', options.added || undefined],
    ].find(([, value]) => value !== undefined);
    if (flag !== undefined) throw new SettingsError(String(flag[0]), 'needs --rebuild');
  }
  if (options.tempDir !== undefined && options.tempDir.trim() === '')
    throw new SettingsError('--temp-dir', 'must not be empty');
  const recordsDir = options.tempDir === undefined ? {} : { recordsDir: resolve(options.tempDir) };
  // Opened to read: the place is checked before anything is written (a folder is then checked for writing).
  const stores = await openViewStores({ ...options, ...recordsDir }, 'read');
  await requireMirror(stores.mirror, options.follow === true);
  if (options.bucket === undefined) await checkDataDir(resolve(options.dataDir), 'write');
  const target = {
    documents: stores.documents,
    prefix: stores.prefix,
    ...(concurrency === undefined ? {} : { concurrency }),
  };
  const stop = stopOnSignal();
  try {
    if (options.rebuild) {
      await runRebuildCommand(
        stores,
        target,
        {
          consumer: options.consumer,
          workers: workers ?? 1,
          abandon: options.abandon === true,
          json: options.json === true,
          ...(options.added ? { only: 'added' as const } : {}),
          ...(shards === undefined ? {} : { shards }),
          ...(concurrency === undefined ? {} : { concurrency }),
        },
        { ...storeOptionsOf(options), ...recordsDir },
        stop.signal,
      );
      return;
    }
    const result = await keepViewAfterRebuilds(
      stores,
      options.consumer,
      options.follow === true,
      maxPollMs,
      stop.signal,
      (signal) =>
        keepView(target, {
          name: options.consumer,
          mirror: stores.mirror,
          cursors: stores.cursors,
          followerCursor: options.cursorName ?? DEFAULT_CURSOR_NAME,
          follow: options.follow === true,
          signal,
          readAhead: DEFAULT_READ_AHEAD,
          poll: { minMs: Math.min(1_000, maxPollMs), maxMs: maxPollMs },
          lease: leaseOf(options.consumer, undefined, options.follow === true),
          // Said as soon as it is found (a --follow runs for days); --json carries it in its summary instead.
          ...(options.json ? {} : { onStale: (stale: ViewStaleness[]) => printStale(options.consumer, stale) }),
        }),
      options.json === true,
    );
    if (result === undefined) return;
    process.stdout.write(
      options.json
        ? `${JSON.stringify(result)}\n`
        : `view ${result.consumer}: ${result.commits} commits, ${result.written} indexes written, ${result.current} already current; cursor ${result.cursorAfter ?? '(none)'} (${result.stoppedBy})\n`,
    );
    reportStop(options.consumer, result);
  } catch (error) {
    if (error instanceof ConsumerError) throw new SettingsError('--consumer', error.message, { cause: error });
    throw error;
  } finally {
    stop.release();
    stores.close();
  }
}

/** The store flags a worker process needs to open the same stores. */
function storeOptionsOf(options: ViewOptions): StoreOptions {
  return pickDefined(options, STORE_OPTION_KEYS);
}

/**
 * `backfill`'s hook (lambda/cli.ts hands it over): after a refill backfill marked widening id filter changes
 * refilled, the latest view, where the mirror has one (its cursor exists), is rebuilt for the packages they added
 * (`view --rebuild --added`), said on stderr (the backfill's stdout is its summary).
 */
export async function viewAfterRefill(options: StoreOptions): Promise<void> {
  const stores = await openViewStores(options, 'write');
  try {
    if ((await readConsumerCursor(stores.cursors, stores.mirror, VIEW_CONSUMER)) === undefined) return;
    process.stderr.write(`view ${VIEW_CONSUMER}: rebuilding the packages the id filter change added\n`);
    const target = { documents: stores.documents, prefix: stores.prefix };
    const result = await rebuildView(target, stores.mirror, stores.cursors, {
      only: 'added',
      plans: stores.plans,
      records: stores.records,
      holder: processHolder(),
      holderGone,
    });
    process.stderr.write(`view ${VIEW_CONSUMER}: ${rebuiltLine(VIEW_CONSUMER, result, true)}\n`);
    printStale(VIEW_CONSUMER, result.stale);
  } finally {
    stores.close();
  }
}

async function latestCommand(id: string, options: StoreOptions & { json?: boolean }): Promise<void> {
  const stores = await openViewStores(options, 'read');
  try {
    await requireMirror(stores.mirror, false);
    const { packageIndexKey } = await import('../view-keys.js');
    const { parseIndex } = await import('../guarded-write.js');
    let key: string;
    try {
      key = packageIndexKey(stores.prefix, id);
    } catch (error) {
      throw new SettingsError('<id>', (error as Error).message, { cause: error });
    }
    const stored = await stores.documents.read(key);
    if (stored === undefined) {
      process.stderr.write(
        `catalog-sync: ${id}: no index at ${stores.documents.where} ${key} (no such package in the view yet; is \`catalog-sync view\` keeping it?)\n`,
      );
      process.exitCode = ExitCode.runFailed;
      return;
    }
    if (options.json) {
      process.stdout.write(`${stored.bytes.toString('utf8')}\n`);
      return;
    }
    const index = parseIndex(stored.bytes, `${stores.documents.where} ${key}`);
    const lines = [`${index.id} (as of commit ${index.commitTimeStamp})`];
    const width = Math.max(...index.versions.map((entry) => entry.version.length));
    // The document's order (SemVer precedence, lowest first), so the text and --json agree; the highest version is last,
    // next to the prompt.
    for (const entry of index.versions) {
      const marks =
        entry.type === 'delete'
          ? ['deleted']
          : entry.quarantined
            ? ['quarantined']
            : [entry.listed ? 'listed' : 'unlisted'];
      if (entry.deprecation)
        marks.push(
          `deprecated${Array.isArray(entry.deprecation['reasons']) ? ` (${(entry.deprecation['reasons'] as unknown[]).join(', ')})` : ''}`,
        );
      if (entry.vulnerabilities) marks.push(`vulnerabilities: ${entry.vulnerabilities.length}`);
      lines.push(`${entry.version.padEnd(width)}  ${marks.join('  ')}  ${entry.commitTimeStamp}`);
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    stores.close();
  }
}
