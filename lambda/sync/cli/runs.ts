import type { Command } from 'commander';
import { expandDateOnly, parseSettings, SettingsError } from '../../contract/index.js';
import { prefix as kuuidPrefix } from '../../ids/kuuid.js';
import { parseTimeFlag } from '../../runtime/cli/time-flags.js';
import { describeRun } from './format.js';
import { openStores } from '../../runtime/cli/open-stores.js';
import { FLAG_NAMES, rawSettingsOf, type StoreOptions } from '../../runtime/cli/options.js';
import { storeOptions } from '../../runtime/cli/store-options.js';

/** `catalog-sync runs`: recent runs, newest first. */
export function addRunsCommand(program: Command): void {
  storeOptions(program.command('runs'))
    .description('list recent runs, newest first')
    .option('--since <date>', 'runs started at or after this time (ISO 8601 with Z, or a date alone: midnight UTC)')
    .option('--until <date>', 'runs started at or before this second (a date alone: midnight UTC)')
    .option('--limit <n>', 'most runs to list', '20')
    .option('--json', 'one JSON line per run', false)
    .addHelpText(
      'after',
      '\nExamples:\n  catalog-sync runs --limit 5\n  catalog-sync runs --since 2026-11-01T00:00:00Z --json',
    )
    .action(runsCommand);
}

async function runsCommand(
  options: StoreOptions & { since?: string; until?: string; limit: string; json?: boolean },
): Promise<void> {
  const settings = parseSettings(rawSettingsOf(options), FLAG_NAMES);
  if (!/^\d+$/.test(options.limit) || Number(options.limit) < 1 || Number(options.limit) > 10_000) {
    throw new SettingsError('--limit', `${JSON.stringify(options.limit)} must be a whole number from 1 to 10000`);
  }
  const bound = (flag: string, value: string | undefined): string | undefined => {
    if (value === undefined) return undefined;
    parseTimeFlag(flag, value);
    try {
      return kuuidPrefix(expandDateOnly(value));
    } catch (error) {
      throw new SettingsError(flag, (error as Error).message, { cause: error });
    }
  };
  const fromId = bound('--since', options.since);
  const toId = bound('--until', options.until);
  const stores = await openStores(options, 4, process.env, 'read');
  const runs = await stores.runLog.listRuns(settings.cursorName, {
    limit: Number(options.limit),
    ...(fromId === undefined ? {} : { fromId }),
    ...(toId === undefined ? {} : { toId }),
  });
  stores.close();
  for (const run of runs) process.stdout.write(`${options.json ? JSON.stringify(run) : describeRun(run)}\n`);
  if (!options.json && runs.length === 0) process.stdout.write('no runs recorded\n');
}
