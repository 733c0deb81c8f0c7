/**
 * How `catalog-sync backfill` into a folder stops, as a user meets it (the built CLI, its worker processes, a
 * catalog replica with the hard cases for cutting ranges): a range that keeps failing stops the backfill naming the
 * range and the URL, the cursor unmoved; SIGTERM and Ctrl-C stop every worker and a rerun resumes the plan; a worker
 * process that dies hands its range back. (What a backfill stores: cli-backfill.test.ts; SIGKILL at chosen points:
 * cli-backfill-kill.test.ts.)
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { formatTimestamp } from '../../../lambda/contract/time.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { startCliGroup } from '../../../testkit/cli-group.js';
import { runCli } from '../../../testkit/cli-process.js';
import { verifyBackfilled } from '../../../testkit/backfill-verify.js';
import { readLocalState } from '../../../testkit/local-verify.js';
import { commitTicks } from '../../../testkit/sync-harness.js';
import { at, hardCatalog, jsonLine, newDir, SLOW, START, useBackfillFolders } from './cli-backfill-kit.js';

useBackfillFolders();

describe('catalog-sync backfill into a folder, stopped', () => {
  it(
    'a range that keeps failing stops the backfill (exit 1) naming the range and the URL; the cursor does not move; a rerun finishes it',
    async () => {
      const catalog = hardCatalog(34, 60);
      const replica = await CatalogReplica.start({ catalog, pageSize: 16, splitCommits: true });
      try {
        const dir = newDir('failing');
        const leaf = catalog.commits[30]!.leaves[0]!;
        replica.overrideBody(leaf.path, 'not json');
        const result = await runCli(['backfill', ...at(dir, replica), '--workers', '2', '--range-leaves', '20']);
        expect(result.code).toBe(1);
        expect(result.stderr).toMatch(/backfill failed: range \d+ of backfill \S+ failed 4 times: /);
        expect(result.stderr).toContain(`${replica.origin}${leaf.path}`);
        expect(result.stderr).toContain('The cursor did not move');
        expect((await readLocalState(dir))?.cursors['catalog-to-s3']).toBeUndefined();
        expect(await verifyBackfilled(dir, catalog, replica.origin, -1n)).toEqual([]);

        replica.clearFaults();
        const rerun = await runCli(['backfill', ...at(dir, replica), '--workers', '2', '--json']);
        expect(rerun.code).toBe(0);
        expect(jsonLine(rerun.stdout)).toMatchObject({
          cursorBefore: START,
          cursorAfter: formatTimestamp(commitTicks(catalog, -1)),
          commits: 60,
        });
        expect(await verifyBackfilled(dir, catalog, replica.origin, commitTicks(catalog, -1))).toEqual([]);
      } finally {
        await replica.stop();
      }
    },
    SLOW,
  );

  it(
    'SIGTERM stops every worker at its next leaf: exit 1 saying a rerun resumes, the cursor unmoved; the rerun resumes the plan',
    async () => {
      // 60 commits (about 220 leaves) in ranges of 20: 7 ranges for the 2 workers, so SIGTERM after the first one done
      // lands with others pending (half the leaves of 120 commits in ranges of 40).
      const catalog = hardCatalog(35, 60);
      const replica = await CatalogReplica.start({ catalog, pageSize: 16, splitCommits: true, latencyMs: 10 });
      try {
        const dir = newDir('sigterm');
        const args = ['backfill', ...at(dir, replica), '--workers', '2', '--range-leaves', '20', '--concurrency', '2'];
        const first = startCliGroup(args);
        try {
          const planned = await first.stderrLine((line) => /^backfill \S+ planned: /.test(line));
          const backfillId = /^backfill (\S+) planned/.exec(planned)![1]!;
          await first.stderrLine((line) => /^range \d+ done/.test(line));
          first.child.kill('SIGTERM');
          const stopped = await first.done;
          expect(stopped.signal).toBeNull();
          expect(stopped.code).toBe(1);
          expect(stopped.stderr).toMatch(
            new RegExp(
              `backfill ${backfillId} stopped: \\d+ of \\d+ ranges done, the others checkpointed; the cursor did not move\\. Run \`catalog-sync backfill\` again to resume`,
            ),
          );
          // More than twice as many ranges as workers.
          expect(Number(/\d+ of (\d+) ranges done/.exec(stopped.stderr)?.[1])).toBeGreaterThan(4);
          expect((await readLocalState(dir))?.cursors['catalog-to-s3']).toBeUndefined();
          expect(await verifyBackfilled(dir, catalog, replica.origin, -1n)).toEqual([]);

          const rerun = await runCli(args);
          expect(rerun.code).toBe(0);
          expect(rerun.stderr).toMatch(
            new RegExp(`^backfill ${backfillId} resumed: .*, [1-9]\\d* ranges already done$`, 'm'),
          );
          expect(await verifyBackfilled(dir, catalog, replica.origin, commitTicks(catalog, -1))).toEqual([]);
        } finally {
          first.killGroup();
        }
      } finally {
        await replica.stop();
      }
    },
    SLOW,
  );

  it(
    'Ctrl-C on a terminal (SIGINT to the whole process group) stops the backfill, not fails it: exit 1, a rerun resumes',
    async () => {
      // 60 commits (about 200 leaves) in ranges of 15: half the leaves of 120 commits in ranges of 30.
      const catalog = hardCatalog(37, 60);
      const replica = await CatalogReplica.start({ catalog, pageSize: 16, splitCommits: true, latencyMs: 10 });
      try {
        const dir = newDir('sigint');
        const args = ['backfill', ...at(dir, replica), '--workers', '2', '--range-leaves', '15', '--concurrency', '2'];
        const first = startCliGroup(args);
        try {
          await first.stderrLine((line) => /^range \d+ done/.test(line));
          process.kill(-first.child.pid!, 'SIGINT');
          const stopped = await first.done;
          expect(stopped.code).toBe(1);
          expect(stopped.stderr).toMatch(/backfill \S+ stopped: \d+ of \d+ ranges done/);
          expect(stopped.stderr).not.toContain('backfill failed');
          expect((await readLocalState(dir))?.cursors['catalog-to-s3']).toBeUndefined();
        } finally {
          first.killGroup();
        }
        const rerun = await runCli(args);
        expect(rerun.code).toBe(0);
        expect(await verifyBackfilled(dir, catalog, replica.origin, commitTicks(catalog, -1))).toEqual([]);
      } finally {
        await replica.stop();
      }
    },
    SLOW,
  );

  it(
    'a worker process that dies hands its range back: another worker runs it, and the backfill completes',
    async () => {
      // 60 commits (about 180 leaves) in ranges of 15: half the leaves of 120 commits in ranges of 30.
      const catalog = hardCatalog(36, 60);
      const replica = await CatalogReplica.start({ catalog, pageSize: 16, splitCommits: true, latencyMs: 10 });
      try {
        const dir = newDir('worker-dies');
        const backfill = startCliGroup([
          'backfill',
          ...at(dir, replica),
          '--workers',
          '2',
          '--range-leaves',
          '15',
          '--concurrency',
          '2',
        ]);
        try {
          await backfill.stderrLine((line) => /^range \d+ done/.test(line));
          const workers = execFileSync('pgrep', ['-P', String(backfill.child.pid)], { encoding: 'utf8' })
            .trim()
            .split('\n')
            .map(Number);
          expect(workers).toHaveLength(2);
          process.kill(workers[0]!, 'SIGKILL');
          const result = await backfill.done;
          expect(result.code).toBe(0);
          // Unless it was between two ranges when it died, its range was handed back and counted as a failed attempt.
          const died = result.stderr
            .split('\n')
            .filter((line) => line.includes(`its worker process ${workers[0]} died (signal SIGKILL)`));
          expect(died.length).toBeLessThanOrEqual(1);
          // A worker SIGKILLed in the middle of a write leaves its temporary file (or its lock record) in the
          // state folder's tmp/, by design (removed once an hour old); whether it was mid-write is chance.
          const problems = await verifyBackfilled(dir, catalog, replica.origin, commitTicks(catalog, -1));
          expect(problems.filter((problem) => !problem.startsWith('temporary file left: .catalog-sync/tmp/'))).toEqual(
            [],
          );
          expect((await readLocalState(dir))!.cursors['catalog-to-s3']!.cursor).toBe(
            formatTimestamp(commitTicks(catalog, -1)),
          );
        } finally {
          backfill.killGroup();
        }
      } finally {
        await replica.stop();
      }
    },
    SLOW,
  );
});
