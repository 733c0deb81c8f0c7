/**
 * `catalog-sync run` against DynamoDB and S3 as a child process, as a user runs it, and the Lambda handler
 * in-process with the same settings: both sync a generated catalog completely in the contract's layout, and a
 * run killed with SIGKILL mid-slice loses nothing.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { formatTimestamp, parseTimestamp } from '../../../lambda/contract/time.js';
import { generateCatalog, type GeneratedCatalog } from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { runCli, startCli, waitFor } from '../../../testkit/cli-process.js';
import { commitTicks, SyncHarness } from '../../../testkit/sync-harness.js';

let catalog: GeneratedCatalog;
let replica: CatalogReplica;

beforeAll(async () => {
  catalog = generateCatalog({ commits: 75, seed: 71, leavesPerCommit: [1, 4], sameMillisecondPairs: 3 });
  replica = await CatalogReplica.start({ catalog, pageSize: 10 });
});
afterAll(async () => {
  await replica.stop();
});

describe('catalog-sync run with --cursor-table and --bucket', () => {
  it('syncs the whole catalog and prints one JSON line with --json', async () => {
    const harness = await SyncHarness.create();
    const result = await runCli(
      [
        'run',
        '--source',
        replica.serviceIndexUrl,
        '--cursor-table',
        harness.table,
        '--bucket',
        harness.bucket,
        '--json',
        '--max-commits',
        '1000',
      ],
      harness.env(),
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const summary = JSON.parse(lines[0]!);
    expect(Object.keys(summary).sort()).toEqual(
      [
        'runId',
        'cursorName',
        'cursorBefore',
        'cursorAfter',
        'commits',
        'leaves',
        'deletes',
        'quarantined',
        'bytes',
        'caughtUp',
        'stoppedBy',
        'durationMs',
        'putRetries',
      ].sort(),
    );
    expect(summary).toMatchObject({
      commits: 75,
      stoppedBy: 'caught-up',
      cursorAfter: formatTimestamp(commitTicks(catalog, -1)),
    });
    expect(await harness.verify(catalog, replica.origin, commitTicks(catalog, -1))).toEqual([]);
  });

  it('a run killed with SIGKILL mid-slice loses nothing; the next run completes it', async () => {
    const slow = await CatalogReplica.start({ catalog, pageSize: 10, latencyMs: 15 });
    try {
      const harness = await SyncHarness.create();
      const args = [
        'run',
        '--source',
        slow.serviceIndexUrl,
        '--cursor-table',
        harness.table,
        '--bucket',
        harness.bucket,
        '--json',
        '--concurrency',
        '4',
        '--max-commits',
        '1000',
      ];
      const { child, done } = startCli(args, harness.env());
      await waitFor(async () => (await harness.count('commits/')) >= 10, 'ten manifests');
      child.kill('SIGKILL');
      const killed = await done;
      expect(killed.signal).toBe('SIGKILL');
      const stored = await harness.cursor();
      expect(stored).toBeDefined();
      const cursor = parseTimestamp(stored!);
      expect(cursor).toBeLessThan(commitTicks(catalog, -1));
      expect(await harness.verify(catalog, slow.origin, cursor)).toEqual([]);

      const resumed = await runCli(args, harness.env());
      expect(resumed.code).toBe(0);
      const summary = JSON.parse(resumed.stdout.trim());
      expect(summary.cursorBefore).toBe(stored);
      expect(summary.stoppedBy).toBe('caught-up');
      expect(await harness.verify(catalog, slow.origin, commitTicks(catalog, -1))).toEqual([]);
    } finally {
      await slow.stop();
    }
  });

  it('exits 1 with the URL and the reason when a document is bad', async () => {
    const harness = await SyncHarness.create();
    const leaf = catalog.commits[3]!.leaves[0]!;
    replica.overrideBody(leaf.path, 'not json', { times: 1_000 });
    try {
      const result = await runCli(
        ['run', '--source', replica.serviceIndexUrl, '--cursor-table', harness.table, '--bucket', harness.bucket],
        harness.env(),
      );
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`${replica.origin}${leaf.path}`);
      expect(result.stderr).toContain('not valid JSON');
      expect(result.stdout).toContain('failed: 3 commits');
      expect(await harness.cursor()).toBe(formatTimestamp(commitTicks(catalog, 2)));
    } finally {
      replica.clearFaults();
    }
  });

  it('bad flags and settings exit 2 and name the setting', async () => {
    const cases: [string[], string][] = [
      [['run', '--max-commits', '0'], '--max-commits'],
      [['run', '--concurrency', 'many'], '--concurrency'],
      [['run', '--source', 'ftp://example.org/index.json'], '--source'],
      [['run', '--start', '2017-13-01'], '--start'],
      [['run', '--start', 'yesterday'], '--start'],
      [['run', '--cursor-table', 'cursors'], '--bucket'],
      [['run', '--allow-origin', 'https://example.org/path'], '--allow-origin'],
      [['run', '--cursor-name', 'a/b'], '--cursor-name'],
      [['run', '--time-budget', '-5'], '--time-budget'],
      [['run', '--no-such-flag'], '--no-such-flag'],
    ];
    for (const [args, setting] of cases) {
      const result = await runCli(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toContain(setting);
    }
  });
});

describe('the Lambda handler', () => {
  it('runs a bounded slice from its environment and returns the summary; bad settings are named', async () => {
    const harness = await SyncHarness.create();
    const saved = { ...process.env };
    Object.assign(
      process.env,
      harness.env({ CATALOG_SOURCE: replica.serviceIndexUrl, MAX_COMMITS: '40', CURSOR_NAME: 'lambda' }),
    );
    try {
      const { handler } = await import('../../../lambda/sync/lambda.js');
      const context = { getRemainingTimeInMillis: () => 120_000 };
      // Powertools writes JSON logs and EMF metrics to stdout: capture them for this first run.
      const lines: string[] = [];
      const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
        lines.push(
          ...String(chunk)
            .split('\n')
            .filter((line) => line.startsWith('{')),
        );
        return true;
      });
      let first;
      try {
        first = await handler({}, context);
      } finally {
        spy.mockRestore();
      }
      expect(first).toMatchObject({ cursorName: 'lambda', commits: 40, stoppedBy: 'max-commits' });
      const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
      const finished = records.find((record) => record.message === 'run finished');
      expect(finished).toMatchObject({ level: 'INFO', runId: first.runId, cursorName: 'lambda' });
      const emf = records.find((record) => record._aws !== undefined);
      expect(emf).toMatchObject({
        Leaves: first.leaves,
        Commits: 40,
        RunSucceeded: 1,
        RunFailed: 0,
        runId: first.runId,
        stoppedBy: 'max-commits',
      });
      expect(emf!.CursorLagSeconds).toBeGreaterThan(0);
      replica.clearLog();
      const second = await handler({}, context);
      expect(second.cursorBefore).toBe(first.cursorAfter);
      // Warm: the unchanged index is not downloaded again (a conditional GET answered 304), the service index is
      // not read again, and no page before the cursor's page is fetched again.
      const indexRequests = replica.requests.filter((r) => r.path === '/v3/catalog0/index.json');
      expect(indexRequests).toHaveLength(1);
      expect(indexRequests[0]!.headers['if-none-match']).toBeDefined();
      expect(replica.countRequests('/v3/index.json')).toBe(0);
      const pages = replica.pagePaths();
      const firstPageNeeded = pages.findIndex(
        (_, i) => pages.slice(0, i + 1).reduce((n, __, j) => n + replica.commitsOnPage(j), 0) > 40,
      );
      for (const page of pages.slice(0, firstPageNeeded)) expect(replica.countRequests(page), page).toBe(0);
      const runs = await runCli(
        ['runs', '--cursor-name', 'lambda', '--cursor-table', harness.table, '--bucket', harness.bucket, '--json'],
        harness.env(),
      );
      expect(runs.code).toBe(0);
      expect(
        runs.stdout
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line).runId),
      ).toEqual([second.runId, first.runId]);
      expect(await harness.cursor('lambda')).toBe(second.cursorAfter);
      process.env.MAX_LEAVES = 'lots';
      await expect(handler({}, context)).rejects.toThrow(/MAX_LEAVES/);
      delete process.env.MAX_LEAVES;
      delete process.env.CURSOR_TABLE;
      await expect(handler({}, context)).rejects.toThrow(/CURSOR_TABLE/);
    } finally {
      process.env = saved;
    }
  });
});
