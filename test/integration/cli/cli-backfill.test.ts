/**
 * `catalog-sync backfill` into the embedded default, as a user runs it (the built CLI, its worker processes)
 * against a catalog replica with split commits, same-millisecond commits and shuffled pages: it stores exactly
 * what a follower stores (every file byte for byte, the cursor, the watermark), a follower then goes on with no
 * gap; a follower run during a backfill returns `backfill`; `status` shows the running backfill; a range that
 * keeps failing stops the backfill naming it, with the cursor unmoved; bad flags exit 2 naming the flag.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../../../lambda/contract/run-summary.js';
import { formatTimestamp, parseTimestamp } from '../../../lambda/contract/time.js';
import { appendCommits, generateCatalog, type GeneratedCatalog } from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { startCliGroup } from '../../../testkit/cli-group.js';
import { runCli } from '../../../testkit/cli-process.js';
import { snapshotKeys, verifyBackfilled } from '../../../testkit/backfill-verify.js';
import { readLocalState } from '../../../testkit/local-verify.js';
import { commitTicks } from '../../../testkit/sync-harness.js';

const START = '0001-01-01T00:00:00.0000000Z';
/** Many CLI processes on a busy two-core machine. */
const SLOW = 180_000;

let root: string;
let dirs = 0;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'catalog-sync-backfill-'));
});
afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

function newDir(name: string): string {
  return join(root, `${name}-${++dirs}`);
}

function at(dir: string, replica: CatalogReplica): string[] {
  return ['--source', replica.serviceIndexUrl, '--data-dir', dir];
}

function jsonLine<T = RunSummary>(stdout: string): T {
  const lines = stdout.split('\n').filter((line) => line.trim() !== '');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as T;
}

/** A catalog with every hard case for cutting ranges. */
function hardCatalog(seed: number, commits = 160): GeneratedCatalog {
  return generateCatalog({ commits, seed, leavesPerCommit: [1, 6], sameMillisecondPairs: 4, semver2Ratio: 0.2 });
}

