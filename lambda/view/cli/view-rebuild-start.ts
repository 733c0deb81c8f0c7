/**
 * `catalog-sync view --rebuild --state-machine ARN [--wait]`: the latest view rebuilt on AWS by the `ViewRebuild`
 * state machine (`CatalogSync`'s `viewRebuild: true`): StartExecution with `{}` (or `{"shards": n}`, `{"abandon":
 * true}`), its ARN printed; with `--wait`, DescribeExecution every 5 seconds until it ends, then the finalizer's
 * summary, or who holds the rebuild (AlreadyRunning), or the failure. Nothing is read or written locally.
 */
import type { Command } from 'commander';
import { SettingsError } from '../../contract/index.js';
import { ViewError } from '../errors.js';

/** How often `--wait` asks for the execution's state. */
export const REBUILD_POLL_MS = 5_000;

/** What the start reads of `view`'s options. */
export interface RebuildStartOptions {
  readonly rebuild?: boolean;
  readonly stateMachine?: string;
  readonly wait?: boolean;
  readonly follow?: boolean;
  readonly shards?: string;
  readonly tempDir?: string;
  readonly json?: boolean;
  /** `--abandon`, when the command has it: the unfinished plan abandoned first. */
  readonly abandon?: boolean;
}

/** Adds `--state-machine` and `--wait` to `view`. */
export function rebuildStartOptions(command: Command): Command {
  return command
    .option(
      '--state-machine <arn>',
      "with --rebuild: rebuild on AWS, starting the ViewRebuild state machine (CatalogSync's viewRebuild) instead of here",
    )
    .option(
      '--wait',
      'with --state-machine: wait for the execution to end (polled every 5 s) and print its summary',
      false,
    );
}

/** Where the start writes, and how it waits (tests: no wait). */
export interface RebuildStartIo {
  readonly write: (text: string) => void;
  readonly pause: (ms: number) => Promise<void>;
  readonly env: Readonly<Record<string, string | undefined>>;
}

const PROCESS_IO: RebuildStartIo = {
  write: (text) => process.stdout.write(text),
  pause: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  env: process.env,
};

/** Starts the rebuild's execution (and with `--wait`, follows it to its end). */
export async function startViewRebuild(options: RebuildStartOptions, io: RebuildStartIo = PROCESS_IO): Promise<void> {
  const arn = options.stateMachine;
  if (arn === undefined) throw new SettingsError('--wait', 'needs --state-machine');
  if (!options.rebuild) throw new SettingsError('--state-machine', 'needs --rebuild');
  if (options.follow) throw new SettingsError('--state-machine', 'rebuilds on AWS: give it without --follow');
  if (options.tempDir !== undefined)
    throw new SettingsError('--temp-dir', 'means nothing with --state-machine: the records go to the bucket');
  let shards: number | undefined;
  if (options.shards !== undefined) {
    shards = Number(options.shards);
    if (!/^\d+$/.test(options.shards.trim()) || shards < 1)
      throw new SettingsError('--shards', `${JSON.stringify(options.shards)} must be a whole number >= 1`);
  }
  // Loaded only here: the AWS SDK's Step Functions client is not every command's start-up cost.
  const { describeExecution, sfnClientFor, startExecution } = await import('../../runtime/start-execution.js');
  const client = sfnClientFor(arn, io.env);
  try {
    const input = { ...(shards === undefined ? {} : { shards }), ...(options.abandon ? { abandon: true } : {}) };
    const { executionArn } = await startExecution(arn, input, client);
    if (!options.wait) {
      io.write(options.json ? `${JSON.stringify({ executionArn })}\n` : `started ${executionArn}\n`);
      return;
    }
    if (!options.json) io.write(`started ${executionArn}; waiting for it to end\n`);
    for (;;) {
      const state = await describeExecution(client, executionArn);
      if (state.status === 'RUNNING' || state.status === 'PENDING_REDRIVE') {
        await io.pause(REBUILD_POLL_MS);
        continue;
      }
      if (state.status !== 'SUCCEEDED')
        throw new ViewError(
          `view rebuild ${executionArn} ended ${state.status}: ${state.error ?? 'no error'}: ${state.cause ?? 'no cause'} (its lease was given back: start it again to resume)`,
        );
      const output = JSON.parse(state.output ?? '{}') as Record<string, unknown>;
      if (options.json) io.write(`${JSON.stringify({ executionArn, ...output })}\n`);
      else if (output.running === true)
        io.write(
          `view rebuild ${String(output.rebuildId)} is already running (held by ${String(output.holder)}, lease until ${String(output.leaseUntil)}): nothing was started\n`,
        );
      else
        io.write(
          `view rebuilt: ${String(output.packages)} packages from ${String(output.commits)} commits (${String(output.written)} indexes written), cursor ${String(output.cursorAfter)}\n`,
        );
      return;
    }
  } finally {
    client.destroy();
  }
}
