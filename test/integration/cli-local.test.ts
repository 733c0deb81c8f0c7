/**
 * `catalog-sync` with the embedded default (no --cursor-table/--bucket) as a child process, as a user runs it,
 * against a catalog replica on 127.0.0.1: a folder with exactly the S3 key layout and a state file. Runs resume
 * where the last stopped, overlapping runs leave a correct store and never move the cursor backward, `status`
 * and `runs` report it, `--follow` picks up new commits and stops cleanly on SIGTERM, and bad usage exits 2
 * naming the setting. Every store is checked byte for byte against the generated catalog.
 */
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatTimestamp, parseTimestamp, ticksToEpochMs, type Ticks } from '../../lambda/contract/time.js';
import { FILE_NAMES_RECORD } from '../../lambda/stores/file-name-mode.js';
import type { RunSummary } from '../../lambda/contract/run-summary.js';
import { appendCommits, generateCatalog, leafBody, type GeneratedCatalog } from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { runCli, startCli, waitFor, type CliResult } from '../../testkit/cli-process.js';
import { listFiles, localKeys, localManifestsAfter, readLocalCursor, RUN_LOG_FILE, STATE_FILE, verifyLocal } from '../../testkit/local-verify.js';
import { commitTicks } from '../../testkit/sync-harness.js';

const SUMMARY_FIELDS = ['runId', 'cursorName', 'cursorBefore', 'cursorAfter', 'commits', 'leaves', 'deletes', 'quarantined', 'bytes', 'caughtUp', 'stoppedBy', 'durationMs'];
const START = '0001-01-01T00:00:00.0000000Z';
/** For tests that start many CLI processes: a busy machine with two cores runs them slowly. */
const MANY_PROCESSES = 120_000;

