import { resolve } from 'node:path';
import type { Command } from 'commander';
import { consume, ConsumeStop } from '../consumer/consume.js';
import { ConsumerError, ConsumerHandlerError } from '../consumer/errors.js';
import type { MirrorCommit } from '../consumer/mirror.js';
import { DEFAULT_READ_AHEAD, readCommits, startAfterOf, type ReadOptions } from '../consumer/reader.js';
import { DEFAULT_CURSOR_NAME, expandDateOnly, SettingsError } from '../contract/index.js';
import { execFor, linesOf, OutputClosed, writeOut, type OutputOptions } from './changes-output.js';
import { ExitCode } from './exit-code.js';
import { stopOnSignal } from './stop-on-signal.js';
import { checkDataDir, openStores } from './open-stores.js';
import { mirrorOf, requireMirror } from './mirror-place.js';
import { collect, type StoreOptions } from './options.js';
import { storeOptions } from './store-options.js';
import { filteredLeaves, readerIdFilter } from './id-filter-flags.js';

/** Options of `catalog-sync changes`. */
interface ChangesOptions extends StoreOptions, OutputOptions {
  since?: string;
  after?: string;
  follow?: boolean;
  pollInterval?: string;
  consumer?: string;
  checkpointEvery?: string;
  include?: string[];
  exclude?: string[];
}

const DEFAULT_MAX_POLL_SECONDS = 30;

/** `catalog-sync changes`: the mirror's commits in commit order up to its watermark, optionally as a named consumer. */
export function addChangesCommand(program: Command): void {
  storeOptions(program.command('changes'))
    .description('print the mirror\'s commits in commit order up to its watermark (and on, with --follow); with --consumer, resume where that name left off')
    .option('--since <time>', 'start at this commit time, inclusive (a date alone: midnight UTC)')
    .option('--after <commitKey>', 'start after this commit key, exclusive')
    .option('--follow', 'keep going: wait for the watermark to move (Ctrl-C to stop)', false)
    .option('--poll-interval <seconds>', `longest wait between two reads of watermark.json with --follow (from 1 s, doubling; default ${DEFAULT_MAX_POLL_SECONDS})`)
    .option('--consumer <name>', 'a named consumer: resume after its cursor, and checkpoint it as commits are written (or --exec exits 0)')
    .option('--depends-on <cursor>', 'with --consumer: a cursor it must never pass (repeatable)', collect)
    .option('--checkpoint-every <n>', 'with --consumer: commits between two checkpoints (default 1; always on catching up)')
    .option('--include <glob>', 'only leaves whose package id matches (case-insensitive; * and ?; repeatable)', collect)
    .option('--exclude <glob>', 'no leaves whose package id matches (case-insensitive; * and ?; repeatable)', collect)
    .option('--json', 'one JSON line per commit (per leaf with --leaves)', false)
    .option('--leaves', 'one line per leaf instead of per commit', false)
    .option('--exec <command>', 'run COMMAND in the shell for each commit, its JSON on stdin and CATALOG_SYNC_COMMIT_KEY set; stop when it fails')
    .addHelpText(
      'after',
      `
Examples:
  catalog-sync changes --since 2024-01-01 --json
  catalog-sync changes --follow --json --consumer indexer | node my-indexer.mjs
  catalog-sync changes --follow --consumer scanner --exec './scan.sh'
  catalog-sync changes --bucket my-mirror --cursor-table cursors --consumer search --json

Every commit at or before the mirror's watermark.json is delivered, in commit order, never one past it. With
--consumer, delivery is at least once: a commit is checkpointed after its line is written (or --exec exits 0),
so after a crash the commits since the last checkpoint come again, with the same commitKey.`,
    )
    .action(changesCommand);
}

async function changesCommand(options: ChangesOptions): Promise<void> {
  const maxPollMs = pollIntervalMs(options.pollInterval);
  const checkpointEvery = wholeNumber('--checkpoint-every', options.checkpointEvery);
  if (options.consumer === undefined) {
    for (const flag of ['dependsOn', 'checkpointEvery'] as const) {
      if (options[flag] !== undefined) throw new SettingsError(flag === 'dependsOn' ? '--depends-on' : '--checkpoint-every', 'needs --consumer');
    }
  }
  if (options.after !== undefined && options.since !== undefined) throw new SettingsError('--after', 'give --after or --since, not both');
  const start = { ...(options.after === undefined ? {} : { after: options.after }), ...(options.since === undefined ? {} : { since: expandDateOnly(options.since) }) };
  try {
    startAfterOf('', start);
  } catch (error) {
    throw new SettingsError(options.after === undefined ? '--since' : '--after', (error as Error).message, { cause: error });
  }
  const idFilter = readerIdFilter(options.include, options.exclude);
  // Opened to read: the place is checked before anything is written, and only a named consumer writes (its cursor).
  const stores = await openStores(options, DEFAULT_READ_AHEAD, process.env, 'read');
  const mirror = mirrorOf(options, stores.reader);
  await requireMirror(mirror, options.follow === true);
  if (options.consumer !== undefined && options.bucket === undefined) await checkDataDir(resolve(options.dataDir), 'write');
  const stop = stopOnSignal();
  const read: ReadOptions = { follow: options.follow === true, signal: stop.signal, poll: { minMs: Math.min(1_000, maxPollMs), maxMs: maxPollMs } };
  const deliver = (commit: MirrorCommit): Promise<void> =>
    options.exec !== undefined ? execFor(options.exec, commit) : writeOut(process.stdout, linesOf(commit, options).map((line) => `${line}\n`).join(''));
  const handle = (commit: MirrorCommit): Promise<void> => deliver(filteredLeaves(commit, idFilter));
  try {
    if (options.consumer === undefined) {
      for await (const commit of readCommits(mirror, { ...read, ...start })) await handle(commit);
      return;
    }
    const result = await consume(options.consumer, handle, {
      ...read,
      mirror,
      cursors: stores.cursors,
      start,
      followerCursor: options.cursorName ?? DEFAULT_CURSOR_NAME,
      ...(options.dependsOn === undefined ? {} : { dependsOn: options.dependsOn }),
      ...(checkpointEvery === undefined ? {} : { checkpointEvery }),
    });
    if (result.stoppedBy === ConsumeStop.lostRace) {
      process.stderr.write(`catalog-sync: consumer ${options.consumer}: another instance moved its cursor to ${result.cursorAfter}, past this one's: stopped\n`);
      process.exitCode = ExitCode.runFailed;
    }
  } catch (error) {
    if (error instanceof OutputClosed || (error instanceof ConsumerHandlerError && error.cause instanceof OutputClosed)) return;
    if (error instanceof ConsumerError) throw new SettingsError('--consumer', error.message, { cause: error });
    throw error;
  } finally {
    stop.release();
    stores.close();
  }
}

/** `--poll-interval` in ms (default 30 s). */
export function pollIntervalMs(text: string | undefined): number {
  if (text === undefined) return DEFAULT_MAX_POLL_SECONDS * 1000;
  if (!/^\d+(\.\d+)?$/.test(text) || Number(text) <= 0) throw new SettingsError('--poll-interval', `${JSON.stringify(text)} must be a positive number of seconds`);
  return Number(text) * 1000;
}

/** A flag that must be a whole number >= 1, or undefined when not given. */
export function wholeNumber(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < 1) throw new SettingsError(flag, `${JSON.stringify(text)} must be a whole number >= 1`);
  return Number(text);
}
