/**
 * Quiet following and the error of a failed run (issue 13): `run --follow` prints one line per slice that moved
 * and nothing for an empty poll, and logs no empty poll as a run; a failed run's summary carries
 * `error: { message, url, code }` in `--json` and in the run log (the local folder here, DynamoDB below).
 */
import { describe, expect, it } from 'vitest';
import { appendCommits, generateCatalog } from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { runCli, startCli, waitFor } from '../../../testkit/cli-process.js';
import { commitTicks, SyncHarness } from '../../../testkit/sync-harness.js';
import { formatTimestamp } from '../../../lambda/contract/time.js';
import type { RunSummary } from '../../../lambda/contract/run-summary.js';
import { at, catalog, jsonLines, MANY_PROCESSES, newDir, replica, useReplica } from './cli-local-kit.js';

useReplica();

/** Follows `live` into `dir`; returns what it printed once stopped, after `steps` ran against it. */
async function follow(
  live: CatalogReplica,
  dir: string,
  extra: string[],
  steps: (printed: () => string, polls: (n: number) => Promise<void>) => Promise<void>,
) {
  const indexPath = new URL(live.catalogIndexUrl).pathname;
  const { child, done } = startCli(['run', ...at(dir, live), '--follow', '--poll-interval', '0.05', ...extra]);
  let stdout = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  // `n` more reads of the catalog index: `n` more polls, each one found nothing new.
  const polls = async (n: number): Promise<void> => {
    const from = live.countRequests(indexPath);
    await waitFor(() => live.countRequests(indexPath) >= from + n, `${n} more polls`);
  };
  await steps(() => stdout, polls);
  child.kill('SIGINT');
  return done;
}

describe('catalog-sync run --follow is quiet', () => {
  it(
    '--json: one line per slice that moved, nothing for an empty poll, and no empty poll in the run log',
    async () => {
      const growing = generateCatalog({ commits: 30, seed: 131, sameMillisecondPairs: 1 });
      const live = await CatalogReplica.start({ catalog: growing, pageSize: 20 });
      try {
        const dir = newDir('quiet-json');
        const head1 = formatTimestamp(commitTicks(growing, -1));
        let head2 = '';
        const result = await follow(live, dir, ['--json'], async (printed, polls) => {
          await waitFor(() => printed().includes(head1), 'the first catch-up');
          await polls(5);
          appendCommits(growing, 12, 132);
          head2 = formatTimestamp(commitTicks(growing, -1));
          await waitFor(() => printed().includes(`"cursorAfter":"${head2}"`), 'the new commits');
          await polls(5);
        });
        expect(result).toMatchObject({ code: 0, signal: null, stderr: '' });
        const lines = jsonLines(result.stdout);
        expect(lines.map((line) => [line.cursorAfter, line.commits])).toEqual([
          [head1, 30],
          [head2, 12],
        ]);
        // The run log holds the two slices that moved, not the ten empty polls.
        const runs = jsonLines((await runCli(['runs', '--data-dir', dir, '--json'])).stdout);
        expect(runs.map((run) => run.runId)).toEqual([lines[1]!.runId, lines[0]!.runId]);
      } finally {
        await live.stop();
      }
    },
    MANY_PROCESSES,
  );

  it(
    'as text: one line per slice that moved, said once that it waits while it polls a caught-up catalog, the whole follow on Ctrl-C',
    async () => {
      const dir = newDir('quiet-text');
      const headTimestamp = formatTimestamp(commitTicks(catalog, -1));
      const result = await follow(replica, dir, ['--no-progress'], async (printed, polls) => {
        await waitFor(() => printed().includes(headTimestamp), 'the catch-up');
        await polls(5);
      });
      expect(result).toMatchObject({ code: 0, signal: null });
      const lines = result.stdout.split('\n').filter((line) => line !== '');
      expect(lines).toHaveLength(3);
      expect(lines[0]).toMatch(
        new RegExp(`^${headTimestamp} caught-up: ${catalog.commits.length} commits, \\d+ leaves`),
      );
      // Ctrl-C: the whole follow, added up (issue 34: it used to end on "stopping: …" alone).
      expect(lines[1]).toMatch(
        new RegExp(
          `^interrupted: ${catalog.commits.length} commits, \\d+ leaves \\(\\d+ deletes, 0 quarantined\\), [\\d.]+ KiB in [\\d.]+ s$`,
        ),
      );
      expect(lines[2]).toBe(`cursor catalog-to-s3: 0001-01-01T00:00:00.0000000Z -> ${headTimestamp}, lag 0.0 s`);
      // Caught up: said once, with how often it checks (not a terminal: no line redrawn), however many polls followed.
      // (Ctrl-C between polls is only a stop; during a poll, its requests in flight are aborted.)
      const [said, ...rest] = result.stderr.split('\n');
      expect(said).toBe(
        `catalog-sync: caught up at ${headTimestamp}; waiting for new commits; checking every 0.05 s, one line per slice that finds new commits (Ctrl-C to stop)`,
      );
      expect(rest.join('\n')).toMatch(
        /^\nstopping(: aborting requests in flight and checkpointing the last complete commit \(Ctrl-C again to quit now\))?\n$/,
      );
      const runs = jsonLines((await runCli(['runs', '--data-dir', dir, '--json'])).stdout);
      expect(runs).toHaveLength(1);
    },
    MANY_PROCESSES,
  );
});

