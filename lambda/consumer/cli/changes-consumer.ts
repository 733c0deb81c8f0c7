/**
 * What `changes --consumer NAME` adds to a plain read (issue 29): its flags checked, the stored cursor held against
 * `--since`/`--after`, `--seek`, the pipe form's guarantee, the lease's messages and how the run ended.
 */
import { fstatSync } from 'node:fs';
import { checkConsumerName, ConsumeStop, type ConsumeResult } from '../consume.js';
import { keyOrUndefined } from '../consume-pass.js';
import { readConsumerCursor } from '../consumer-cursors.js';
import type { LeaseOptions } from '../lease.js';
import type { Mirror } from '../mirror.js';
import { ticksOfTime } from '../reader.js';
import type { SeekTo } from '../seek.js';
import { decodeCommitKey, expandDateOnly, SettingsError } from '../../contract/index.js';
import type { CursorStore } from '../../stores/types.js';
import { ExitCode } from '../../runtime/cli/exit-code.js';

/** The consumer flags of `changes`. */
export interface ConsumerFlags {
  consumer?: string;
  /** The follower's cursor name (hidden in `changes`): refused as a consumer's. */
  cursorName?: string;
  dependsOn?: string[];
  checkpointEvery?: string;
  checkpointInterval?: string;
  seek?: string;
  ackFrom?: string;
  checkpointOnWrite?: boolean;
  lease?: string;
  readonly exec?: string;
  since?: string;
  after?: string;
}

/** Flags that mean something only for a named consumer. */
const CONSUMER_ONLY = {
  dependsOn: '--depends-on',
  checkpointEvery: '--checkpoint-every',
  checkpointInterval: '--checkpoint-interval',
  seek: '--seek',
  ackFrom: '--ack-from',
  checkpointOnWrite: '--checkpoint-on-write',
  lease: '--lease',
} as const;

/**
 * Refuses consumer flags without `--consumer`, and the pipe form without a stated guarantee: with stdout a pipe (or
 * socket) and no `--exec`, a named consumer needs `--ack-from` (at least once: only what the reader acknowledged is
 * checkpointed) or `--checkpoint-on-write` (what is written into the pipe is checkpointed, read or not).
 */
export function checkConsumerFlags(options: ConsumerFlags, stdoutIsPipe = isPipe(1)): void {
  if (options.consumer === undefined) {
    for (const [flag, name] of Object.entries(CONSUMER_ONLY)) {
      if (
        options[flag as keyof typeof CONSUMER_ONLY] !== undefined &&
        options[flag as keyof typeof CONSUMER_ONLY] !== false
      )
        throw new SettingsError(name, 'needs --consumer');
    }
    return;
  }
  try {
    checkConsumerName(options.consumer, options.cursorName);
  } catch (error) {
    throw new SettingsError('--consumer', (error as Error).message, { cause: error });
  }
  if (options.seek !== undefined && (options.since !== undefined || options.after !== undefined)) {
    throw new SettingsError(
      '--seek',
      `give --seek or ${options.since !== undefined ? '--since' : '--after'}, not both (--seek moves a stored cursor; --since and --after start a new consumer)`,
    );
  }
  if (options.exec !== undefined && (options.ackFrom !== undefined || options.checkpointOnWrite)) {
    throw new SettingsError(
      options.ackFrom !== undefined ? '--ack-from' : '--checkpoint-on-write',
      'not with --exec (a commit is checkpointed when its command exits 0)',
    );
  }
  if (options.ackFrom !== undefined && options.checkpointOnWrite)
    throw new SettingsError('--ack-from', 'give --ack-from or --checkpoint-on-write, not both');
  if (options.ackFrom !== undefined && options.ackFrom.trim() === '')
    throw new SettingsError('--ack-from', 'must name a file or named pipe, or - for stdin');
  if (stdoutIsPipe && options.exec === undefined && options.ackFrom === undefined && !options.checkpointOnWrite) {
    throw new SettingsError(
      '--consumer',
      'stdout is a pipe: a line written into it is not yet read, so checkpointing it could lose what the pipe held when the reader crashed. ' +
        'Give --ack-from PATH (at least once: the reader writes back each commit key it finished, and only those are checkpointed), ' +
        'or --checkpoint-on-write (each commit checkpointed once written into the pipe: a crash of the reader loses up to a pipe buffer of commits), or use --exec',
    );
  }
}