let root: string;
let catalog: GeneratedCatalog;
let replica: CatalogReplica;
let head: string;
let dirs = 0;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'catalog-sync-cli-'));
  catalog = generateCatalog({ commits: 120, seed: 83, leavesPerCommit: [1, 4], sameMillisecondPairs: 3, semver2Ratio: 0.2, nonNormalizedDeleteRatio: 0.5 });
  replica = await CatalogReplica.start({ catalog, pageSize: 20 });
  head = formatTimestamp(commitTicks(catalog, -1));
});
afterAll(async () => {
  await replica?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

/** A fresh --data-dir (not created yet). */
function newDir(name: string): string {
  return join(root, `${name}-${++dirs}`);
}

/** Flags that point a command at `replica` and `dir`. */
function at(dir: string, source: CatalogReplica = replica): string[] {
  return ['--source', source.serviceIndexUrl, '--data-dir', dir];
}

/** The JSON lines a command printed. */
function jsonLines<T = RunSummary>(stdout: string): T[] {
  return stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T);
}

/** Runs `run --json` and returns its one summary; fails on anything but exit 0 with exactly one line. */
async function runJson(dir: string, extra: string[] = [], source: CatalogReplica = replica): Promise<RunSummary> {
  const result = await runCli(['run', ...at(dir, source), '--json', ...extra]);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  const lines = jsonLines(result.stdout);
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

function ticks(timestamp: string): Ticks {
  return parseTimestamp(timestamp);
}

function lag(headTimestamp: string, cursorTimestamp: string): number {
  return (ticksToEpochMs(ticks(headTimestamp)) - ticksToEpochMs(ticks(cursorTimestamp))) / 1000;
}

function leavesOf(commits: GeneratedCatalog['commits']): { leaves: number; deletes: number; bytes: number } {
  let leaves = 0;
  let deletes = 0;
  let bytes = 0;
  for (const commit of commits) {
    for (const leaf of commit.leaves) {
      leaves++;
      if (leaf.type === 'PackageDelete') deletes++;
      bytes += Buffer.byteLength(leafBody(catalog, leaf, replica.origin));
    }
  }
  return { leaves, deletes, bytes };
}

describe('catalog-sync run with the embedded default', () => {
  it('a second run resumes where the first stopped; the folder holds exactly the S3 layout', async () => {
    const dir = newDir('resume');
    const first = await runJson(dir, ['--max-commits', '50']);
    expect(first).toMatchObject({ cursorBefore: START, cursorAfter: formatTimestamp(commitTicks(catalog, 49)), commits: 50, stoppedBy: 'max-commits', caughtUp: false });
    expect(await readLocalCursor(dir)).toBe(first.cursorAfter);
    expect(await verifyLocal(dir, catalog, replica.origin, ticks(first.cursorAfter))).toEqual([]);
    expect(await localManifestsAfter(dir, catalog, ticks(first.cursorAfter))).toEqual([]);

    const second = await runJson(dir);
    expect(second.cursorBefore).toBe(first.cursorAfter);
    expect(second).toMatchObject({ cursorAfter: head, commits: catalog.commits.length - 50, stoppedBy: 'caught-up', caughtUp: true });
    expect(await readLocalCursor(dir)).toBe(head);
    expect(await verifyLocal(dir, catalog, replica.origin, ticks(head))).toEqual([]);

    const third = await runJson(dir);
    expect(third).toMatchObject({ cursorBefore: head, cursorAfter: head, commits: 0, stoppedBy: 'caught-up', caughtUp: true });
  });

  it('--json prints exactly one JSON line with the contract fields; --prefix and --cursor-name shape the folder', async () => {
    const dir = newDir('json');
    const summary = await runJson(dir, ['--max-commits', '5', '--prefix', 'mirror/', '--cursor-name', 'local-test']);
    expect(Object.keys(summary).sort()).toEqual([...SUMMARY_FIELDS].sort());
    expect(summary).toMatchObject({
      cursorName: 'local-test',
      cursorBefore: START,
      cursorAfter: formatTimestamp(commitTicks(catalog, 4)),
      commits: 5,
      ...leavesOf(catalog.commits.slice(0, 5)),
      quarantined: 0,
      caughtUp: false,
      stoppedBy: 'max-commits',
    });
    expect(summary.runId).toMatch(/^[0-9A-Za-z]{32}$/);
    expect(summary.durationMs).toBeGreaterThanOrEqual(0);
    expect(await readLocalCursor(dir, 'local-test')).toBe(summary.cursorAfter);
    expect(await readLocalCursor(dir)).toBeUndefined();
    const keys = await localKeys(dir);
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.filter((key) => !key.startsWith('mirror/commits/') && !key.startsWith('mirror/leaves/'))).toEqual(['mirror/watermark.json']);
    expect(await verifyLocal(dir, catalog, replica.origin, ticks(summary.cursorAfter), 'mirror/')).toEqual([]);
  });

  it('--time-budget aborts a leaf that trickles for ever: exit 0, time-budget, the cursor at the last complete commit', async () => {
    const dir = newDir('budget');
    const slow = catalog.commits[1]!.leaves[0]!;
    replica.trickleBody(slow.path, 1_000, 1_000);
    try {
      const summary = await runJson(dir, ['--time-budget', '3']);
      const lastComplete = formatTimestamp(commitTicks(catalog, 0));
      expect(summary).toMatchObject({ stoppedBy: 'time-budget', caughtUp: false, commits: 1, quarantined: 0, cursorAfter: lastComplete });
      expect(await readLocalCursor(dir)).toBe(lastComplete);
      expect(await localManifestsAfter(dir, catalog, commitTicks(catalog, 0))).toEqual([]);
      await replica.whenAbandoned(slow.path, 1);
    } finally {
      replica.clearFaults();
    }
  });

  it('prints plain lines, no progress-bar escape codes, when output is not a terminal', async () => {
    const dir = newDir('plain');
    const result = await runCli(['run', ...at(dir)]);
    expect(result.code).toBe(0);
    for (const output of [result.stdout, result.stderr]) {
      expect(output).not.toContain('\u001b');
      expect(output).not.toContain('\r');
    }
    const { leaves, deletes } = leavesOf(catalog.commits);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^caught-up: ${catalog.commits.length} commits, ${leaves} leaves \\(${deletes} deletes, 0 quarantined\\), `));
    expect(lines[1]).toBe(`cursor catalog-to-s3: ${START} -> ${head}, lag 0.0 s`);
    const progress = result.stderr.split('\n').filter((line) => line !== '');
    expect(progress.length).toBeGreaterThan(0);
    for (const line of progress) expect(line).toMatch(/^progress: \d+% \d+ commits, \d+ leaves, /);
    expect(await verifyLocal(dir, catalog, replica.origin, ticks(head))).toEqual([]);
  });

  it('runs at once against one folder leave a correct store, and the cursor never moves backward', async () => {
    // A little latency keeps the runs in flight together.
    const slow = await CatalogReplica.start({ catalog, pageSize: 20, latencyMs: 2 });
    try {
      const dir = newDir('overlap');
      const seen: string[] = [];
      let previous = START;
      let started = 0;
      const runAtOnce = async (count: number, extra: string[]): Promise<RunSummary[]> => {
        const children = Array.from({ length: count }, () => startCli(['run', ...at(dir, slow), '--json', '--concurrency', '4', ...extra]));
        started += count;
        let running = true;
        const all = Promise.all(children.map((child) => child.done)).finally(() => (running = false));
        // Read the state file while they run: every read parses (atomic renames), and the cursor only grows.
        await waitFor(
          async () => {
            const cursor = await readLocalCursor(dir);
            if (cursor !== undefined) seen.push(cursor);
            return !running;
          },
          'the overlapping runs to end',
          6_000,
          5,
        );
        const results: CliResult[] = await all;
        const summaries: RunSummary[] = [];
        for (const result of results) {
          expect(result.stderr).toBe('');
          expect(result.code).toBe(0);
          const lines = jsonLines(result.stdout);
          expect(lines).toHaveLength(1);
          summaries.push(lines[0]!);
        }
        return summaries;
      };

      for (let round = 0; round < 3; round++) {
        const summaries = await runAtOnce(4, ['--max-commits', '15']);
        const stored = await readLocalCursor(dir);
        expect(stored).toBeDefined();
        for (const summary of summaries) {
          expect(['max-commits', 'lost-race', 'caught-up']).toContain(summary.stoppedBy);
          expect(ticks(summary.cursorAfter)).toBeGreaterThanOrEqual(ticks(summary.cursorBefore));
          expect(ticks(summary.cursorBefore)).toBeGreaterThanOrEqual(ticks(previous));
          expect(ticks(summary.cursorAfter)).toBeLessThanOrEqual(ticks(stored!));
        }
        // The stored cursor is the furthest any run reached, past where the round began (unless already at the head).
        expect(stored).toBe(formatTimestamp(summaries.map((s) => ticks(s.cursorAfter)).reduce((a, b) => (a > b ? a : b))));
        if (previous !== head) expect(ticks(stored!)).toBeGreaterThan(ticks(previous));
        expect(await verifyLocal(dir, catalog, slow.origin, ticks(stored!))).toEqual([]);
        previous = stored!;
      }

      // Two more at once, each to the end.
      const last = await runAtOnce(2, []);
      for (const summary of last) expect(['caught-up', 'lost-race']).toContain(summary.stoppedBy);
      expect(await readLocalCursor(dir)).toBe(head);
      expect(await verifyLocal(dir, catalog, slow.origin, ticks(head))).toEqual([]);

      for (let i = 1; i < seen.length; i++) expect(ticks(seen[i]!), `read ${i} of the state file`).toBeGreaterThanOrEqual(ticks(seen[i - 1]!));
      // Every run was logged: the run log's appends are as safe as the cursor's.
      const runLog = await readFile(join(dir, RUN_LOG_FILE), 'utf8');
      expect(runLog.trim().split('\n').map((line) => JSON.parse(line).runId)).toHaveLength(started);
      expect((await listFiles(dir)).filter((file) => file.startsWith('.catalog-sync/'))).toEqual([`.catalog-sync/${FILE_NAMES_RECORD}`, RUN_LOG_FILE, STATE_FILE]);
    } finally {
      await slow.stop();
    }
  }, MANY_PROCESSES);
});

describe('catalog-sync run --follow', () => {
  it('picks up new commits as the catalog grows, and on SIGTERM checkpoints and exits 0', async () => {
    const growing = generateCatalog({ commits: 40, seed: 91, sameMillisecondPairs: 1 });
    const live = await CatalogReplica.start({ catalog: growing, pageSize: 20 });
    try {
      const dir = newDir('follow');
      const { child, done } = startCli(['run', ...at(dir, live), '--follow', '--poll-interval', '0.2', '--json', '--concurrency', '2']);
      let stdout = '';
      child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      const printed = (): RunSummary[] => jsonLines(stdout.slice(0, stdout.lastIndexOf('\n') + 1));
      const reached = (timestamp: string) => () => printed().some((summary) => summary.cursorAfter === timestamp);

      const head1 = formatTimestamp(commitTicks(growing, -1));
      await waitFor(reached(head1), 'the first catch-up');
      expect(printed().find((summary) => summary.cursorAfter === head1)!.caughtUp).toBe(true);

      appendCommits(growing, 30, 92);
      const head2 = formatTimestamp(commitTicks(growing, -1));
      await waitFor(reached(head2), 'the new commits to be picked up');
      expect(await verifyLocal(dir, growing, live.origin, ticks(head2))).toEqual([]);

      // Many more commits, served slowly: SIGTERM lands in the middle of a slice.
      live.latency(10);
      appendCommits(growing, 150, 93);
      await waitFor(async () => {
        const cursor = await readLocalCursor(dir);
        return cursor !== undefined && ticks(cursor) > ticks(head2);
      }, 'the slice of the newest commits to start checkpointing');
      child.kill('SIGTERM');
      const result = await done;
      expect(result.signal).toBeNull();
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');

      const summaries = jsonLines(result.stdout);
      const last = summaries.at(-1)!;
      expect(['time-budget', 'caught-up']).toContain(last.stoppedBy);
      const stored = await readLocalCursor(dir);
      expect(stored).toBe(last.cursorAfter);
      expect(ticks(stored!)).toBeGreaterThan(ticks(head2));
      expect(await verifyLocal(dir, growing, live.origin, ticks(stored!))).toEqual([]);
      expect(await localManifestsAfter(dir, growing, ticks(stored!))).toEqual([]);
      for (let i = 1; i < summaries.length; i++) expect(summaries[i]!.cursorBefore).toBe(summaries[i - 1]!.cursorAfter);

      // The next run picks up exactly there.
      live.latency(0);
      const resumed = await runJson(dir, [], live);
      expect(resumed).toMatchObject({ cursorBefore: stored, cursorAfter: formatTimestamp(commitTicks(growing, -1)), stoppedBy: 'caught-up' });
      expect(await verifyLocal(dir, growing, live.origin, commitTicks(growing, -1))).toEqual([]);
    } finally {
      await live.stop();
    }
  }, MANY_PROCESSES);
});

describe('catalog-sync status and runs', () => {
  it('status prints the cursor, the head, the lag and the last runs, as text and as one JSON line', async () => {
    const dir = newDir('status');
    const index = JSON.parse(replica.documentAt(replica.catalogIndexUrl)) as { items: { commitTimeStamp: string; count: number }[] };
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

    const [beforeText, beforeJson] = await Promise.all([runCli(['status', ...at(dir)]), runCli(['status', ...at(dir), '--json'])]);
    expect(beforeText.code).toBe(0);
    expect(beforeText.stdout).toContain(`cursor catalog-to-s3 (${dir}): none stored (starts at ${START})\n`);
    expect(beforeText.stdout).toContain(`catalog head: ${head} (${replica.serviceIndexUrl})\n`);
    expect(beforeText.stdout).toContain(`lag: `);
    expect(beforeText.stdout).toContain(`, ${index.items.length} pages and at most ${leavesOf(catalog.commits).leaves} leaves behind (commits are counted up to 10 pages behind)\n`);
    expect(beforeText.stdout).toContain('no runs recorded\n');
    expect(beforeJson.code).toBe(0);
    const lines = jsonLines<Record<string, unknown>>(beforeJson.stdout);
    expect(lines).toHaveLength(1);
    const before = lines[0]!;
    expect(before).toMatchObject({ cursorName: 'catalog-to-s3', store: dir, cursor: null, head, ...behind(START), lastRuns: [] });
    expect(before.lagSeconds as number).toBeCloseTo(lag(head, START), 2);
    await expect(stat(dir)).rejects.toThrow(); // status only reads

    const run = await runJson(dir, ['--max-commits', '50']);
    const [afterText, afterJson] = await Promise.all([runCli(['status', ...at(dir)]), runCli(['status', ...at(dir), '--json'])]);
    expect(afterText.code).toBe(0);
    expect(afterText.stdout).toContain(`cursor catalog-to-s3 (${dir}): ${run.cursorAfter}\n`);
    expect(afterText.stdout).toContain(`catalog head: ${head}`);
    const afterRun = behind(run.cursorAfter);
    expect(afterRun.commitsBehind).toBe(catalog.commits.length - 50);
    expect(afterText.stdout).toContain(`, ${afterRun.commitsBehind} commits (${afterRun.leavesBehind} leaves) behind, on ${afterRun.pagesBehind} pages\n`);
    expect(afterText.stdout).toContain(`last runs:\n  ${run.runId}  max-commits`);
    const after = jsonLines<Record<string, unknown>>(afterJson.stdout)[0]!;
    expect(after).toMatchObject({ cursor: run.cursorAfter, head, ...behind(run.cursorAfter), lastRuns: [run] });
    expect(after.lagSeconds as number).toBeCloseTo(lag(head, run.cursorAfter), 2);
    expect(after.lagSeconds as number).toBeGreaterThan(0);
    expect(typeof after.cursorUpdatedAt).toBe('string');

    await runJson(dir);
    expect((await runCli(['status', ...at(dir)])).stdout).toContain('lag: 0.0 s, caught up\n');
    const caughtUp = jsonLines<Record<string, unknown>>((await runCli(['status', ...at(dir), '--json'])).stdout)[0]!;
    expect(caughtUp).toMatchObject({ cursor: head, head, lagSeconds: 0, pagesBehind: 0, leavesBehindAtMost: 0, commitsBehind: 0, leavesBehind: 0 });
    expect((caughtUp.lastRuns as RunSummary[]).map((r) => r.cursorAfter)).toEqual([head, run.cursorAfter]);
  }, MANY_PROCESSES);

  it('runs lists runs newest first, as text or JSON lines, within --limit, --since and --until', async () => {
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
  }, MANY_PROCESSES);

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

describe('usage', () => {
  it('bad flags and settings exit 2 naming the setting, before touching the folder', async () => {
    const dir = newDir('never');
    replica.clearLog();
    const source = ['--source', replica.serviceIndexUrl];
    const cases: [string[], string][] = [
      [['run', ...source, '--data-dir', ''], '--data-dir'],
      [['status', ...source, '--data-dir', ''], '--data-dir'],
      [['runs', '--data-dir', ''], '--data-dir'],
      [['run', ...source, '--data-dir', dir, '--poll-interval', 'x'], '--poll-interval'],
      [['run', ...source, '--data-dir', dir, '--follow', '--poll-interval', '0'], '--poll-interval'],
      [['run', ...source, '--data-dir', dir, '--max-leaves', 'lots'], '--max-leaves'],
      [['run', ...source, '--data-dir', dir, '--start', 'yesterday'], '--start'],
      [['run', ...source, '--data-dir', dir, '--bucket', 'mirror'], '--cursor-table'],
      [['status', '--source', 'ftp://127.0.0.1/index.json', '--data-dir', dir], '--source'],
      [['status', ...source, '--data-dir', dir, '--cursor-name', 'a/b'], '--cursor-name'],
      [['runs', '--data-dir', dir, '--limit', '0'], '--limit'],
      [['runs', '--data-dir', dir, '--limit', 'ten'], '--limit'],
      [['runs', '--data-dir', dir, '--since', 'notadate'], '--since'],
      [['runs', '--data-dir', dir, '--until', 'tomorrow'], '--until'],
      [['keys'], '--since'],
      [['keys', '--since', 'notadate'], '--since'],
      [['status', ...source, '--data-dir', dir, '--frobnicate'], '--frobnicate'],
      [['frobnicate'], 'frobnicate'],
      [[], 'Usage: catalog-sync'],
    ];
    const results = await Promise.all(cases.map(([args]) => runCli(args)));
    cases.forEach(([args, setting], i) => {
      const result = results[i]!;
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toContain(setting);
      expect(result.stdout, args.join(' ')).toBe('');
    });
    await expect(stat(dir)).rejects.toThrow();
    expect(replica.requests).toEqual([]); // settings fail before anything is fetched
  }, MANY_PROCESSES);

  it('--help of every command exits 0 and shows examples', async () => {
    const cases = [['--help'], ['run', '--help'], ['status', '--help'], ['runs', '--help'], ['keys', '--help'], ['help', 'run']];
    const results = await Promise.all(cases.map((args) => runCli(args)));
    cases.forEach((args, i) => {
      const result = results[i]!;
      expect(result.code, args.join(' ')).toBe(0);
      expect(result.stdout, args.join(' ')).toContain('Usage: catalog-sync');
      expect(result.stdout, args.join(' ')).toContain('Examples:');
    });
    expect(results[0]!.stdout).toContain('Exit codes: 0 done, 1 a run failed, 2 bad usage or settings');
    expect(results[0]!.stdout).toContain('-V, --version');
  });

  it('--version prints the version of package.json and exits 0', async () => {
    const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const result = await runCli([flag]);
      expect(result, flag).toMatchObject({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
    }
  });

  it('a corrupt state file stops every command with a message naming the file, and is left as it was', async () => {
    // [content, does `runs` fail too?] (`runs` reads only the run log, its own file: a bad state file does not stop it).
    const corruptions: [string, boolean][] = [
      ['{"cursors":', false],
      ['[]', false],
      ['{"cursors":{"catalog-to-s3":{"cursor":"last tuesday"}}}', false],
    ];
    for (const [content, runsFails] of corruptions) {
      const dir = newDir('corrupt');
      const statePath = join(dir, STATE_FILE);
      await mkdir(join(dir, '.catalog-sync'), { recursive: true });
      await writeFile(statePath, content);
      const [run, status, runs] = await Promise.all([runCli(['run', ...at(dir)]), runCli(['status', ...at(dir)]), runCli(['runs', '--data-dir', dir])]);
      for (const [what, result] of [['run', run], ['status', status], ...(runsFails ? [['runs', runs] as const] : [])] as const) {
        expect([1, 2], `${what} with ${content}`).toContain(result.code);
        expect(result.stderr, `${what} with ${content}`).toContain(statePath);
      }
      if (!runsFails) expect(runs).toMatchObject({ code: 0, stdout: 'no runs recorded\n' });
      expect(await readFile(statePath, 'utf8')).toBe(content);
      expect(await localKeys(dir)).toEqual([]);
    }
    // A run log with a bad line (not the last, which a crash mid-append may cut short and is skipped).
    const dir = newDir('corrupt-runs');
    const runLogPath = join(dir, RUN_LOG_FILE);
    await mkdir(join(dir, '.catalog-sync', 'runs'), { recursive: true });
    await writeFile(runLogPath, 'garbage\n{"sk":"run#x","expiresAt":1}\n{"runId":"cut sh');
    const [status, runs] = await Promise.all([runCli(['status', ...at(dir)]), runCli(['runs', '--data-dir', dir])]);
    for (const result of [status, runs]) {
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`${runLogPath}: line 1 is not a run record`);
    }
  }, MANY_PROCESSES);
});
