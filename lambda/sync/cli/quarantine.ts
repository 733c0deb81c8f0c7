import type { Command } from 'commander';
import { CatalogClient, HttpClient } from '../../catalog/index.js';
import { formatTimestamp, parseSettings } from '../../contract/index.js';
import { listQuarantine, retryQuarantine } from '../index.js';
import { ExitCode } from '../../runtime/cli/exit-code.js';
import { withFolderSource } from '../../runtime/cli/folder-source.js';
import { openStores } from '../../runtime/cli/open-stores.js';
import { collect, FLAG_NAMES, rawSettingsOf, type StoreOptions } from '../../runtime/cli/options.js';
import { storeOptions } from '../../runtime/cli/store-options.js';
import type { SnapshotReader } from '../../stores/types.js';
import type { RetryOptions } from '../index.js';

/**
 * What `retry-quarantine` tells of each leaf it stored, opened for one run and closed after it: the latest view's
 * refresher (given by the program, lambda/cli.ts: the follower does not import the view).
 */
export type AfterStoredHook = (
  options: StoreOptions,
  prefix: string,
  reader: SnapshotReader,
) => Promise<{ afterStored: NonNullable<RetryOptions['afterStored']>; close(): void }>;

/** `catalog-sync quarantine` and `retry-quarantine`: the leaves set aside by `--quarantine`. */
export function addQuarantineCommands(program: Command, afterStoredHook: AfterStoredHook): void {
  storeOptions(program.command('quarantine'))
    .description('list the leaves set aside by --quarantine, oldest commit first')
    .option('--json', 'one JSON line per record', false)
    .addHelpText(
      'after',
      '\nExamples:\n  catalog-sync quarantine\n  catalog-sync quarantine --cursor-table cursors --bucket mirror --json',
    )
    .action(quarantineCommand);

  storeOptions(program.command('retry-quarantine'))
    .description('fetch quarantined leaves again and store those that now succeed')
    .option('--allow-origin <origin>', 'another origin leaves may come from (repeatable)', collect)
    .option('--json', 'one JSON line per record', false)
    .addHelpText(
      'after',
      '\nExamples:\n  catalog-sync retry-quarantine\n  catalog-sync retry-quarantine --cursor-table cursors --bucket mirror',
    )
    .action((options, command: Command) => retryQuarantineCommand(options, command, afterStoredHook));
}

async function quarantineCommand(options: StoreOptions & { json?: boolean }): Promise<void> {
  const settings = parseSettings(rawSettingsOf(options), FLAG_NAMES);
  const stores = await openStores(options, 4, process.env, 'read');
  try {
    const records = await listQuarantine(stores.snapshots, settings.prefix);
    for (const record of records) {
      process.stdout.write(
        options.json
          ? `${JSON.stringify({ key: record.key, url: record.url, error: record.error, attempts: record.attempts, id: record.item.id, version: record.item.version, commitTimeStamp: formatTimestamp(record.item.commitTicks) })}\n`
          : `${record.key}\n  ${record.item.id} ${record.item.version} (commit ${formatTimestamp(record.item.commitTicks)}), ${record.attempts} attempt(s)\n  ${record.error}\n`,
      );
    }
    if (!options.json) process.stdout.write(`${records.length} quarantined leaf(s)\n`);
  } finally {
    stores.close();
  }
}

async function retryQuarantineCommand(
  given: StoreOptions & { allowOrigin?: string[]; json?: boolean },
  command: Command,
  afterStoredHook: AfterStoredHook,
): Promise<void> {
  const options = await withFolderSource(given, command);
  const settings = parseSettings(rawSettingsOf(options), FLAG_NAMES);
  const stores = await openStores(options, 4);
  const http = new HttpClient({ connections: 4 });
  try {
    const catalog = new CatalogClient(http, settings.source, settings.allowedOrigins);
    // The latest view, where there is one, is told of each leaf stored: its quarantined entry becomes a details one.
    const view = await afterStoredHook(options, settings.prefix, stores.reader);
    const { afterStored } = view;
    let outcomes;
    try {
      outcomes = await retryQuarantine(catalog, stores.snapshots, settings.prefix, { afterStored });
    } finally {
      view.close();
    }
    for (const outcome of outcomes) {
      process.stdout.write(
        options.json
          ? `${JSON.stringify(outcome)}\n`
          : `${outcome.outcome}: ${outcome.key}${outcome.viewRefreshed ? ' (view entry refreshed)' : ''}${outcome.error ? `\n  ${outcome.error}` : ''}\n`,
      );
    }
    const failing = outcomes.filter((outcome) => outcome.outcome === 'still-failing').length;
    // Nothing quarantined: an answer, given without contacting the source.
    if (!options.json)
      process.stdout.write(
        outcomes.length === 0
          ? 'nothing quarantined: nothing to retry\n'
          : `${outcomes.length - failing} stored, ${failing} still failing\n`,
      );
    if (failing > 0) process.exitCode = ExitCode.runFailed;
  } finally {
    stores.close();
    await http.close();
  }
}
