import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { Acknowledgements } from '../acknowledgements.js';
import { consume } from '../consume.js';
import { ConsumerError, ConsumerHandlerError } from '../errors.js';
import type { MirrorCommit } from '../mirror.js';
import { DEFAULT_READ_AHEAD, readCommits, startAfterOf, type ReadOptions } from '../reader.js';
import { expandDateOnly, SettingsError } from '../../contract/index.js';
import { readAcknowledgements } from './changes-acks.js';
import {
  checkConsumerFlags,
  checkStartAgainstCursor,
  leaseOf,
  reportStop,
  seekOf,
  type ConsumerFlags,
} from './changes-consumer.js';
import { ExecInterrupted, execFor, linesOf, OutputClosed, writeOut, type OutputOptions } from './changes-output.js';
import { ExitCode } from '../../runtime/cli/exit-code.js';
import { stopOnSignal } from '../../runtime/cli/stop-on-signal.js';
import { checkDataDir, openStores } from '../../runtime/cli/open-stores.js';
import { mirrorOf, requireMirror } from './mirror-place.js';
import { collect, type StoreOptions } from '../../runtime/cli/options.js';
import { mirrorOptions } from '../../runtime/cli/store-options.js';
import { filteredLeaves, readerIdFilter } from './reader-filter.js';

/** Options of `catalog-sync changes`. */
interface ChangesOptions extends StoreOptions, OutputOptions, ConsumerFlags {
  follow?: boolean;
  pollInterval?: string;
  heartbeat?: string;
  include?: string[];
  exclude?: string[];
}

const DEFAULT_MAX_POLL_SECONDS = 30;

/** `catalog-sync changes`: the mirror's commits in commit order up to its watermark, optionally as a named consumer. */
export function addChangesCommand(program: Command): void {
  mirrorOptions(program.command('changes'))
    .description(
      "print the mirror's commits in commit order up to its watermark (and on, with --follow); with --consumer, resume where that name left off",
    )
    .option(
      '--since <time>',
      'start at this commit time, inclusive (a date alone: midnight UTC); with --consumer, only a new one',
    )
    .option('--after <commitKey>', 'start after this commit key, exclusive; with --consumer, only a new one')
    .option('--follow', 'keep going: wait for the watermark to move (Ctrl-C to stop)', false)
    .option(
      '--poll-interval <seconds>',
      `longest wait between two reads of watermark.json with --follow (from 1 s, doubling; default ${DEFAULT_MAX_POLL_SECONDS})`,
    )
    .option(
      '--heartbeat <seconds>',
      'with --follow --json: a {"heartbeat":…} line when nothing was written for this long and watermark.json was just read',
    )
    .option(
      '--consumer <name>',
      'a named consumer of this mirror: resume after its cursor, checkpoint it as commits are handled; one instance at a time',
    )
    .option(
      '--depends-on <name>',
      'with --consumer: a consumer of this mirror it must never pass (repeatable)',
      collect,
    )
    .option(
      '--checkpoint-every <n>',
      'with --consumer: commits between two checkpoints (default 64; also every --checkpoint-interval, on catching up and on a clean stop)',
    )
    .option(
      '--checkpoint-interval <seconds>',
      'with --consumer: the longest a handled commit waits for its checkpoint (default 1)',
    )
    .option(
      '--seek <where>',
      'with --consumer: move its cursor first, to "now" (the watermark), "beginning", a commit key (after it) or a time (the commit at it comes next)',
    )
    .option(
      '--ack-from <path>',
      'with --consumer, stdout a pipe: checkpoint only commits the reader acknowledged, one commit key a line, on PATH (a named pipe; - for stdin)',
    )
    .option(
      '--checkpoint-on-write',
      "with --consumer, stdout a pipe: checkpoint a commit once written into the pipe, read or not (a reader's crash loses up to a pipe buffer)",
    )
    .option(
      '--lease <seconds>',
      'with --consumer: how long a dead instance holds the name from another host (default 30; on this host it is taken over at once)',
    )
    .option('--include <glob>', 'only leaves whose package id matches (case-insensitive; * and ?; repeatable)', collect)
    .option('--exclude <glob>', 'no leaves whose package id matches (case-insensitive; * and ?; repeatable)', collect)
    .option('--json', 'one JSON line per commit (per leaf with --leaves)', false)
    .option('--leaves', 'one line per leaf instead of per commit', false)
    .option(
      '--exec <command>',
      'run COMMAND in the shell for each commit, its JSON on stdin and CATALOG_SYNC_COMMIT_KEY set; stop when it fails',
    )
    .addHelpText(
      'after',
      `
Examples:
  catalog-sync changes --since 2024-01-01 --json
  catalog-sync changes --follow --consumer scanner --exec './scan.sh'
  mkfifo acks; catalog-sync changes --follow --json --consumer indexer --ack-from acks | node indexer.mjs > acks
  catalog-sync changes --consumer search --seek now                   # a new consumer that starts at the watermark
  catalog-sync changes --bucket my-mirror --cursor-table cursors --consumer search --json > search.jsonl

Every commit at or before the mirror's watermark.json is delivered, in commit order, never one past it. With
--consumer, delivery is at least once: a commit is checkpointed after --exec exits 0 for it, after its line is
written to a file or terminal, or, into a pipe, once the reader acknowledged it (--ack-from); after a crash the
commits since the last checkpoint come again, with the same commitKey. One instance of a name runs at a time:
with --follow others stand by and take over when it stops or dies. \`catalog-sync consumers\` lists them.`,
    )
    .action(changesCommand);
}

