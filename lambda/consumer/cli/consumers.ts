import type { Command } from 'commander';
import { describeConsumers, type ConsumersView, type ConsumerStatus } from '../consumers.js';
import type { Mirror } from '../mirror.js';
import { CURSOR_NAME_PATTERN, SettingsError } from '../../contract/index.js';
import { formatDuration } from '../../runtime/cli/units.js';
import { openStores } from '../../runtime/cli/open-stores.js';
import { collect, type StoreOptions } from '../../runtime/cli/options.js';
import { mirrorOptions } from '../../runtime/cli/store-options.js';

/** `catalog-sync consumers`: who reads the mirror and how far behind, from the stores alone (no catalog request). */
export function addConsumersCommand(program: Command): void {
  mirrorOptions(program.command('consumers'))
    .description(
      'list the named consumers of the mirror: cursor, lag behind watermark.json in commits and time, and the instance holding each (offline: no catalog request)',
    )
    .option('--consumer <name>', 'only this consumer (repeatable): its cursor is read directly, not listed', collect)
    .option('--json', 'print one JSON line', false)
    .addHelpText(
      'after',
      '\nExamples:\n  catalog-sync consumers\n  catalog-sync consumers --consumer indexer --json\n  catalog-sync consumers --bucket my-mirror --cursor-table cursors --prefix nuget/',
    )
    .action((options: StoreOptions & { consumer?: string[]; json?: boolean }) =>
      printConsumers(options, options.consumer, options.json === true),
    );
}

/** Reads and prints the consumers of the mirror `options` name (all of them, or `names`), as text or one JSON line. */
export async function printConsumers(
  options: StoreOptions,
  names: readonly string[] | undefined,
  json: boolean,
): Promise<void> {
  for (const name of names ?? [])
    if (!CURSOR_NAME_PATTERN.test(name))
      throw new SettingsError('--consumer', `${JSON.stringify(name)} is not a consumer name`);
  const stores = await openStores(options, 4, process.env, 'read');
  try {
    const mirror: Mirror = { store: stores.reader, prefix: options.prefix ?? '', where: stores.where };
    const view = await describeConsumers(mirror, stores.cursors, names);
    process.stdout.write(json ? `${JSON.stringify(view)}\n` : describe(view, options.prefix ?? ''));
  } finally {
    stores.close();
  }
}

function describe(view: ConsumersView, prefix: string): string {
  const where = `${view.mirror}${prefix === '' ? '' : `, prefix ${prefix}`}`;
  const head =
    view.watermark === null
      ? `${where}: no watermark.json yet (nothing is readable)\n`
      : `${where}: watermark ${view.watermark.cursor} (commit key ${view.watermark.commitKey})\n`;
  if (view.consumers.length === 0) return `${head}no named consumers\n`;
  return head + view.consumers.map((consumer) => `${line(consumer)}\n`).join('');
}

function line(consumer: ConsumerStatus): string {
  const cursor =
    consumer.cursor === null
      ? 'no cursor yet'
      : `cursor ${consumer.cursor}${consumer.commitKey === null ? '' : ` (${consumer.commitKey})`}`;
  const commits =
    consumer.lagCommits === null
      ? undefined
      : `${consumer.lagCommitsAtLeast ? 'at least ' : ''}${consumer.lagCommits.toLocaleString('en-US')} ${consumer.lagCommits === 1 ? 'commit' : 'commits'}`;
  const lag =
    commits === undefined
      ? ''
      : consumer.lagCommits === 0
        ? ', caught up'
        : `, ${commits}${consumer.lagSeconds === null ? '' : ` (${formatDuration(consumer.lagSeconds)} of commit time)`} behind`;
  const held =
    consumer.heldBy === null
      ? 'no instance holds it'
      : `held by ${consumer.heldBy} (lease until ${consumer.leaseUntil})`;
  const moved = consumer.updatedAt === null ? '' : `, moved ${consumer.updatedAt}`;
  return `  ${consumer.name}: ${cursor}${lag}${moved}; ${held}`;
}
