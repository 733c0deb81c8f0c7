/**
 * Dates as people write them and --data-dir problems (issue 13): a date alone (`2017-11-01`) means midnight UTC
 * wherever the CLI takes a time (`--start`, `--since`, `--until` of run, runs, keys and backfill); a --data-dir
 * that is a file, lies under one, or cannot be written is a usage error (exit 2, naming --data-dir) found before
 * any request reaches the source.
 */
import { spawnSync } from 'node:child_process';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../testkit/cli-process.js';
import { readLocalState } from '../../../testkit/local-verify.js';
import { formatTimestamp } from '../../../lambda/contract/time.js';
import {
  at,
  catalog,
  jsonLines,
  MANY_PROCESSES,
  newDir,
  replica,
  root,
  runJson,
  ticks,
  useReplica,
} from './cli-local-kit.js';

useReplica();

const MIDNIGHT = '2017-11-01T00:00:00Z';
const before = () => catalog.commits.filter((commit) => ticks(commit.timestamp) <= ticks(MIDNIGHT));
const after = () => catalog.commits.filter((commit) => ticks(commit.timestamp) > ticks(MIDNIGHT));

describe('a date alone means midnight UTC', () => {
  it('the generated catalog spans the midnight these tests use', () => {
    expect(before().length).toBeGreaterThan(0);
    expect(after().length).toBeGreaterThan(0);
  });

  it('keys --since', async () => {
    const [date, exact] = await Promise.all([
      runCli(['keys', '--since', '2017-11-01']),
      runCli(['keys', '--since', MIDNIGHT]),
    ]);
    expect(date).toMatchObject({ code: 0, stderr: '' });
    expect(date.stdout).toBe(exact.stdout);
    const bad = await runCli(['keys', '--since', '2017-13-01']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--since');
  });

  it(
    'run --start',
    async () => {
      const dir = newDir('start-date');
      const summary = await runJson(dir, ['--start', '2017-11-01']);
      expect(summary).toMatchObject({
        cursorBefore: formatTimestamp(ticks(MIDNIGHT)),
        commits: after().length,
        stoppedBy: 'caught-up',
      });
    },
    MANY_PROCESSES,
  );

  it(
    'runs --since and --until',
    async () => {
      const dir = newDir('runs-dates');
      const made = await runJson(dir, ['--max-commits', '5']);
      const runs = (...args: string[]) => runCli(['runs', '--data-dir', dir, '--json', ...args]);
      const [since, sinceFuture, until, untilFuture] = await Promise.all([
        runs('--since', '2000-01-01'),
        runs('--since', '2999-01-01'),
        runs('--until', '2000-01-01'),
        runs('--until', '2999-01-01'),
      ]);
      for (const result of [since, sinceFuture, until, untilFuture])
        expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(jsonLines(since.stdout).map((run) => run.runId)).toEqual([made.runId]);
      expect(sinceFuture.stdout).toBe('');
      expect(until.stdout).toBe('');
      expect(jsonLines(untilFuture.stdout).map((run) => run.runId)).toEqual([made.runId]);
    },
    MANY_PROCESSES,
  );

  it(
    'backfill --until',
    async () => {
      const dir = newDir('backfill-until-date');
      const result = await runCli(['backfill', ...at(dir), '--workers', '1', '--until', '2017-11-01', '--json']);
      expect(result.code).toBe(0);
      const newest = before().at(-1)!;
      expect(jsonLines(result.stdout).at(-1)).toMatchObject({
        cursorAfter: formatTimestamp(ticks(newest.timestamp)),
        commits: before().length,
      });
      expect((await readLocalState(dir))!.cursors['catalog-to-s3']!.cursor).toBe(
        formatTimestamp(ticks(newest.timestamp)),
      );
    },
    MANY_PROCESSES,
  );
});

describe('--data-dir problems are usage errors found before any fetch', () => {
  /** Runs the CLI and checks exit 2, a message naming --data-dir and `what`, and no request to the source. */
  async function refused(args: string[], what: string): Promise<void> {
    replica.clearLog();
    const result = await runCli(args);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain('--data-dir');
    expect(result.stderr).toContain(what);
    expect(result.stdout).toBe('');
    expect(replica.countRequests(() => true)).toBe(0);
  }

  it(
    'a file, or a path under a file: for run, backfill, status and runs',
    async () => {
      const file = join(root, 'a-file');
      await writeFile(file, 'not a folder');
      const source = ['--source', replica.serviceIndexUrl];
      for (const command of [['run'], ['backfill', '--workers', '1'], ['status'], ['runs']]) {
        await refused([...command, ...source, '--data-dir', file], 'is a file, not a folder');
        await refused([...command, ...source, '--data-dir', join(file, 'mirror')], 'a file, not a folder');
      }
    },
    MANY_PROCESSES,
  );

  it(
    'a folder that cannot be written: for run and backfill (status still reads it)',
    async () => {
      const dir = join(root, 'read-only');
      await mkdir(dir);
      await chmod(dir, 0o555);
      // Permission bits do not bind root: make the folder immutable as well.
      const asRoot = process.getuid?.() === 0;
      if (asRoot) expect(spawnSync('chattr', ['+i', dir]).status).toBe(0);
      try {
        await refused(['run', ...at(dir)], 'cannot be written');
        await refused(['backfill', ...at(dir), '--workers', '1'], 'cannot be written');
        await refused(
          ['run', ...at(join(dir, 'mirror'))],
          `cannot be created: ${JSON.stringify(dir)} takes no new folder`,
        );
        const status = await runCli(['status', ...at(dir)]);
        expect(status.code).toBe(0);
        expect(status.stdout).toContain('no cursor yet');
      } finally {
        if (asRoot) spawnSync('chattr', ['-i', dir]);
        await chmod(dir, 0o755);
      }
    },
    MANY_PROCESSES,
  );
});
