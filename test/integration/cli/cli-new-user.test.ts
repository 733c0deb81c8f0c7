/**
 * What a new user stumbled on (issue 24, part 5), each from the CLI as a child process: `run --follow` keeps going
 * through an outage and says so once; AWS set-up errors name the setting and exit 2; a failed run ends with its
 * cause; Ctrl-C and SIGTERM are reported as `interrupted`; `--start` ignored says so; `--since lastweek` is told in words;
 * `run --until` and `--delay` bound a run (`until`).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatTimestamp } from '../../../lambda/contract/time.js';
import { generateCatalog } from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { CLI, runCli, startCli, waitFor, type CliResult } from '../../../testkit/cli-process.js';
import { commitTicks, SyncHarness } from '../../../testkit/sync-harness.js';
import { at, catalog, head, jsonLines, MANY_PROCESSES, newDir, replica, runJson, useReplica } from './cli-local-kit.js';

useReplica();

/** The CLI with exactly `env` (plus PATH): no AWS variable of the test's own environment leaks in. */
function runBare(args: string[], env: Record<string, string>): Promise<CliResult> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

const lastLine = (text: string): string => text.trimEnd().split('\n').at(-1) ?? '';

describe('run --follow keeps following', () => {
  it(
    'through an outage: one line when it begins, one when it ends, then it goes on; Ctrl-C ends it with 0',
    async () => {
      const live = await CatalogReplica.start({ catalog: generateCatalog({ commits: 30, seed: 241 }), pageSize: 10 });
      try {
        const dir = newDir('outage');
        // The index fails 12 times: two whole slices (5 attempts each), then the third slice gets through.
        live.failWith(new URL(live.catalogIndexUrl).pathname, 503, 12);
        const { child, done } = startCli(['run', ...at(dir, live), '--follow', '--poll-interval', '0.05', '--json']);
        let stdout = '';
        let stderr = '';
        child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        await waitFor(() => stderr.includes('recovered after'), 'the recovery');
        await waitFor(() => stdout.includes('"caught-up"'), 'the catch-up');
        child.kill('SIGINT');
        const result = await done;
        expect(result.code).toBe(0);
        expect(result.stderr.match(/slice failed: /g)).toHaveLength(1);
        expect(result.stderr.match(/still following: retrying in /g)).toHaveLength(1);
        expect(result.stderr).toContain('HTTP 503');
        expect(result.stderr).toMatch(/recovered after 2 failed slices \(\d+ s\); following again/);
        expect(jsonLines(result.stdout).at(-1)).toMatchObject({ stoppedBy: 'caught-up', commits: 30 });
      } finally {
        await live.stop();
      }
    },
    MANY_PROCESSES,
  );

  it(
    'but not past an error no retry fixes (a bad document without quarantine): exit 1 with the cause last',
    async () => {
      const dir = newDir('follow-bad');
      const leaf = catalog.commits[2]!.leaves[0]!;
      replica.overrideBody(leaf.path, 'not json', { times: 1_000 });
      try {
        const result = await runCli(['run', ...at(dir), '--follow', '--poll-interval', '0.05', '--no-progress']);
        expect(result.code).toBe(1);
        expect(result.stderr).not.toContain('still following');
        expect(lastLine(result.stderr)).toMatch(
          /^catalog-sync: run failed \(the 2 commits before it are stored; the cursor is at .+\): .*not valid JSON/,
        );
        expect(result.stdout).toMatch(/^failed: 2 commits/);
      } finally {
        replica.clearFaults();
      }
    },
    MANY_PROCESSES,
  );
});

