import { stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { ErrorCode, hasErrorCode, SettingsError } from '../../contract/index.js';
import { checkDataDir } from '../../runtime/cli/open-stores.js';
import { stopOnSignal } from '../../runtime/cli/stop-on-signal.js';
import { openLocalStores } from '../../stores/local-store.js';
import { checkFeedBase, type FeedBaseCheck, type ServedPlace, servedPlace, serviceIndexKey } from '../feed-base.js';
import { folderFeedFiles } from '../feed-files.js';
import { FEED_FOLDER } from '../feed-request.js';
import type { FeedServer, FeedServerOptions } from '../feed-server.js';

/** The port `serve` listens on unless told otherwise. */
export const DEFAULT_SERVE_PORT = 5080;

/** Options of `catalog-sync serve`. */
export interface ServeOptions {
  dataDir: string;
  prefix?: string;
  port?: string;
  host?: string;
  verbose?: boolean;
  bucket?: string;
  cursorTable?: string;
}

/** Where `serve` writes: its output lines (stdout) and its warnings and request log (stderr). */
export interface ServeOutput {
  out(line: string): void;
  err(line: string): void;
}

/** A feed being served, as {@link startServing} started it. */
export interface Serving {
  readonly server: FeedServer;
  /** The service index's URL a NuGet client is given (`http://127.0.0.1:5080/index.json`). */
  readonly sourceUrl: string;
}

/** `catalog-sync serve`: a folder mirror's feed over HTTP. */
export function addServeCommand(program: Command): void {
  program
    .command('serve')
    .description(
      "serve a folder mirror's NuGet feed ({prefix}feed/) over HTTP, exactly as written, for dotnet restore on this machine or a team's network",
    )
    .option('--data-dir <dir>', 'folder of the mirror and its feed', './catalog-data')
    .option('--prefix <prefix>', 'key prefix in the folder', '')
    .option('--port <port>', `TCP port; 0 takes a free one (default ${DEFAULT_SERVE_PORT})`)
    .option(
      '--host <address>',
      'address to listen on: 127.0.0.1 serves this machine only; 0.0.0.0 or a network address serves others, with no authentication',
      '127.0.0.1',
    )
    .option('--verbose', 'log each request as a JSON line on stderr', false)
    // A bucket's feed is served by CloudFront: said plainly rather than "unknown option".
    .addOption(new Option('--bucket <bucket>').hideHelp())
    .addOption(new Option('--cursor-table <table>').hideHelp())
    .addHelpText(
      'after',
      `
The feed's URLs are absolute, written with the base URL the feed was given: serve it there (serve warns once if not).
NuGet needs allowInsecureConnections="true" on an http:// source in NuGet.Config.

Examples:
  catalog-sync serve                               # http://127.0.0.1:${DEFAULT_SERVE_PORT}/index.json
  catalog-sync serve --host 0.0.0.0 --port 8080    # for the team's network`,
    )
    .action(serveCommand);
}

async function serveCommand(options: ServeOptions): Promise<void> {
  const stop = stopOnSignal();
  const output: ServeOutput = {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  };
  try {
    const serving = await startServing(options, output);
    output.out('Ctrl-C to stop');
    if (!stop.signal.aborted) await new Promise((done) => stop.signal.addEventListener('abort', done, { once: true }));
    await serving.server.stop();
    output.out('stopped');
  } finally {
    stop.release();
  }
}

/**
 * Checks the settings, finds the feed and starts serving it; prints where, and warns once when the feed was written
 * for another place. Settings errors (exit 2) name the flag: a bucket, a port that is not one or is taken, a folder
 * that holds no feed yet.
 */
export async function startServing(options: ServeOptions, output: ServeOutput): Promise<Serving> {
  if (options.bucket !== undefined || options.cursorTable !== undefined)
    throw new SettingsError(
      options.bucket !== undefined ? '--bucket' : '--cursor-table',
      "serve serves a local folder's feed (--data-dir); a bucket's feed is served by CloudFront (the CDK construct's feed, docs/deploy.md)",
    );
  const port = portOf(options.port);
  const host = (options.host ?? '127.0.0.1').trim();
  if (host === '') throw new SettingsError('--host', 'must not be empty');
  const prefix = options.prefix ?? '';
  if (options.dataDir.trim() === '') throw new SettingsError('--data-dir', 'must not be empty');
  const root = resolve(options.dataDir);
  await checkDataDir(root, 'read');
  if (
    !(await stat(root).then(
      (found) => found.isDirectory(),
      () => false,
    ))
  )
    throw new SettingsError('--data-dir', `${JSON.stringify(root)} does not exist`);
  const { snapshots } = openLocalStores(root);
  const indexKey = serviceIndexKey(prefix);
  const index = await snapshots.getBytes(indexKey).catch((error: unknown) => {
    if (hasErrorCode(error, ErrorCode.localState)) throw new SettingsError('--prefix', (error as Error).message);
    throw error;
  });
  if (index === undefined)
    throw new SettingsError(
      '--data-dir',
      `${JSON.stringify(root)} holds no feed yet: no ${indexKey} (the feed is written there beside the mirror; check --data-dir and --prefix)`,
    );

  const server = await listen(host, port, {
    feed: { files: folderFeedFiles(snapshots), prefix },
    onRequest: options.verbose ? (entry) => output.err(logLine('INFO', 'request', { ...entry })) : undefined,
    onError: (error, target) =>
      output.err(logLine('ERROR', 'the feed could not be read', { target, error: (error as Error)?.message })),
  });
  const served = servedPlace(host, server.port, hostname());
  const check = checkFeedBase(index, served);
  const where = `${root} ${indexKey}`;
  const sourceUrl = `${clientBase(check, served)}index.json`;
  output.out(`serving the feed of ${root} (${prefix}${FEED_FOLDER}) at ${served.baseUrl}`);
  const notes = [
    ...(check.elsewhere.length > 0 ? ['where the feed was written for: see the warning'] : []),
    ...(sourceUrl.startsWith('http:') ? ['allowInsecureConnections="true" in NuGet.Config'] : []),
  ];
  output.out(`NuGet source: ${sourceUrl}${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`);
  if (!isLoopback(host))
    output.err(
      `catalog-sync: listening on ${host}: anyone who reaches this machine on port ${server.port} can read the feed (serve has no authentication)`,
    );
  if (check.problem !== undefined)
    output.err(`catalog-sync: warning: ${where} is not a service index NuGet reads: ${check.problem}`);
  else if (check.elsewhere.length > 0)
    output.err(
      `catalog-sync: warning: ${where} was written for ${check.elsewhere.join(' and ')}, not for ${served.baseUrl} where it is served: ` +
        'a client reads the service index here and then fetches everything else from the URLs in it. Serve the feed at the base ' +
        `URL it was written for (a proxy in front of serve may), or write the feed again with the base URL ${served.baseUrl}`,
    );
  return { server, sourceUrl };
}

function portOf(text: string | undefined): number {
  if (text === undefined) return DEFAULT_SERVE_PORT;
  const port = /^\s*\d{1,5}\s*$/.test(text) ? Number(text) : Number.NaN;
  if (!(port >= 0 && port <= 65_535))
    throw new SettingsError('--port', `${JSON.stringify(text)} must be a TCP port, 0 to 65535 (0 takes a free one)`);
  return port;
}

/** Starts the server; a port or an address that cannot be had is the user's setting to change. */
async function listen(
  host: string,
  port: number,
  options: Omit<FeedServerOptions, 'host' | 'port'>,
): Promise<FeedServer> {
  // Loaded here: the HTTP server and its header parsers are for this command only, not every command's start-up.
  const { FeedServer } = await import('../feed-server.js');
  try {
    return await FeedServer.start({ ...options, host, port });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE')
      throw new SettingsError(
        '--port',
        `${port} is taken on ${host} (another program listens there): choose another port, or 0 for a free one`,
        { cause: error },
      );
    if (code === 'EACCES')
      throw new SettingsError(
        '--port',
        `${port} cannot be opened here without privileges: choose a port from 1024 up`,
        { cause: error },
      );
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN')
      throw new SettingsError('--host', `${JSON.stringify(host)} is not an address of this machine (${code})`, {
        cause: error,
      });
    throw error;
  }
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** The base URL a NuGet client is given: where the feed's own URLs send it. */
function clientBase(check: FeedBaseCheck, served: ServedPlace): string {
  // Written for one other place: a client must start there (a proxy in front of serve may answer it).
  if (check.elsewhere.length === 1) return check.elsewhere[0]!;
  // On every interface, the host name the feed was written for (one of this machine's, as the port matches).
  if (served.wildcard && check.elsewhere.length === 0 && check.bases[0] !== undefined) return check.bases[0];
  return served.baseUrl;
}

/** One JSON line in the shape of the other commands' `--verbose` (Powertools Logger's: level, message, timestamp, service). */
function logLine(level: 'INFO' | 'ERROR', message: string, fields: Record<string, unknown>): string {
  return JSON.stringify({ level, message, timestamp: new Date().toISOString(), service: 'catalog-sync', ...fields });
}
