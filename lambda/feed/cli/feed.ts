import { resolve } from 'node:path';
import type { Command } from 'commander';
import { HttpClient } from '../../catalog/http-client.js';
import { ConsumerError, ConsumerHandlerError } from '../../consumer/errors.js';
import { DEFAULT_READ_AHEAD } from '../../consumer/reader.js';
import { leaseOf, reportStop } from '../../consumer/cli/changes-consumer.js';
import { pollIntervalMs, wholeNumber } from '../../consumer/cli/changes.js';
import { requireMirror } from '../../consumer/cli/mirror-place.js';
import { DEFAULT_CURSOR_NAME, parseSettings, SettingsError } from '../../contract/index.js';
import { FEED_CONSUMER } from '../../contract/feed.js';
import { withFolderSource } from '../../runtime/cli/folder-source.js';
import { checkDataDir, type DataDirAccess } from '../../runtime/cli/open-stores.js';
import { collect, FLAG_NAMES, type StoreOptions } from '../../runtime/cli/options.js';
import { ExitCode } from '../../runtime/cli/exit-code.js';
import { stopOnSignal } from '../../runtime/cli/stop-on-signal.js';
import { stoppedByRun } from '../../contract/errors.js';
import { storeOptions } from '../../runtime/cli/store-options.js';
import { FeedError } from '../errors.js';
import { keepFeed, rebuildFeed } from '../feed-consumer.js';
import type { FeedCounts } from '../feed-context.js';
import { FeedKeys, checkBaseUrl } from '../feed-keys.js';
import { folderFeedStores, type FeedStores } from '../open-folder.js';

/** Options of `catalog-sync feed`. */
interface FeedOptions extends StoreOptions {
  baseUrl?: string;
  packageBaseAddress?: string;
  include?: string[];
  exclude?: string[];
  allowOrigin?: string[];
  rebuild?: boolean;
  follow?: boolean;
  pollInterval?: string;
  consumer: string;
  concurrency?: string;
  downloads?: string;
  json?: boolean;
}

/** `catalog-sync feed`: keep the private feed (`feed/`) of the mirror's packages up to its latest view. */
export function addFeedCommand(program: Command): void {
  storeOptions(program.command('feed'))
    .description(
      "keep a private NuGet feed under feed/: each included package downloaded from the source, checked against its leaf's hash and stored, with the V3 documents dotnet restore reads, as the consumer feed (after view-latest)",
    )
    .option(
      '--base-url <url>',
      'the URL at which {prefix}feed/ is served (every URL in the documents is under it); needed once, then kept in feed-state/settings.json',
    )
    .option(
      '--package-base-address <url>',
      "where the source serves packages (default: its service index's PackageBaseAddress/3.0.0)",
    )
    .option('--include <glob>', 'hold only packages whose id matches (case-insensitive; * and ?; repeatable)', collect)
    .option('--exclude <glob>', 'never hold packages whose id matches (case-insensitive; * and ?; repeatable)', collect)
    .option('--allow-origin <origin>', 'another origin packages may be downloaded from (repeatable)', collect)
    .option(
      '--rebuild',
      'make every package again from the latest view (a new --base-url, --include or --exclude), then move the cursor up to the view',
      false,
    )
    .option('--follow', 'keep going: apply commits as the latest view moves (Ctrl-C to stop)', false)
    .option('--poll-interval <seconds>', 'longest wait between two reads of watermark.json with --follow (default 30)')
    .option('--consumer <name>', "the feed consumer's cursor name", FEED_CONSUMER)
    .option('--concurrency <n>', 'packages made at once (default 64; their downloads bounded by --downloads)')
    .option(
      '--downloads <n>',
      'packages downloaded at once (default 16; together holding at most 160 MiB: 25 MiB of a large one)',
    )
    .option('--json', 'print the summary as one JSON line', false)
    .addHelpText(
      'after',
      `
Examples:
  catalog-sync view && catalog-sync feed --base-url https://nuget.example.com/ --include 'Newtonsoft.*'
  catalog-sync feed --follow                     # keep it up to date (after view --follow)
  catalog-sync feed --rebuild --base-url https://new.example.com/`,
    )
    .action(feedCommand);
}

/** The feed's stores as `view` opens its stores: DynamoDB and S3 with both flags, the folder otherwise. */
export async function openFeedStores(options: StoreOptions, access: DataDirAccess): Promise<FeedStores> {
  const { cursorTable, bucket } = options;
  if ((cursorTable === undefined) !== (bucket === undefined)) {
    throw new SettingsError(
      cursorTable === undefined ? '--cursor-table' : '--bucket',
      `is required together with ${cursorTable === undefined ? '--bucket' : '--cursor-table'}`,
    );
  }
  if (bucket !== undefined && cursorTable !== undefined) {
    const { awsFeedStores } = await import('../open.js');
    return awsFeedStores({ bucket, cursorTable, prefix: options.prefix ?? '' });
  }
  if (options.dataDir.trim() === '') throw new SettingsError('--data-dir', 'must not be empty');
  await checkDataDir(resolve(options.dataDir), access);
  return folderFeedStores(options.dataDir, { prefix: options.prefix ?? '' });
}