describe('a stop is told as what happened', () => {
  it(
    'Ctrl-C and SIGTERM: "interrupted", not time-budget, in words, in the JSON line and in the run log; the run checkpointed, exit 0',
    async () => {
      const slow = await CatalogReplica.start({ catalog, pageSize: 20, latencyMs: 40 });
      try {
        // SIGINT, for a person: the first line says it.
        const dir = newDir('interrupted');
        const { child, done } = startCli(['run', ...at(dir, slow), '--no-progress', '--concurrency', '2']);
        await waitFor(() => slow.countRequests((path) => path.includes('/data/')) >= 6, 'a few leaves');
        child.kill('SIGINT');
        const result = await done;
        expect(result.code).toBe(0);
        expect(result.stdout).toMatch(/^interrupted: \d+ commits/);
        expect(result.stdout).not.toContain('time-budget');

        // SIGTERM, as a service manager stops it, with --json: the summary says it, and so does the run log.
        const termDir = newDir('terminated');
        const before = slow.countRequests((path) => path.includes('/data/'));
        const term = startCli(['run', ...at(termDir, slow), '--json', '--concurrency', '2']);
        await waitFor(() => slow.countRequests((path) => path.includes('/data/')) >= before + 6, 'a few leaves');
        term.child.kill('SIGTERM');
        const terminated = await term.done;
        expect(terminated.code).toBe(0);
        const [summary, ...more] = jsonLines(terminated.stdout);
        expect(more).toEqual([]);
        expect(summary).toMatchObject({ stoppedBy: 'interrupted', caughtUp: false });
        expect(summary!.commits).toBeLessThan(catalog.commits.length);
        const logged = jsonLines((await runCli(['runs', '--data-dir', termDir, '--json'])).stdout)[0];
        expect(logged).toMatchObject({
          runId: summary!.runId,
          stoppedBy: 'interrupted',
          caughtUp: false,
          commits: summary!.commits,
        });
        expect((await runCli(['runs', '--data-dir', termDir])).stdout).toMatch(/^\S+ {2}interrupted /);
      } finally {
        await slow.stop();
      }
    },
    MANY_PROCESSES,
  );

  it(
    '--start given once a cursor is stored: ignored, and said so before the run',
    async () => {
      const dir = newDir('start');
      await runJson(dir, ['--max-commits', '5']);
      const result = await runCli(['run', ...at(dir), '--start', '2020-01-01', '--max-commits', '5', '--json']);
      expect(result.code).toBe(0);
      expect(result.stderr).toMatch(
        /--start 2020-01-01T00:00:00.0000000Z ignored: cursor catalog-to-s3 is stored at \S+, and a run always goes on from its stored cursor/,
      );
      expect(jsonLines(result.stdout)[0]).toMatchObject({
        cursorBefore: formatTimestamp(commitTicks(catalog, 4)),
        commits: 5,
      });
      // A new cursor takes it without a word.
      const fresh = await runCli([
        'run',
        ...at(newDir('start-new')),
        '--start',
        '2017-11-01',
        '--max-commits',
        '1',
        '--json',
      ]);
      expect(fresh).toMatchObject({ code: 0, stderr: '' });
    },
    MANY_PROCESSES,
  );

  it(
    'a time that is not one (--since lastweek, --start, --until) is refused in words, exit 2',
    async () => {
      const dir = newDir('since');
      for (const args of [
        ['runs', '--data-dir', dir, '--since', 'lastweek'],
        ['keys', '--since', 'lastweek'],
        ['run', ...at(dir), '--start', 'lastweek'],
        ['run', ...at(dir), '--until', 'lastweek'],
      ]) {
        const flag = args.at(-2)!;
        const result = await runCli(args);
        expect(result.code, args.join(' ')).toBe(2);
        expect(result.stderr).toBe(
          `catalog-sync: ${flag}: "lastweek" is not a time (ISO 8601 in UTC, e.g. 2024-01-01T00:00:00Z, or a date alone, 2024-01-01, meaning midnight UTC)\n`,
        );
      }
      const delay = await runCli(['run', ...at(dir), '--delay', 'soon']);
      expect(delay).toMatchObject({
        code: 2,
        stderr: 'catalog-sync: --delay: "soon" must be a number of seconds, or one with a unit: 90s, 10m, 2h, 1d\n',
      });
    },
    MANY_PROCESSES,
  );
});

