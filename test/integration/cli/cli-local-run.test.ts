/**
 * `catalog-sync run` with the embedded default (no --cursor-table/--bucket) as a child process, as a user runs it,
 * against a catalog replica on 127.0.0.1: a folder with exactly the S3 key layout and a state file. Runs resume
 * where the last stopped, overlapping runs leave a correct store and never move the cursor backward, and
 * `--follow` picks up new commits and stops cleanly on SIGTERM. Every store is checked byte for byte against the
 * generated catalog.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FILE_NAMES_RECORD } from '../../../lambda/stores/file-name-mode.js';
import { appendCommits, generateCatalog } from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { runCli, startCli, waitFor, type CliResult } from '../../../testkit/cli-process.js';
import {
  listFiles,
  localKeys,
  localManifestsAfter,
  readLocalCursor,
  RUN_LOG_FILE,
  STATE_FILE,
  strayLocalManifests,
  verifyLocal,
} from '../../../testkit/local-verify.js';
import { commitKey, manifestKey } from '../../../lambda/contract/keys.js';
import { commitTicks } from '../../../testkit/sync-harness.js';
import { formatTimestamp } from '../../../lambda/contract/time.js';
import type { RunSummary } from '../../../lambda/contract/run-summary.js';
import {
  at,
  catalog,
  head,
  jsonLines,
  leavesOf,
  MANY_PROCESSES,
  newDir,
  replica,
  runJson,
  START,
  SUMMARY_FIELDS,
  ticks,
  useReplica,
} from './cli-local-kit.js';

useReplica();

describe('catalog-sync run with the embedded default', () => {
  it('a second run resumes where the first stopped; the folder holds exactly the S3 layout', async () => {
    const dir = newDir('resume');
    const first = await runJson(dir, ['--max-commits', '50']);
    expect(first).toMatchObject({
      cursorBefore: START,
      cursorAfter: formatTimestamp(commitTicks(catalog, 49)),
      commits: 50,
      stoppedBy: 'max-commits',
      caughtUp: false,
    });
    expect(await readLocalCursor(dir)).toBe(first.cursorAfter);
    expect(await verifyLocal(dir, catalog, replica.origin, ticks(first.cursorAfter))).toEqual([]);
    expect(await localManifestsAfter(dir, catalog, ticks(first.cursorAfter))).toEqual([]);

    const second = await runJson(dir);
    expect(second.cursorBefore).toBe(first.cursorAfter);
    expect(second).toMatchObject({
      cursorAfter: head,
      commits: catalog.commits.length - 50,
      stoppedBy: 'caught-up',
      caughtUp: true,
    });
    expect(await readLocalCursor(dir)).toBe(head);
    expect(await verifyLocal(dir, catalog, replica.origin, ticks(head))).toEqual([]);

    const third = await runJson(dir);
    expect(third).toMatchObject({
      cursorBefore: head,
      cursorAfter: head,
      commits: 0,
      stoppedBy: 'caught-up',
      caughtUp: true,
    });
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
    expect(keys.filter((key) => !key.startsWith('mirror/commits/') && !key.startsWith('mirror/leaves/'))).toEqual([
      'mirror/watermark.json',
    ]);
    expect(await verifyLocal(dir, catalog, replica.origin, ticks(summary.cursorAfter), 'mirror/')).toEqual([]);
  });

  it('--time-budget aborts a leaf that trickles for ever: exit 0, time-budget, the cursor at the last complete commit', async () => {
    const dir = newDir('budget');
    const slow = catalog.commits[1]!.leaves[0]!;
    replica.trickleBody(slow.path, 1_000, 1_000);
    try {
      const summary = await runJson(dir, ['--time-budget', '3']);
      const lastComplete = formatTimestamp(commitTicks(catalog, 0));
      expect(summary).toMatchObject({
        stoppedBy: 'time-budget',
        caughtUp: false,
        commits: 1,
        quarantined: 0,
        cursorAfter: lastComplete,
      });
      expect(await readLocalCursor(dir)).toBe(lastComplete);
      // The trickling leaf gave its slot back after a second: later commits completed meanwhile, each manifest whole;
      // its own commit has none.
      expect(await localManifestsAfter(dir, catalog, commitTicks(catalog, 0))).not.toContain(
        manifestKey('', commitKey(commitTicks(catalog, 1))),
      );
      expect(await strayLocalManifests(dir, catalog, replica.origin, commitTicks(catalog, 0))).toEqual([]);
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
    expect(lines[0]).toMatch(
      new RegExp(
        `^caught-up: ${catalog.commits.length} commits, ${leaves} leaves \\(${deletes} deletes, 0 quarantined\\), `,
      ),
    );
    expect(lines[1]).toBe(`cursor catalog-to-s3: ${START} -> ${head}, lag 0.0 s`);
    const progress = result.stderr.split('\n').filter((line) => line !== '');
    expect(progress.length).toBeGreaterThan(0);
    for (const line of progress) expect(line).toMatch(/^progress: \d+% \d+ commits, \d+ leaves, /);
    expect(await verifyLocal(dir, catalog, replica.origin, ticks(head))).toEqual([]);
  });

  it(
    'runs at once against one folder leave a correct store, and the cursor never moves backward',
    async () => {
      // A little latency keeps the runs in flight together.
      const slow = await CatalogReplica.start({ catalog, pageSize: 20, latencyMs: 2 });
      try {
        const dir = newDir('overlap');
        const seen: string[] = [];
        let previous = START;
        let started = 0;
        const runAtOnce = async (count: number, extra: string[]): Promise<RunSummary[]> => {
          const children = Array.from({ length: count }, () =>
            startCli(['run', ...at(dir, slow), '--json', '--concurrency', '4', ...extra]),
          );
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
          expect(stored).toBe(
            formatTimestamp(summaries.map((s) => ticks(s.cursorAfter)).reduce((a, b) => (a > b ? a : b))),
          );
          if (previous !== head) expect(ticks(stored!)).toBeGreaterThan(ticks(previous));
          expect(await verifyLocal(dir, catalog, slow.origin, ticks(stored!))).toEqual([]);
          previous = stored!;
        }

        // Two more at once, each to the end.
        const last = await runAtOnce(2, []);
        for (const summary of last) expect(['caught-up', 'lost-race']).toContain(summary.stoppedBy);
        expect(await readLocalCursor(dir)).toBe(head);
        expect(await verifyLocal(dir, catalog, slow.origin, ticks(head))).toEqual([]);

        for (let i = 1; i < seen.length; i++)
          expect(ticks(seen[i]!), `read ${i} of the state file`).toBeGreaterThanOrEqual(ticks(seen[i - 1]!));
        // Every run was logged: the run log's appends are as safe as the cursor's.
        const runLog = await readFile(join(dir, RUN_LOG_FILE), 'utf8');
        expect(
          runLog
            .trim()
            .split('\n')
            .map((line) => JSON.parse(line).runId),
        ).toHaveLength(started);
        expect((await listFiles(dir)).filter((file) => file.startsWith('.catalog-sync/'))).toEqual([
          `.catalog-sync/${FILE_NAMES_RECORD}`,
          RUN_LOG_FILE,
          '.catalog-sync/sources.json',
          STATE_FILE,
        ]);
      } finally {
        await slow.stop();
      }
    },
    MANY_PROCESSES,
  );
});

describe('catalog-sync run --follow', () => {
  it(
    'picks up new commits as the catalog grows, and on SIGTERM checkpoints and exits 0',
    async () => {
      const growing = generateCatalog({ commits: 40, seed: 91, sameMillisecondPairs: 1 });
      const live = await CatalogReplica.start({ catalog: growing, pageSize: 20 });
      try {
        const dir = newDir('follow');
        const { child, done } = startCli([
          'run',
          ...at(dir, live),
          '--follow',
          '--poll-interval',
          '0.2',
          '--json',
          '--concurrency',
          '2',
        ]);
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
        // Stopped mid-slice by the signal (`interrupted`), or just after a slice caught up.
        expect(['interrupted', 'caught-up']).toContain(last.stoppedBy);
        const stored = await readLocalCursor(dir);
        expect(stored).toBe(last.cursorAfter);
        expect(ticks(stored!)).toBeGreaterThan(ticks(head2));
        expect(await verifyLocal(dir, growing, live.origin, ticks(stored!))).toEqual([]);
        expect(await strayLocalManifests(dir, growing, live.origin, ticks(stored!))).toEqual([]);
        for (let i = 1; i < summaries.length; i++)
          expect(summaries[i]!.cursorBefore).toBe(summaries[i - 1]!.cursorAfter);

        // The next run picks up exactly there.
        live.latency(0);
        const resumed = await runJson(dir, [], live);
        expect(resumed).toMatchObject({
          cursorBefore: stored,
          cursorAfter: formatTimestamp(commitTicks(growing, -1)),
          stoppedBy: 'caught-up',
        });
        expect(await verifyLocal(dir, growing, live.origin, commitTicks(growing, -1))).toEqual([]);
      } finally {
        await live.stop();
      }
    },
    MANY_PROCESSES,
  );
});