/** True when file descriptor `fd` is a pipe or a socket. */
function isPipe(fd: number): boolean {
  try {
    const stat = fstatSync(fd);
    return stat.isFIFO() || stat.isSocket();
  } catch {
    return false;
  }
}

/** `--seek`'s target: `now`, `beginning`, a commit key (after it) or a time (the commit at it comes next). */
export function seekOf(text: string): SeekTo {
  if (text === 'now' || text === 'beginning') return text;
  if (/^[0-9A-Za-z]{12}$/.test(text)) {
    try {
      decodeCommitKey(text);
      return { after: text };
    } catch {
      // not a commit key: a time?
    }
  }
  try {
    const since = expandDateOnly(text);
    ticksOfTime(since);
    return { since };
  } catch (cause) {
    throw new SettingsError(
      '--seek',
      `${JSON.stringify(text)} is not "now", "beginning", a commit key or a time (a timestamp with Z or an offset, or a date)`,
      { cause },
    );
  }
}

/**
 * Refuses `--since`/`--after` that would start a consumer somewhere else than its stored cursor (without `--seek`,
 * which moves it): they say where a new consumer starts, and are never silently ignored.
 */
export async function checkStartAgainstCursor(
  cursors: CursorStore,
  mirror: Mirror,
  name: string,
  start: { after?: string; since?: string },
): Promise<void> {
  if (start.after === undefined && start.since === undefined) return;
  const stored = await readConsumerCursor(cursors, mirror, name);
  if (stored === undefined) return;
  const flag = start.after !== undefined ? '--after' : '--since';
  const agrees =
    start.after !== undefined
      ? keyOrUndefined(stored.value) === start.after
      : stored.value === ticksOfTime(start.since!) - 1n;
  if (agrees) return;
  const at = keyOrUndefined(stored.value);
  throw new SettingsError(
    flag,
    `consumer ${name} has a cursor at ${stored.stored}${at === undefined ? '' : ` (commit key ${at})`}: ${flag} ${start.after ?? start.since} starts a new consumer only. ` +
      `Leave it out to resume after the cursor, or give --seek ${start.after ?? start.since} to move the cursor there`,
  );
}

/** The lease's settings of the CLI: messages on stderr when it stands by or takes over. */
export function leaseOf(name: string, seconds: string | undefined, follow: boolean): LeaseOptions {
  let durationMs: number | undefined;
  if (seconds !== undefined) {
    if (!/^\d+(\.\d+)?$/.test(seconds) || Number(seconds) < 3)
      throw new SettingsError('--lease', `${JSON.stringify(seconds)} must be a number of seconds >= 3`);
    durationMs = Number(seconds) * 1000;
  }
  return {
    standby: follow,
    ...(durationMs === undefined ? {} : { durationMs }),
    onStandby: (held) =>
      process.stderr.write(
        `catalog-sync: consumer ${name} is held by ${held.holder} (lease until ${new Date(held.until).toISOString()}): standing by, to take over when it stops or dies\n`,
      ),
    onTakeOver: (previous) =>
      process.stderr.write(`catalog-sync: consumer ${name}: taken over from ${previous.holder}\n`),
  };
}

/** Says how a consumer run ended when it was not a plain stop, and sets the exit code. */
export function reportStop(name: string, result: ConsumeResult): void {
  const fail = (text: string): void => {
    process.stderr.write(`catalog-sync: consumer ${name}: ${text}\n`);
    process.exitCode = ExitCode.runFailed;
  };
  if (result.stoppedBy === ConsumeStop.lostRace)
    fail(`another instance moved its cursor to ${result.cursorAfter}, past this one's: stopped`);
  else if (result.stoppedBy === ConsumeStop.held) {
    fail(
      `held by ${result.heldBy?.holder} (lease until ${new Date(result.heldBy?.until ?? 0).toISOString()}): another instance runs it; nothing was read (--follow stands by instead)`,
    );
  } else if (result.stoppedBy === ConsumeStop.lostLease)
    fail('another instance took its lease over (this one could not renew it in time): stopped');
}