/** `run` again and again until caught up (a follower's first day), into `dir`. */
async function followUntilCaughtUp(dir: string, replica: CatalogReplica): Promise<RunSummary[]> {
  const summaries: RunSummary[] = [];
  for (;;) {
    const result = await runCli(['run', ...at(dir, replica), '--json', '--max-commits', '37']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const summary = jsonLine(result.stdout);
    summaries.push(summary);
    if (summary.caughtUp) return summaries;
  }
}

describe('catalog-sync backfill into a folder', () => {
  it(
    'stores exactly what a follower stores: every file byte for byte, the cursor, the watermark; a follower goes on with no gap',
    async () => {
      // 100 commits: about nine ranges cut across split pages, and a follower needing three runs of 37.
      const catalog = hardCatalog(31, 100);
      const replica = await CatalogReplica.start({ catalog, pageSize: 16, splitCommits: true });
      try {
        const head = formatTimestamp(commitTicks(catalog, -1));
        const backfilled = newDir('backfill');
        const result = await runCli(['backfill', ...at(backfilled, replica), '--workers', '2', '--range-leaves', '40', '--json']);
        expect(result.stderr).toBe('');
        expect(result.code).toBe(0);
        const summary = jsonLine(result.stdout);
        const leaves = catalog.commits.reduce((n, commit) => n + commit.leaves.length, 0);
        expect(summary).toMatchObject({ cursorBefore: START, cursorAfter: head, commits: catalog.commits.length, leaves, caughtUp: true, stoppedBy: 'caught-up' });
        expect(await verifyBackfilled(backfilled, catalog, replica.origin, parseTimestamp(head))).toEqual([]);

        const followed = newDir('follower');
        const runs = await followUntilCaughtUp(followed, replica);
        expect(runs.length).toBeGreaterThan(1);
        expect(runs.at(-1)!.cursorAfter).toBe(head);

        const keys = await snapshotKeys(backfilled);
        expect(keys).toEqual(await snapshotKeys(followed));
        for (const key of keys) {
          const [a, b] = await Promise.all([readFile(join(backfilled, key)), readFile(join(followed, key))]);
          if (key === 'watermark.json') {
            const strip = (body: Buffer): unknown => ({ ...JSON.parse(body.toString()), updatedAt: undefined });
            expect(strip(a)).toEqual(strip(b));
          } else if (!a.equals(b)) expect.fail(`${key} differs`);
        }
        const [stateA, stateB] = await Promise.all([readLocalState(backfilled), readLocalState(followed)]);
        expect(stateA!.cursors['catalog-to-s3']).toMatchObject({ cursor: head, commitId: stateB!.cursors['catalog-to-s3']!.commitId });
        expect(stateB!.cursors['catalog-to-s3']!.cursor).toBe(head);

        // The catalog grows: a follower of the backfilled folder goes on from B, with no gap.
        appendCommits(catalog, 25, 311);
        const newHead = formatTimestamp(commitTicks(catalog, -1));
        const next = await runCli(['run', ...at(backfilled, replica), '--json']);
        expect(next.code).toBe(0);
        expect(jsonLine(next.stdout)).toMatchObject({ cursorBefore: head, cursorAfter: newHead, commits: 25, stoppedBy: 'caught-up' });
        expect(await verifyBackfilled(backfilled, catalog, replica.origin, parseTimestamp(newHead))).toEqual([]);

        // A second backfill has nothing to do: B is at the cursor.
        const again = await runCli(['backfill', ...at(backfilled, replica), '--workers', '2', '--json']);
        expect(again.code).toBe(0);
        expect(jsonLine(again.stdout)).toMatchObject({ cursorBefore: newHead, cursorAfter: newHead, commits: 0, stoppedBy: 'caught-up' });
      } finally {
        await replica.stop();
      }
    },
    SLOW,
  );

  it(
    '--until stops at a bound between commits; a follower goes on from there',
    async () => {
      const catalog = hardCatalog(32, 90);
      const replica = await CatalogReplica.start({ catalog, pageSize: 16, splitCommits: true });
      try {
        const dir = newDir('until');
        const bound = formatTimestamp(commitTicks(catalog, 44));
        const result = await runCli(['backfill', ...at(dir, replica), '--workers', '2', '--range-leaves', '30', '--until', bound, '--json']);
        expect(result.code).toBe(0);
        // Lag remains past B: stopped at its bound, not caught up, in the summary and the run log (issue 24).
        expect(jsonLine(result.stdout)).toMatchObject({ cursorAfter: bound, commits: 45, caughtUp: false, stoppedBy: 'until' });
        expect((await runCli(['runs', '--data-dir', dir])).stdout).toMatch(/^\S+ {2}until {7}/);
        expect((await readLocalState(dir))!.cursors['catalog-to-s3']!.cursor).toBe(bound);
        expect(await verifyBackfilled(dir, catalog, replica.origin, parseTimestamp(bound))).toEqual([]);
        const next = await runCli(['run', ...at(dir, replica), '--json']);
        expect(jsonLine(next.stdout)).toMatchObject({ cursorBefore: bound, commits: 45, stoppedBy: 'caught-up' });
        expect(await verifyBackfilled(dir, catalog, replica.origin, commitTicks(catalog, -1))).toEqual([]);
      } finally {
        await replica.stop();
      }
    },
    SLOW,
  );

  it(
    'a follower run during a backfill returns stoppedBy "backfill" (exit 0); status shows the backfill; after it, the follower goes on from B',
    async () => {
      const catalog = hardCatalog(33, 120);
      const replica = await CatalogReplica.start({ catalog, pageSize: 16, splitCommits: true });
      try {
        const dir = newDir('gate');
        const head = formatTimestamp(commitTicks(catalog, -1));
        // The backfill's workers wait at their first leaf until the follower and status have seen it running.
        const leaves = replica.hold('/v3/catalog0/data/');
        const backfill = startCliGroup(['backfill', ...at(dir, replica), '--workers', '2', '--range-leaves', '40', '--concurrency', '1']);
        try {
          const planned = await backfill.stderrLine((line) => /^backfill \S+ planned: /.test(line));
          const backfillId = /^backfill (\S+) planned/.exec(planned)![1]!;
          await leaves.arrived;

          const follower = await runCli(['run', ...at(dir, replica), '--json']);
          expect(follower.stderr).toBe('');
          expect(follower.code).toBe(0);
          expect(jsonLine(follower.stdout)).toMatchObject({ cursorBefore: START, cursorAfter: START, commits: 0, caughtUp: false, stoppedBy: 'backfill' });

          const status = await runCli(['status', ...at(dir, replica), '--json']);
          expect(status.code).toBe(0);
          const shown = jsonLine<{ backfill: Record<string, unknown> | null }>(status.stdout).backfill;
          expect(shown).toMatchObject({ backfillId, start: START, bound: head, leaseLive: true });
          expect(shown!.ranges as number).toBeGreaterThan(2);
          expect(shown!.rangesDone as number).toBeLessThanOrEqual(shown!.ranges as number);
          const plain = await runCli(['status', ...at(dir, replica)]);
          expect(plain.stdout).toContain(`backfill ${backfillId} running: `);
          expect(plain.stdout).toContain('lease until ');

          leaves.release();
          const done = await backfill.done;
          expect(done.code).toBe(0);
          expect(done.stdout).toContain(`-> ${head}`);
        } finally {
          backfill.killGroup();
        }
        const after = await runCli(['status', ...at(dir, replica), '--json']);
        expect(jsonLine<{ backfill: unknown }>(after.stdout).backfill).toBeNull();
        const follower = await runCli(['run', ...at(dir, replica), '--json']);
        expect(jsonLine(follower.stdout)).toMatchObject({ cursorBefore: head, cursorAfter: head, commits: 0, stoppedBy: 'caught-up' });
        expect(await verifyBackfilled(dir, catalog, replica.origin, parseTimestamp(head))).toEqual([]);
      } finally {
        await replica.stop();
      }
    },
    SLOW,
  );

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
        expect(jsonLine(rerun.stdout)).toMatchObject({ cursorBefore: START, cursorAfter: formatTimestamp(commitTicks(catalog, -1)), commits: 60 });
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
      const catalog = hardCatalog(35, 120);
      const replica = await CatalogReplica.start({ catalog, pageSize: 16, splitCommits: true, latencyMs: 10 });
      try {
        const dir = newDir('sigterm');
        const args = ['backfill', ...at(dir, replica), '--workers', '2', '--range-leaves', '40', '--concurrency', '2'];
        const first = startCliGroup(args);
        try {
          const planned = await first.stderrLine((line) => /^backfill \S+ planned: /.test(line));
          const backfillId = /^backfill (\S+) planned/.exec(planned)![1]!;
          await first.stderrLine((line) => /^range \d+ done/.test(line));
          first.child.kill('SIGTERM');
          const stopped = await first.done;
          expect(stopped.signal).toBeNull();
          expect(stopped.code).toBe(1);
          expect(stopped.stderr).toMatch(new RegExp(`backfill ${backfillId} stopped: \\d+ of \\d+ ranges done, the others checkpointed; the cursor did not move\\. Run \`catalog-sync backfill\` again to resume`));
          expect((await readLocalState(dir))?.cursors['catalog-to-s3']).toBeUndefined();
          expect(await verifyBackfilled(dir, catalog, replica.origin, -1n)).toEqual([]);

          const rerun = await runCli(args);
          expect(rerun.code).toBe(0);
          expect(rerun.stderr).toMatch(new RegExp(`^backfill ${backfillId} resumed: .*, [1-9]\\d* ranges already done$`, 'm'));
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
      const catalog = hardCatalog(37, 120);
      const replica = await CatalogReplica.start({ catalog, pageSize: 16, splitCommits: true, latencyMs: 10 });
      try {
        const dir = newDir('sigint');
        const args = ['backfill', ...at(dir, replica), '--workers', '2', '--range-leaves', '30', '--concurrency', '2'];
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
      const catalog = hardCatalog(36, 120);
      const replica = await CatalogReplica.start({ catalog, pageSize: 16, splitCommits: true, latencyMs: 10 });
      try {
        const dir = newDir('worker-dies');
        const backfill = startCliGroup(['backfill', ...at(dir, replica), '--workers', '2', '--range-leaves', '30', '--concurrency', '2']);
        try {
          await backfill.stderrLine((line) => /^range \d+ done/.test(line));
          const workers = execFileSync('pgrep', ['-P', String(backfill.child.pid)], { encoding: 'utf8' }).trim().split('\n').map(Number);
          expect(workers).toHaveLength(2);
          process.kill(workers[0]!, 'SIGKILL');
          const result = await backfill.done;
          expect(result.code).toBe(0);
          // Unless it was between two ranges when it died, its range was handed back and counted as a failed attempt.
          const died = result.stderr.split('\n').filter((line) => line.includes(`its worker process ${workers[0]} died (signal SIGKILL)`));
          expect(died.length).toBeLessThanOrEqual(1);
          // A worker SIGKILLed in the middle of a write leaves its temporary file (or its lock record) in the
          // state folder's tmp/, by design (removed once an hour old); whether it was mid-write is chance.
          const problems = await verifyBackfilled(dir, catalog, replica.origin, commitTicks(catalog, -1));
          expect(problems.filter((problem) => !problem.startsWith('temporary file left: .catalog-sync/tmp/'))).toEqual([]);
          expect((await readLocalState(dir))!.cursors['catalog-to-s3']!.cursor).toBe(formatTimestamp(commitTicks(catalog, -1)));
        } finally {
          backfill.killGroup();
        }
      } finally {
        await replica.stop();
      }
    },
    SLOW,
  );

  it('--state-machine starts the AWS execution with --until and --range-leaves, and prints its ARN', async () => {
    const arn = 'arn:aws:states:eu-west-3:123456789012:stateMachine:CatalogSyncBackfill';
    const bodies: Record<string, unknown>[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>);
        res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
        res.end(JSON.stringify({ executionArn: `${arn.replace(':stateMachine:', ':execution:')}:run-1`, startDate: 1_790_000_000 }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const env = { AWS_ENDPOINT_URL_SFN: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
      const result = await runCli(['backfill', '--state-machine', arn, '--until', '2024-01-01T00:00:00Z', '--range-leaves', '2000', '--json'], env);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(jsonLine<{ executionArn: string }>(result.stdout)).toEqual({ executionArn: 'arn:aws:states:eu-west-3:123456789012:execution:CatalogSyncBackfill:run-1' });
      expect(bodies).toEqual([{ stateMachineArn: arn, input: JSON.stringify({ until: '2024-01-01T00:00:00.0000000Z', rangeLeaves: 2000 }) }]);
      const plain = await runCli(['backfill', '--state-machine', arn], env);
      expect(plain.stdout).toBe('started arn:aws:states:eu-west-3:123456789012:execution:CatalogSyncBackfill:run-1\n');
      expect(bodies[1]).toEqual({ stateMachineArn: arn, input: '{}' });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('bad flags exit 2 with an error naming the flag', async () => {
    const dir = newDir('flags');
    const cases: [string[], string][] = [
      [['--workers', '0'], '--workers'],
      [['--workers', 'x'], '--workers'],
      [['--until', 'notatime'], '--until'],
      [['--range-leaves', '-1'], '--range-leaves'],
      [['--range-leaves', '1.5'], '--range-leaves'],
      [['--state-machine', 'not-an-arn'], '--state-machine'],
    ];
    for (const [flags, name] of cases) {
      const result = await runCli(['backfill', '--source', 'http://127.0.0.1:9/v3/index.json', '--data-dir', dir, ...flags]);
      expect(result.code, flags.join(' ')).toBe(2);
      expect(result.stderr, flags.join(' ')).toContain(name);
      expect(result.stdout).toBe('');
    }
  });
});