/** The base URL given, or the one the feed was written for. */
async function baseUrlOf(options: FeedOptions, stores: FeedStores): Promise<string> {
  if (options.baseUrl !== undefined) {
    try {
      return checkBaseUrl(options.baseUrl);
    } catch (error) {
      throw new SettingsError('--base-url', (error as Error).message, { cause: error });
    }
  }
  const stored = await stores.storage.read(new FeedKeys(stores.mirror.prefix).settings());
  const baseUrl =
    stored === undefined ? undefined : (JSON.parse(stored.bytes.toString('utf8')) as { baseUrl?: unknown }).baseUrl;
  if (typeof baseUrl !== 'string')
    throw new SettingsError(
      '--base-url',
      'is required for a new feed: the URL at which its feed/ folder will be served',
    );
  return baseUrl;
}

async function feedCommand(asked: FeedOptions, command: Command): Promise<void> {
  // A folder synced from another source downloads its packages from that source, not from nuget.org.
  const options = await withFolderSource(asked, command);
  const concurrency = wholeNumber('--concurrency', options.concurrency);
  const downloads = wholeNumber('--downloads', options.downloads);
  const maxPollMs = pollIntervalMs(options.pollInterval);
  if (options.rebuild && options.follow)
    throw new SettingsError('--rebuild', 'give --rebuild or --follow, not both (after a rebuild, run feed --follow)');
  const settings = parseSettings(
    {
      CATALOG_SOURCE: options.source,
      INCLUDE_IDS: options.include,
      EXCLUDE_IDS: options.exclude,
      ALLOWED_ORIGINS: options.allowOrigin,
    },
    FLAG_NAMES,
  );
  const stores = await openFeedStores(options, 'read');
  const http = new HttpClient({ connections: downloads ?? 16 });
  const stop = stopOnSignal();
  try {
    await requireMirror(stores.mirror, options.follow === true);
    if (options.bucket === undefined) await checkDataDir(resolve(options.dataDir), 'write');
    for (const origin of settings.allowedOrigins) http.allowOrigin(origin);
    http.useCredentialsOf(settings.source);
    const target = {
      storage: stores.storage,
      mirror: stores.mirror,
      baseUrl: await baseUrlOf(options, stores),
      http,
      source: settings.source,
      signal: stop.signal,
      ...(options.packageBaseAddress === undefined ? {} : { packageBaseAddress: options.packageBaseAddress }),
      ...(settings.idFilter === undefined ? {} : { idFilter: settings.idFilter }),
      ...(concurrency === undefined ? {} : { concurrency }),
      ...(downloads === undefined ? {} : { downloads }),
    };
    if (options.rebuild) {
      const result = await rebuildFeed({ ...target, rebase: true }, stores.cursors, { name: options.consumer });
      process.stdout.write(
        options.json
          ? `${JSON.stringify(result)}\n`
          : `rebuilt the feed of ${result.packages} packages: ${counts(result)}; cursor ${options.consumer} ${result.cursorMoved ? `moved to ${result.viewCursor}` : 'left'}\n`,
      );
      return;
    }
    const result = await keepFeed(target, {
      name: options.consumer,
      cursors: stores.cursors,
      followerCursor: options.cursorName ?? DEFAULT_CURSOR_NAME,
      follow: options.follow === true,
      signal: stop.signal,
      readAhead: DEFAULT_READ_AHEAD,
      poll: { minMs: Math.min(1_000, maxPollMs), maxMs: maxPollMs },
      lease: leaseOf(options.consumer, undefined, options.follow === true),
    });
    process.stdout.write(
      options.json
        ? `${JSON.stringify(result)}\n`
        : `feed ${result.consumer}: ${result.commits} commits, ${result.packages} packages: ${counts(result)}; cursor ${result.cursorAfter ?? '(none)'} (${result.stoppedBy})\n`,
    );
    reportStop(options.consumer, result);
  } catch (error) {
    // Ctrl-C aborts the downloads in flight: the batch they belong to fails because of it, which is a stop.
    if (stop.signal.aborted && stoppedByRun(error)) {
      process.stderr.write(`catalog-sync: ${stoppedLine(options, error)}\n`);
      process.exitCode = ExitCode.interrupted;
      return;
    }
    if (error instanceof ConsumerError) throw new SettingsError('--consumer', error.message, { cause: error });
    if (error instanceof FeedError && error.setting !== undefined) {
      const flag =
        error.setting === 'baseUrl' ? '--base-url' : options.packageBaseAddress ? '--package-base-address' : '--source';
      throw new SettingsError(flag, error.message, { cause: error });
    }
    throw error;
  } finally {
    stop.release();
    stores.close();
    await http.close();
  }
}

/** What a stopped run says: the commit whose packages were being made is made again, nothing is lost. */
function stoppedLine(options: FeedOptions, error: unknown): string {
  if (options.rebuild) return 'stopped while the feed was rebuilt: run feed --rebuild again to finish it';
  const commit = error instanceof ConsumerHandlerError ? ` of commit ${error.commitKey}` : '';
  return `stopped while the feed made the packages${commit}: it was not checkpointed, and is made again next time`;
}

function counts(result: FeedCounts): string {
  const mb = (result.storedBytes / 1_000_000).toFixed(1);
  return `${result.stored} stored (${mb} MB), ${result.removed} removed, ${result.waiting} waiting for the source, ${result.quarantined} quarantined, ${result.documents} documents written, ${result.current} already current`;
}
