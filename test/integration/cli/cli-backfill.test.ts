import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatTimestamp, parseTimestamp } from '../../../lambda/contract/time.js';
import { appendCommits } from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { startCliGroup } from '../../../testkit/cli-group.js';
import { runCli } from '../../../testkit/cli-process.js';
import { snapshotKeys, verifyBackfilled } from '../../../testkit/backfill-verify.js';
import { readLocalState } from '../../../testkit/local-verify.js';
import { commitTicks } from '../../../testkit/sync-harness.js';
import {
  at,
  followUntilCaughtUp,
  hardCatalog,
  jsonLine,
  newDir,
  SLOW,
  START,
  useBackfillFolders,
} from './cli-backfill-kit.js';

useBackfillFolders();

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
        const result = await runCli([
          'backfill',
          ...at(backfilled, replica),
          '--workers',
          '2',
          '--range-leaves',
          '40',
          '--json',
        ]);
        expect(result.stderr).toBe('');
        expect(result.code).toBe(0);
        const summary = jsonLine(result.stdout);
        const leaves = catalog.commits.reduce((n, commit) => n + commit.leaves.length, 0);
        expect(summary).toMatchObject({
          cursorBefore: START,
          cursorAfter: head,
          commits: catalog.commits.length,
          leaves,
          caughtUp: true,
          stoppedBy: 'caught-up',
        });
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
        expect(stateA!.cursors['catalog-to-s3']).toMatchObject({
          cursor: head,
          commitId: stateB!.cursors['catalog-to-s3']!.commitId,
        });
        expect(stateB!.cursors['catalog-to-s3']!.cursor).toBe(head);

        // The catalog grows: a follower of the backfilled folder goes on from B, with no gap.
        appendCommits(catalog, 25, 311);
        const newHead = formatTimestamp(commitTicks(catalog, -1));
        const next = await runCli(['run', ...at(backfilled, replica), '--json']);
        expect(next.code).toBe(0);
        expect(jsonLine(next.stdout)).toMatchObject({
          cursorBefore: head,
          cursorAfter: newHead,
          commits: 25,
          stoppedBy: 'caught-up',
        });
        expect(await verifyBackfilled(backfilled, catalog, replica.origin, parseTimestamp(newHead))).toEqual([]);

        // A second backfill has nothing to do: B is at the cursor.
        const again = await runCli(['backfill', ...at(backfilled, replica), '--workers', '2', '--json']);
        expect(again.code).toBe(0);
        expect(jsonLine(again.stdout)).toMatchObject({
          cursorBefore: newHead,
          cursorAfter: newHead,
          commits: 0,
          stoppedBy: 'caught-up',
        });
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
        const result = await runCli([
          'backfill',
          ...at(dir, replica),
          '--workers',
          '2',
          '--range-leaves',
          '30',
          '--until',
          bound,
          '--json',
        ]);
        expect(result.code).toBe(0);
        // Lag remains past B: stopped at its bound, not caught up, in the summary and the run log (issue 24).
        expect(jsonLine(result.stdout)).toMatchObject({
          cursorAfter: bound,
          commits: 45,
          caughtUp: false,
          stoppedBy: 'until',
        });
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
      // 60 commits (about 230 leaves) in ranges of 20: more than 2 ranges (asserted), half the leaves of 120 in ranges of 40.
      const catalog = hardCatalog(33, 60);
      const replica = await CatalogReplica.start({ catalog, pageSize: 16, splitCommits: true });
      try {
        const dir = newDir('gate');
        const head = formatTimestamp(commitTicks(catalog, -1));
        // The backfill's workers wait at their first leaf until the follower and status have seen it running.
        const leaves = replica.hold('/v3/catalog0/data/');
        const backfill = startCliGroup([
          'backfill',
          ...at(dir, replica),
          '--workers',
          '2',
          '--range-leaves',
          '20',
          '--concurrency',
          '1',
        ]);
        try {
          const planned = await backfill.stderrLine((line) => /^backfill \S+ planned: /.test(line));
          const backfillId = /^backfill (\S+) planned/.exec(planned)![1]!;
          await leaves.arrived;

          const follower = await runCli(['run', ...at(dir, replica), '--json']);
          expect(follower.stderr).toBe('');
          expect(follower.code).toBe(0);
          expect(jsonLine(follower.stdout)).toMatchObject({
            cursorBefore: START,
            cursorAfter: START,
            commits: 0,
            caughtUp: false,
            stoppedBy: 'backfill',
          });

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
        expect(jsonLine(follower.stdout)).toMatchObject({
          cursorBefore: head,
          cursorAfter: head,
          commits: 0,
          stoppedBy: 'caught-up',
        });
        expect(await verifyBackfilled(dir, catalog, replica.origin, parseTimestamp(head))).toEqual([]);
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
        res.end(
          JSON.stringify({
            executionArn: `${arn.replace(':stateMachine:', ':execution:')}:run-1`,
            startDate: 1_790_000_000,
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const env = {
        AWS_ENDPOINT_URL_SFN: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        AWS_ACCESS_KEY_ID: 'test',
        AWS_SECRET_ACCESS_KEY: 'test',
      };
      const result = await runCli(
        ['backfill', '--state-machine', arn, '--until', '2024-01-01T00:00:00Z', '--range-leaves', '2000', '--json'],
        env,
      );
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(jsonLine<{ executionArn: string }>(result.stdout)).toEqual({
        executionArn: 'arn:aws:states:eu-west-3:123456789012:execution:CatalogSyncBackfill:run-1',
      });
      expect(bodies).toEqual([
        { stateMachineArn: arn, input: JSON.stringify({ until: '2024-01-01T00:00:00.0000000Z', rangeLeaves: 2000 }) },
      ]);
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
      const result = await runCli([
        'backfill',
        '--source',
        'http://127.0.0.1:9/v3/index.json',
        '--data-dir',
        dir,
        ...flags,
      ]);
      expect(result.code, flags.join(' ')).toBe(2);
      expect(result.stderr, flags.join(' ')).toContain(name);
      expect(result.stdout).toBe('');
    }
  });
});