describe('a failed run carries its error', () => {
  it(
    'in --json and in the local run log: message, url and code',
    async () => {
      const dir = newDir('failed');
      const leaf = catalog.commits[3]!.leaves[0]!;
      replica.overrideBody(leaf.path, 'not json', { times: 1_000 });
      try {
        const result = await runCli(['run', ...at(dir), '--json']);
        expect(result.code).toBe(1);
        const [summary] = jsonLines(result.stdout);
        expect(summary).toMatchObject({
          stoppedBy: 'error',
          commits: 3,
          error: { url: `${replica.origin}${leaf.path}`, code: 'CS_ERR_INVALID_DOCUMENT' },
        });
        expect(summary!.error!.message).toContain('not valid JSON');
        const [logged] = jsonLines((await runCli(['runs', '--data-dir', dir, '--json'])).stdout);
        expect(logged).toEqual(summary);
        // The text forms name the code too.
        expect((await runCli(['runs', '--data-dir', dir])).stdout).toContain('CS_ERR_INVALID_DOCUMENT: ');
      } finally {
        replica.clearFaults();
      }
    },
    MANY_PROCESSES,
  );

  it(
    'in the DynamoDB run log, and no error field on a run that did not fail',
    async () => {
      const harness = await SyncHarness.create();
      const leaf = catalog.commits[5]!.leaves[0]!;
      replica.failWith(leaf.path, 404, 1_000);
      try {
        const aws = ['--source', replica.serviceIndexUrl, '--cursor-table', harness.table, '--bucket', harness.bucket];
        const result = await runCli(['run', ...aws, '--json'], harness.env());
        expect(result.code).toBe(1);
        const [summary] = jsonLines(result.stdout);
        expect(summary).toMatchObject({
          stoppedBy: 'error',
          error: { url: `${replica.origin}${leaf.path}`, code: 'CS_ERR_FETCH' },
        });
        replica.clearFaults();
        const next = await runCli(['run', ...aws, '--json'], harness.env());
        expect(next.code).toBe(0);
        const [ok] = jsonLines<RunSummary>(next.stdout);
        expect(ok).not.toHaveProperty('error');
        const runs = jsonLines((await runCli(['runs', ...aws, '--json'], harness.env())).stdout);
        expect(runs).toEqual([ok, summary]);
      } finally {
        replica.clearFaults();
      }
    },
    MANY_PROCESSES,
  );
});
