/**
 * `catalog-sync status`, `runs` and `keys` with the embedded default, as a child process against a catalog replica:
 * the cursor, the head, the lag and the last runs, as text and as JSON lines.
 */
import { stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { runCli, startCli } from '../../../testkit/cli-process.js';
import type { RunSummary } from '../../../lambda/contract/run-summary.js';
import {
  at,
  catalog,
  head,
  jsonLines,
  lag,
  leavesOf,
  MANY_PROCESSES,
  newDir,
  replica,
  runJson,
  START,
  ticks,
  useReplica,
} from './cli-local-kit.js';

useReplica();

/** A service index URL on a port of 127.0.0.1 where nothing listens (taken, then let go). */
async function deadSource(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v3/index.json`;
}

describe('catalog-sync status offline', () => {
  it(
    'a dead source: the stored cursor, its commit, when it moved and the last runs, one line for the source, exit 0 (1 with --require-source)',
    async () => {
      const dir = newDir('offline');
      const run = await runJson(dir, ['--max-commits', '20']);
      const dead = await deadSource();
      const offline = ['--source', dead, '--data-dir', dir];
      const [text, json, required, requiredJson] = await Promise.all([
        runCli(['status', ...offline]),
        runCli(['status', ...offline, '--json']),
        runCli(['status', ...offline, '--require-source']),
        runCli(['status', ...offline, '--require-source', '--json']),
      ]);
      // Another source than the folder's own (issue 24): said once, on stderr.
      expect(text).toMatchObject({
        code: 0,
        stderr: expect.stringMatching(
          /^catalog-sync: warning: --source \S+ is not the source cursor catalog-to-s3 of this folder was synced from/,
        ),
      });
      const lines = text.stdout.split('\n');
      expect(lines[0]).toBe(`cursor catalog-to-s3 (${dir}): ${run.cursorAfter}`);
      expect(lines[1]).toMatch(
        new RegExp(
          `^  commit ${catalog.commits[19]!.commitId}, moved \\d{4}-\\d{2}-\\d{2}T[\\d:.]+Z, by run ${run.runId}$`,
        ),
      );
      expect(lines[2]).toMatch(/^catalog head: unknown: the source did not answer \(.*127\.0\.0\.1.*ECONNREFUSED.*\)$/);
      expect(lines[3]).toBe('last runs:');
      expect(lines[4]).toContain(run.runId);
      expect(text.stdout).not.toContain('lag');
      const status = jsonLines<Record<string, unknown>>(json.stdout)[0]!;
      expect(json.code).toBe(0);
      expect(status).toMatchObject({
        cursor: run.cursorAfter,
        cursorCommitId: catalog.commits[19]!.commitId,
        source: dead,
        head: null,
        lagSeconds: null,
        pagesBehind: null,
        commitsBehind: null,
        lastRuns: [run],
      });
      expect(typeof status.cursorUpdatedAt).toBe('string');
      expect(status.sourceError).toContain('ECONNREFUSED');
      // --require-source: the same report, exit 1.
      expect(required.code).toBe(1);
      expect(required.stdout).toBe(text.stdout);
      expect(requiredJson.code).toBe(1);
      expect(jsonLines<Record<string, unknown>>(requiredJson.stdout)[0]).toMatchObject({
        cursor: run.cursorAfter,
        head: null,
      });
    },
    MANY_PROCESSES,
  );

  it(
    'a fresh folder and a dead source: "no cursor yet", no runs, and nothing created',
    async () => {
      const dir = newDir('fresh-offline');
      const dead = await deadSource();
      const [text, json] = await Promise.all([
        runCli(['status', '--source', dead, '--data-dir', dir]),
        runCli(['status', '--source', dead, '--data-dir', dir, '--json']),
      ]);
      expect(text.code).toBe(0);
      const lines = text.stdout.split('\n');
      expect(lines[0]).toBe(`cursor catalog-to-s3 (${dir}): no cursor yet (a run starts at ${START})`);
      expect(lines[1]).toMatch(/^catalog head: unknown: the source did not answer \(.*ECONNREFUSED.*\)$/);
      expect(lines.slice(2)).toEqual(['no runs recorded', '']);
      expect(json.code).toBe(0);
      expect(jsonLines<Record<string, unknown>>(json.stdout)[0]).toMatchObject({
        cursor: null,
        cursorCommitId: null,
        cursorUpdatedAt: null,
        head: null,
        lagSeconds: null,
        lastRuns: [],
      });
      await expect(stat(dir)).rejects.toThrow();
    },
    MANY_PROCESSES,
  );
});

describe('catalog-sync status and runs', () => {
  it(
    'status prints the cursor, the head, the lag and the last runs, as text and as one JSON line',
    async () => {
      const dir = newDir('status');
      const index = JSON.parse(replica.documentAt(replica.catalogIndexUrl)) as {
        items: { commitTimeStamp: string; count: number }[];
      };
      // Commits and leaves are counted exactly when at most 10 pages are behind, and estimated from the index past that.
      const behind = (cursor: string) => {
        const pending = index.items.filter((item) => ticks(item.commitTimeStamp) > ticks(cursor));
        const commits = catalog.commits.filter((commit) => ticks(commit.timestamp) > ticks(cursor));
        const counted = pending.length <= 10;
        return {
          pagesBehind: pending.length,
          leavesBehindAtMost: pending.reduce((n, item) => n + item.count, 0),
          commitsBehind: counted ? commits.length : null,
          leavesBehind: counted ? leavesOf(commits).leaves : null,
        };
      };
      expect(index.items.length).toBeGreaterThan(10); // so the first status estimates

      const [beforeText, beforeJson] = await Promise.all([
        runCli(['status', ...at(dir)]),
        runCli(['status', ...at(dir), '--json']),
      ]);
      expect(beforeText.code).toBe(0);
      expect(beforeText.stdout).toContain(`cursor catalog-to-s3 (${dir}): no cursor yet (a run starts at ${START})\n`);
      expect(beforeText.stdout).toContain(`catalog head: ${head} (${replica.serviceIndexUrl})\n`);
      // No cursor yet: no lag in days, only what there is to sync.
      expect(beforeText.stdout).not.toContain('lag');
      expect(beforeText.stdout).not.toContain('days');
      expect(beforeText.stdout).toContain(
        `to sync: ${index.items.length} pages and at most ${leavesOf(catalog.commits).leaves} leaves behind (commits are counted up to 10 pages behind)\n`,
      );
      expect(beforeText.stdout).toContain('no runs recorded\n');
      expect(beforeJson.code).toBe(0);
      const lines = jsonLines<Record<string, unknown>>(beforeJson.stdout);
      expect(lines).toHaveLength(1);
      const before = lines[0]!;
      expect(before).toMatchObject({
        cursorName: 'catalog-to-s3',
        store: dir,
        cursor: null,
        cursorCommitId: null,
        head,
        lagSeconds: null,
        sourceError: null,
        ...behind(START),
        lastRuns: [],
      });
      await expect(stat(dir)).rejects.toThrow(); // status only reads

      const run = await runJson(dir, ['--max-commits', '50']);
      const [afterText, afterJson] = await Promise.all([
        runCli(['status', ...at(dir)]),
        runCli(['status', ...at(dir), '--json']),
      ]);
      expect(afterText.code).toBe(0);
      expect(afterText.stdout).toContain(
        `cursor catalog-to-s3 (${dir}): ${run.cursorAfter}\n  commit ${catalog.commits[49]!.commitId}, moved `,
      );
      expect(afterText.stdout).toContain(`catalog head: ${head}`);
      const afterRun = behind(run.cursorAfter);
      expect(afterRun.commitsBehind).toBe(catalog.commits.length - 50);
      expect(afterText.stdout).toContain(
        `, ${afterRun.commitsBehind} commits (${afterRun.leavesBehind} leaves) behind, on ${afterRun.pagesBehind} pages\n`,
      );
      expect(afterText.stdout).toContain(`last runs:\n  ${run.runId}  max-commits`);
      const after = jsonLines<Record<string, unknown>>(afterJson.stdout)[0]!;
      expect(after).toMatchObject({ cursor: run.cursorAfter, head, ...behind(run.cursorAfter), lastRuns: [run] });
      expect(after.lagSeconds as number).toBeCloseTo(lag(head, run.cursorAfter), 2);
      expect(after.lagSeconds as number).toBeGreaterThan(0);
      expect(typeof after.cursorUpdatedAt).toBe('string');

      await runJson(dir);
      expect((await runCli(['status', ...at(dir)])).stdout).toContain('lag: 0.0 s, caught up\n');
      const caughtUp = jsonLines<Record<string, unknown>>((await runCli(['status', ...at(dir), '--json'])).stdout)[0]!;
      expect(caughtUp).toMatchObject({
        cursor: head,
        head,
        lagSeconds: 0,
        pagesBehind: 0,
        leavesBehindAtMost: 0,
        commitsBehind: 0,
        leavesBehind: 0,
      });
      expect((caughtUp.lastRuns as RunSummary[]).map((r) => r.cursorAfter)).toEqual([head, run.cursorAfter]);
    },
    MANY_PROCESSES,
  );

  it(
    'runs lists runs newest first, as text or JSON lines, within --limit, --since and --until',
    async () => {
      const dir = newDir('runs');
      const empty = await runCli(['runs', '--data-dir', dir]);
      expect(empty).toMatchObject({ code: 0, stdout: 'no runs recorded\n' });

      const made: RunSummary[] = [];
      for (let i = 0; i < 3; i++) made.push(await runJson(dir, ['--max-commits', '10']));
      const newestFirst = made.map((run) => run.runId).reverse();

      const [all, limited, text, since, future, until] = await Promise.all([
        runCli(['runs', '--data-dir', dir, '--json']),
        runCli(['runs', '--data-dir', dir, '--json', '--limit', '2']),
        runCli(['runs', '--data-dir', dir]),
        runCli(['runs', '--data-dir', dir, '--json', '--since', '2000-01-01T00:00:00Z']),
        runCli(['runs', '--data-dir', dir, '--since', '2999-01-01T00:00:00Z']),
        runCli(['runs', '--data-dir', dir, '--json', '--until', '2000-01-01T00:00:00Z']),
      ]);
      for (const result of [all, limited, text, since, future, until]) expect(result.code).toBe(0);
      expect(jsonLines(all.stdout)).toEqual([...made].reverse());
      expect(jsonLines(limited.stdout).map((run) => run.runId)).toEqual(newestFirst.slice(0, 2));
      const textLines = text.stdout.trim().split('\n');
      expect(textLines.map((line) => line.split(' ')[0])).toEqual(newestFirst);
      expect(textLines[0]).toContain(`max-commits`);
      expect(textLines[0]).toContain(`${made[2]!.cursorBefore} -> ${made[2]!.cursorAfter}`);
      expect(jsonLines(since.stdout).map((run) => run.runId)).toEqual(newestFirst);
      expect(future.stdout).toBe('no runs recorded\n');
      expect(until.stdout).toBe('');
    },
    MANY_PROCESSES,
  );

  it('a reader that closes the pipe early (catalog-sync status | head -1) ends it quietly with exit 0', async () => {
    const dir = newDir('pipe');
    await runJson(dir, ['--max-commits', '5']);
    const { child, done } = startCli(['status', ...at(dir)]);
    // Gone before status has fetched the index and printed anything: every write meets a closed pipe.
    child.stdout!.destroy();
    const result = await done;
    expect(result).toMatchObject({ code: 0, signal: null, stderr: '' });
  });

  it('keys prints the StartAfter key of a date', async () => {
    const [plain, prefixed] = await Promise.all([
      runCli(['keys', '--since', '2017-10-31T23:30:32Z']),
      runCli(['keys', '--since', '2017-10-31T23:30:32Z', '--prefix', 'mirror/']),
    ]);
    expect(plain).toMatchObject({ code: 0, stdout: 'leaves/001e9fzM\n', stderr: '' });
    expect(prefixed).toMatchObject({ code: 0, stdout: 'mirror/leaves/001e9fzM\n' });
  });
});