describe('run --until and --delay bound a run', () => {
  it(
    '--until: no commit after it, "reached --until" with the lag left; --follow stops there by itself',
    async () => {
      const until = formatTimestamp(commitTicks(catalog, 39));
      const dir = newDir('until');
      const text = await runCli(['run', ...at(dir), '--until', until, '--no-progress']);
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(new RegExp(`^reached --until ${until.replace(/[.]/g, '\\.')}: 40 commits`));
      expect(text.stdout).toMatch(/, lag \d/);
      const json = jsonLines((await runCli(['runs', '--data-dir', dir, '--json'])).stdout)[0]!;
      expect(json).toMatchObject({ cursorAfter: until, commits: 40, caughtUp: false, stoppedBy: 'until' });
      expect((await runCli(['runs', '--data-dir', dir])).stdout).toMatch(/^\S+ {2}until {7}/);
      // Again, with the cursor at the bound: nothing to take, still short of the head.
      expect(await runJson(dir, ['--until', until])).toMatchObject({
        cursorBefore: until,
        cursorAfter: until,
        commits: 0,
        caughtUp: false,
        stoppedBy: 'until',
      });
      // A bound at the head is the head: caught up.
      expect(await runJson(dir, ['--until', head])).toMatchObject({
        cursorAfter: head,
        commits: catalog.commits.length - 40,
        caughtUp: true,
        stoppedBy: 'caught-up',
      });

      // Following with --until: it catches up to the bound and exits 0 without a signal.
      const following = await runCli([
        'run',
        ...at(newDir('until-follow')),
        '--until',
        until,
        '--follow',
        '--poll-interval',
        '0.05',
        '--json',
      ]);
      expect(following.code).toBe(0);
      expect(jsonLines(following.stdout).map((line) => [line.commits, line.cursorAfter])).toEqual([[40, until]]);
    },
    MANY_PROCESSES,
  );

  it(
    '--delay: nothing newer than the clock less the delay (a catalog from 2017 is all older than 1 day, none older than 20000 days)',
    async () => {
      const all = await runJson(newDir('delay-all'), ['--delay', '1d']);
      expect(all).toMatchObject({ commits: catalog.commits.length, cursorAfter: head });
      const none = await runJson(newDir('delay-none'), ['--delay', '20000d']);
      expect(none).toMatchObject({ commits: 0, caughtUp: false, stoppedBy: 'until' });
    },
    MANY_PROCESSES,
  );
});

