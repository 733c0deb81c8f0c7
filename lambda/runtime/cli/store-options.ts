import { Option, type Command } from 'commander';
import { DEFAULT_CURSOR_NAME, DEFAULT_SOURCE } from '../../contract/index.js';

const DEFAULT_DATA_DIR = './catalog-data';

/** The options of every command that opens the stores: where the catalog is and where the mirror lives. */
export function storeOptions(command: Command): Command {
  return mirrorPlace(
    command
      .option('--source <url>', 'service index or catalog index URL', DEFAULT_SOURCE)
      .option('--cursor-name <name>', 'cursor name (one table or folder holds many)', DEFAULT_CURSOR_NAME),
  );
}

/**
 * Where the mirror lives, for commands that read it back and never the catalog (`changes`, `consumers`). `--source`
 * and `--cursor-name` mean nothing there: still accepted, for scripts that gave them, but not listed.
 */
export function mirrorOptions(command: Command): Command {
  return mirrorPlace(
    command.addOption(new Option('--source <url>').hideHelp()).addOption(new Option('--cursor-name <name>').hideHelp()),
  );
}

function mirrorPlace(command: Command): Command {
  return command
    .option('--cursor-table <table>', 'DynamoDB table of the cursors and run log (with --bucket)')
    .option('--bucket <bucket>', 'S3 bucket of the snapshots (with --cursor-table)')
    .option('--prefix <prefix>', 'key prefix in the bucket or folder', '')
    .option('--data-dir <dir>', 'folder of the embedded default (no --cursor-table/--bucket)', DEFAULT_DATA_DIR);
}
