import { Command, CommanderError } from 'commander';
import { CatalogSyncError, ErrorCode, hasErrorCode, SettingsError, VERSION } from './contract/index.js';
import { addBackfillCommand } from './backfill/cli/backfill.js';
import { addChangesCommand } from './consumer/cli/changes.js';
import { addConsumersCommand, printConsumers } from './consumer/cli/consumers.js';
import { addLatestCommand, addViewCommand, viewAfterRefill, viewAfterStored } from './view/cli/view.js';
import { ExitCode } from './runtime/cli/exit-code.js';
import { addKeysCommand } from './consumer/cli/keys.js';
import { addQuarantineCommands } from './sync/cli/quarantine.js';
import { addRunCommand } from './sync/cli/run.js';
import { addRunsCommand } from './sync/cli/runs.js';
import { addStatusCommand } from './sync/cli/status.js';
import { addVerifyCommand } from './verify/cli/verify.js';
import { addFeedCommand } from './feed/cli/feed.js';
import { addServeCommand } from './serve/cli/serve.js';

export { ExitCode } from './runtime/cli/exit-code.js';

/** Raised for usage errors that commander does not catch itself. */
class UsageError extends CatalogSyncError {
  override readonly name = 'UsageError';
  override get code(): ErrorCode {
    return ErrorCode.usage;
  }
}

/** The program: its help and version, and each wing's commands (lambda/<wing>/cli/). */
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
  catalog-sync backfill --workers 4                 the whole catalog fast, in 4 worker processes
  catalog-sync status                               cursor, catalog head and lag
  catalog-sync changes --follow --consumer ix --exec ./index.sh   the mirror's commits in order, resumable
  catalog-sync consumers                            the mirror's named consumers and their lag (offline)
  catalog-sync feed --base-url https://nuget.example.com/   a private NuGet feed of the mirror's packages
  catalog-sync verify --deep --sample 1000          audit the mirror against the catalog
  catalog-sync serve                                the folder's NuGet feed on http://127.0.0.1:5080/index.json
  catalog-sync run --cursor-table cursors --bucket my-mirror --max-commits 100

Exit codes: 0 done, 1 a run failed, 2 bad usage or settings, 130 a handler stopped by Ctrl-C.`,
    );

  addRunCommand(root);
  addBackfillCommand(root, viewAfterRefill);
  addStatusCommand(root, printConsumers);
  addRunsCommand(root);
  addKeysCommand(root);
  addChangesCommand(root);
  addConsumersCommand(root);
  addViewCommand(root);
  addLatestCommand(root);
  addFeedCommand(root);
  addQuarantineCommands(root, viewAfterStored);
  addVerifyCommand(root);
  addServeCommand(root);
  return root;
}

/**
 * `argv`, or only its command word when that names no command of `root` (nor `help <it>`): commander then reports the
 * unknown command (exit 2, "Did you mean …?" when one is close) whatever flags followed it, where a `--help` after it
 * would print the top-level help and exit 0. Commands are `root`'s own, so a command added later is known here too.
 */
function unknownCommandAlone(root: Command, argv: readonly string[]): string[] {
  const [node = '', script = '', ...args] = argv;
  const known = (name: string): boolean =>
    root.commands.some((command) => command.name() === name || command.aliases().includes(name));
  const word = args[0] === 'help' ? args[1] : args[0];
  if (word === undefined || word.startsWith('-') || known(word)) return [...argv];
  return [node, script, word];
}

/** Runs the CLI with `argv` (as `process.argv`); resolves to the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const root = program();
  root.exitOverride();
  for (const command of root.commands) command.exitOverride();
  try {
    await root.parseAsync(unknownCommandAlone(root, argv));
    return typeof process.exitCode === 'number' ? process.exitCode : ExitCode.done;
  } catch (error) {
    if (error instanceof CommanderError) {
      // `--help` exits 0; help shown because no command was given (`catalog-sync` alone) is bad usage.
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return ExitCode.done;
      if (error.code === 'commander.help') return error.exitCode === 0 ? ExitCode.done : ExitCode.usage;
      return ExitCode.usage;
    }
    // A place that holds no mirror (a wrong --data-dir, --bucket or --prefix) is a settings error too.
    if (error instanceof SettingsError || error instanceof UsageError || hasErrorCode(error, ErrorCode.noMirror)) {
      process.stderr.write(`catalog-sync: ${error.message}\n`);
      return ExitCode.usage;
    }
    process.stderr.write(`catalog-sync: ${(error as Error)?.message ?? String(error)}\n`);
    return ExitCode.runFailed;
  }
}