describe('AWS set-up errors name the setting and exit 2', () => {
  const args = (table = 'cursors', bucket = 'mirror') => [
    'run',
    '--source',
    replica.serviceIndexUrl,
    '--cursor-table',
    table,
    '--bucket',
    bucket,
  ];

  it(
    'no region, no credentials, nothing at the DynamoDB endpoint',
    async () => {
      const home = await mkdtemp(join(tmpdir(), 'catalog-sync-home-'));
      try {
        const isolated = {
          HOME: home,
          AWS_EC2_METADATA_DISABLED: 'true',
          AWS_CONFIG_FILE: join(home, 'config'),
          AWS_SHARED_CREDENTIALS_FILE: join(home, 'credentials'),
        };
        const noRegion = await runBare(args(), { ...isolated, AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'y' });
        expect(noRegion.code).toBe(2);
        expect(noRegion.stderr).toMatch(
          /^catalog-sync: AWS_REGION: is not set, and DynamoDB needs a region: set AWS_REGION/,
        );

        const noCredentials = await runBare(args(), { ...isolated, AWS_REGION: 'us-east-1' });
        expect(noCredentials.code).toBe(2);
        expect(noCredentials.stderr).toMatch(
          /^catalog-sync: AWS credentials: none found for DynamoDB: set AWS_PROFILE/,
        );

        const refused = await runBare(args(), {
          ...isolated,
          AWS_REGION: 'us-east-1',
          AWS_ACCESS_KEY_ID: 'x',
          AWS_SECRET_ACCESS_KEY: 'y',
          AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:1',
        });
        expect(refused.code).toBe(2);
        expect(refused.stderr).toBe(
          'catalog-sync: AWS_ENDPOINT_URL_DYNAMODB: "http://127.0.0.1:1" could not be reached (ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:1): start the DynamoDB server there, or correct AWS_ENDPOINT_URL_DYNAMODB\n',
        );
        const status = await runBare(
          ['status', '--cursor-table', 'cursors', '--bucket', 'mirror', '--source', replica.serviceIndexUrl],
          { ...isolated, AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'y' },
        );
        expect(status.code).toBe(2);
        expect(status.stderr).toContain('AWS_REGION: is not set');
      } finally {
        await rm(home, { recursive: true, force: true });
      }
    },
    MANY_PROCESSES,
  );

  it(
    'nothing at the S3 endpoint: named after the summary, exit 2, nothing lost',
    async () => {
      const harness = await SyncHarness.create();
      const result = await runCli(
        [...args(harness.table, harness.bucket), '--max-commits', '3'],
        harness.env({ AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:1' }),
      );
      expect(result.code).toBe(2);
      expect(result.stdout).toMatch(/^failed: 0 commits/);
      expect(lastLine(result.stderr)).toMatch(
        /^catalog-sync: AWS_ENDPOINT_URL_S3: "http:\/\/127\.0\.0\.1:1" could not be reached \(ECONNREFUSED: .*\): start the S3 server there, or correct AWS_ENDPOINT_URL_S3$/,
      );
      expect(await harness.cursor()).toBeUndefined();
    },
    MANY_PROCESSES,
  );
});

describe('a data folder remembers its source', () => {
  it(
    'status --data-dir compares with the source the folder was synced from; another source given is warned about',
    async () => {
      const dir = newDir('remembers');
      await runJson(dir, ['--max-commits', '10']);
      const status = await runCli(['status', '--data-dir', dir, '--json']);
      expect(status).toMatchObject({ code: 0, stderr: '' });
      const state = jsonLines<Record<string, unknown>>(status.stdout)[0]!;
      expect(state).toMatchObject({
        source: replica.serviceIndexUrl,
        head,
        sourceError: null,
        pagesBehind: expect.any(Number),
      });
      expect(state.lagSeconds).toBeGreaterThan(0);

      const other = await CatalogReplica.start({ catalog: generateCatalog({ commits: 5, seed: 242 }), pageSize: 10 });
      try {
        const warned = await runCli(['status', ...at(dir, other), '--json']);
        expect(warned.code).toBe(0);
        expect(warned.stderr).toBe(
          `catalog-sync: warning: --source ${other.serviceIndexUrl} is not the source cursor catalog-to-s3 of this folder was synced from (${replica.serviceIndexUrl}): its cursor is a position in that catalog\n`,
        );
        const run = await runCli(['run', ...at(dir, other), '--json']);
        expect(run.stderr).toContain(
          `is not the source cursor catalog-to-s3 of this folder was synced from (${replica.serviceIndexUrl})`,
        );
      } finally {
        await other.stop();
      }
    },
    MANY_PROCESSES,
  );

  it(
    'run, verify and retry-quarantine of a folder without --source read the source it was synced from, not nuget.org',
    async () => {
      const dir = newDir('own-source');
      await runJson(dir, ['--max-commits', '10']);
      // No --source: without the folder's memory these would go to api.nuget.org, which this machine cannot resolve.
      const run = await runCli(['run', '--data-dir', dir, '--json']);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      expect(jsonLines<{ commits: number; caughtUp: boolean }>(run.stdout)[0]).toMatchObject({
        caughtUp: true,
        commits: expect.any(Number),
      });
      expect(jsonLines<{ commits: number }>(run.stdout)[0]!.commits).toBeGreaterThan(0);
      const verify = await runCli(['verify', '--data-dir', dir]);
      expect(verify).toMatchObject({ code: 0, stderr: '' });
      const retry = await runCli(['retry-quarantine', '--data-dir', dir, '--json']);
      expect(retry).toMatchObject({ code: 0, stderr: '' });
      const sources = JSON.parse(await readFile(join(dir, '.catalog-sync', 'sources.json'), 'utf8')) as Record<
        string,
        string
      >;
      expect(sources).toEqual({ 'catalog-to-s3': replica.serviceIndexUrl });
    },
    MANY_PROCESSES,
  );
});