async function changesCommand(options: ChangesOptions): Promise<void> {
  const maxPollMs = pollIntervalMs(options.pollInterval);
  const checkpointEvery = wholeNumber('--checkpoint-every', options.checkpointEvery);
  const intervalMs = secondsFlag('--checkpoint-interval', options.checkpointInterval);
  const heartbeatMs = secondsFlag('--heartbeat', options.heartbeat);
  if (heartbeatMs !== undefined && !(options.follow && options.json && options.exec === undefined))
    throw new SettingsError('--heartbeat', 'needs --follow and --json (and no --exec)');
  checkConsumerFlags(options);
  if (options.after !== undefined && options.since !== undefined)
    throw new SettingsError('--after', 'give --after or --since, not both');
  const start = {
    ...(options.after === undefined ? {} : { after: options.after }),
    ...(options.since === undefined ? {} : { since: expandDateOnly(options.since) }),
  };
  try {
    startAfterOf('', start);
  } catch (error) {
    throw new SettingsError(options.after === undefined ? '--since' : '--after', (error as Error).message, {
      cause: error,
    });
  }
  const seek = options.seek === undefined ? undefined : seekOf(options.seek);
  const lease =
    options.consumer === undefined ? undefined : leaseOf(options.consumer, options.lease, options.follow === true);
  const idFilter = readerIdFilter(options.include, options.exclude);
  // Opened to read: the place is checked before anything is written, and only a named consumer writes (its cursor).
  const stores = await openStores(options, DEFAULT_READ_AHEAD, process.env, 'read');
  const mirror = mirrorOf(options, stores.reader);
  await requireMirror(mirror, options.follow === true);
  if (options.consumer !== undefined && options.bucket === undefined)
    await checkDataDir(resolve(options.dataDir), 'write');
  const stop = stopOnSignal();
  // Ctrl-C, or the end of the reader's acknowledgements.
  const ended = new AbortController();
  const pollMax = heartbeatMs === undefined ? maxPollMs : Math.min(maxPollMs, heartbeatMs);
  const read: ReadOptions = {
    follow: options.follow === true,
    signal: AbortSignal.any([stop.signal, ended.signal]),
    poll: { minMs: Math.min(1_000, pollMax), maxMs: pollMax },
  };
  let lastWrite = Date.now();
  let lastKey: string | null = null;
  const write = (text: string): Promise<void> => {
    lastWrite = Date.now();
    return writeOut(process.stdout, text);
  };
  const deliver = (commit: MirrorCommit): Promise<void> => {
    lastKey = commit.commitKey;
    return options.exec !== undefined
      ? execFor(options.exec, commit, stop.signal)
      : write(
          linesOf(commit, options)
            .map((line) => `${line}\n`)
            .join(''),
        );
  };
  const handle = (commit: MirrorCommit): Promise<void> => deliver(filteredLeaves(commit, idFilter));
  const onIdle = async (): Promise<void> => {
    if (heartbeatMs !== undefined && Date.now() - lastWrite >= heartbeatMs)
      await write(`${JSON.stringify({ heartbeat: new Date().toISOString(), after: lastKey })}\n`);
  };
  let ackEnd: Error | undefined;
  let acks: Acknowledgements | undefined;
  try {
    if (options.consumer === undefined) {
      for await (const commit of readCommits(mirror, { ...read, ...start }, { onIdle })) await handle(commit);
      return;
    }
    await checkStartAgainstCursor(stores.cursors, mirror, options.consumer, seek === undefined ? start : {});
    if (options.ackFrom !== undefined) {
      acks = readAcknowledgements(
        options.ackFrom,
        (error) => {
          ackEnd = error;
          ended.abort();
        },
        () => process.stdout.end(),
      );
    }
    const result = await consume(options.consumer, handle, {
      ...read,
      mirror,
      cursors: stores.cursors,
      start,
      onIdle,
      lease: lease!,
      ...(options.cursorName === undefined ? {} : { followerCursor: options.cursorName }),
      ...(seek === undefined ? {} : { seek }),
      ...(acks === undefined ? {} : { acknowledgements: acks }),
      ...(options.dependsOn === undefined ? {} : { dependsOn: options.dependsOn }),
      ...(checkpointEvery === undefined ? {} : { checkpointEvery }),
      ...(intervalMs === undefined ? {} : { checkpointIntervalMs: intervalMs }),
    });
    reportStop(options.consumer, result);
    if (ackEnd !== undefined) throw ackEnd;
    if (acks !== undefined && acks.closed !== undefined && acks.waiting > 0) {
      process.stderr.write(
        `catalog-sync: consumer ${options.consumer}: ${acks.closed} with ${acks.waiting} commits not acknowledged: they come again next time\n`,
      );
    }
  } catch (error) {
    const cause = error instanceof ConsumerHandlerError ? error.cause : error;
    if (cause instanceof OutputClosed) return;
    if (cause instanceof ExecInterrupted) {
      const commitKey = error instanceof ConsumerHandlerError ? error.commitKey : lastKey;
      process.stderr.write(
        `catalog-sync: stopped while --exec handled commit ${commitKey}${options.consumer === undefined ? '' : ': it was not checkpointed, and comes first next time'}\n`,
      );
      process.exitCode = ExitCode.interrupted;
      return;
    }
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
  return secondsFlag('--poll-interval', text)!;
}

/** A flag that is a positive number of seconds, in ms; undefined when not given. */
function secondsFlag(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+(\.\d+)?$/.test(text) || Number(text) <= 0)
    throw new SettingsError(flag, `${JSON.stringify(text)} must be a positive number of seconds`);
  return Number(text) * 1000;
}

/** A flag that must be a whole number >= 1, or undefined when not given. */
export function wholeNumber(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < 1)
    throw new SettingsError(flag, `${JSON.stringify(text)} must be a whole number >= 1`);
  return Number(text);
}
