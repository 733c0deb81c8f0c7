import type { Command } from 'commander';
import { expandDateOnly, SettingsError } from '../../contract/index.js';
import { parseTimeFlag } from '../../runtime/cli/time-flags.js';
import { startAfterKey } from '../../ids/start-after.js';

/** `catalog-sync keys`: the ListObjectsV2 StartAfter value that lists snapshots from a date on. */
export function addKeysCommand(program: Command): void {
  program
    .command('keys')
    .description('print the ListObjectsV2 StartAfter value that lists snapshots from a date on')
    .requiredOption('--since <date>', 'ISO 8601 time with Z, or a date alone (midnight UTC)')
    .option('--prefix <prefix>', 'key prefix in the bucket', '')
    .addHelpText(
      'after',
      '\nExamples:\n  catalog-sync keys --since 2017-10-31T23:30:32Z\n  catalog-sync keys --since 2017-11-01\n  aws s3api list-objects-v2 --bucket my-mirror --start-after "$(catalog-sync keys --since 2024-01-01T00:00:00Z)"',
    )
    .action((options: { since: string; prefix: string }) => {
      parseTimeFlag('--since', options.since);
      try {
        process.stdout.write(`${startAfterKey(expandDateOnly(options.since), options.prefix)}\n`);
      } catch (error) {
        throw new SettingsError('--since', (error as Error).message, { cause: error });
      }
    });
}
