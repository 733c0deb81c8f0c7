/**
 * One backfill of a cursor at a time, from the CLI (the built CLI and its worker processes, a folder): two
 * `backfill` commands started at once end with one plan, the second exiting 1 naming it; a rerun asking another
 * `--until` against the running plan exits 2 naming both bounds; `--abandon` lets a new plan start.
 */
import { readdir, readFile } from 'node:fs/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BackfillPlan } from '../../../lambda/contract/index.js';
import { formatTimestamp } from '../../../lambda/contract/time.js';
import { generateCatalog } from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { startCliGroup } from '../../../testkit/cli-group.js';
import { runCli } from '../../../testkit/cli-process.js';
import { commitTicks } from '../../../testkit/sync-harness.js';

/** Several CLI processes on a busy two-core machine. */
const SLOW = 180_000;

let root: string;
let replica: CatalogReplica;
const catalog = generateCatalog({ commits: 120, seed: 2104, leavesPerCommit: [1, 5], sameMillisecondPairs: 2 });

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'catalog-sync-one-plan-'));
  replica = await CatalogReplica.start({ catalog, pageSize: 16, splitCommits: true, latencyMs: 30 });
});
afterAll(async () => {
  await replica.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

/** The plans of the folder's cursor, by id. */
async function plans(dir: string): Promise<BackfillPlan[]> {
  const cursorDir = join(dir, '.catalog-sync', 'backfill', 'catalog-to-s3');
  const ids = await readdir(cursorDir).catch(() => [] as string[]);
  return Promise.all(
    ids.sort().map(async (id) => JSON.parse(await readFile(join(cursorDir, id, 'plan.json'), 'utf8')) as BackfillPlan),
  );
}

describe('catalog-sync backfill: one plan at a time', () => {
  it(
    'two backfill commands started at once end with one plan: the second exits 1 naming it, the first finishes',
    async () => {
      const dir = join(root, 'twice');
      const args = [
        'backfill',
        '--source',
        replica.serviceIndexUrl,
        '--data-dir',
        dir,
        '--workers',
        '2',
        '--range-leaves',
        '40',
        '--concurrency',
        '2',
      ];
      const [a, b] = await Promise.all([runCli(args), runCli(args)]);
      const [winner, loser] = a.code === 0 ? [a, b] : [b, a];
      expect(winner.code, `${a.stderr}\n---\n${b.stderr}`).toBe(0);
      expect(loser.code, loser.stderr).toBe(1);
      const all = await plans(dir);
      expect(all).toHaveLength(1);
      expect(all[0]).toMatchObject({ status: 'finished' });
      expect(loser.stderr).toMatch(
        new RegExp(`backfill ${all[0]!.backfillId} of cursor catalog-to-s3 is (running|being planned)`),
      );
      expect(loser.stderr).toContain('--abandon');
    },
    SLOW,
  );

  it(
    'another --until against the running plan exits 2 naming both; --abandon then lets a new plan start',
    async () => {
      const dir = join(root, 'abandon');
      const base = ['--source', replica.serviceIndexUrl, '--data-dir', dir];
      const first = startCliGroup([
        'backfill',
        ...base,
        '--workers',
        '2',
        '--range-leaves',
        '40',
        '--concurrency',
        '1',
      ]);
      try {
        const planned = await first.stderrLine((line) => /^backfill \S+ planned: /.test(line));
        const backfillId = /^backfill (\S+) planned/.exec(planned)![1]!;
        const until = formatTimestamp(commitTicks(catalog, 60));
        const refused = await runCli(['backfill', ...base, '--until', until]);
        expect(refused.code).toBe(2);
        expect(refused.stderr).toContain('--until');
        expect(refused.stderr).toContain(`backfill ${backfillId} is unfinished with until none`);
        expect(refused.stderr).toContain(`but until ${until} was asked`);
        // The same again without flags: refused while it runs, naming it (exit 1).
        const running = await runCli(['backfill', ...base]);
        expect(running.code).toBe(1);
        expect(running.stderr).toContain(
          `backfill ${backfillId} of cursor catalog-to-s3 is running (held by ${first.child.pid}@`,
        );
        // A follower run is held off, and says by what and until when.
        const held = await runCli(['run', ...base, '--max-commits', '5']);
        expect(held.code).toBe(0);
        expect(held.stdout).toMatch(/^backfill: 0 commits/m);
        expect(held.stderr).toMatch(
          new RegExp(
            `held off by backfill ${backfillId} of cursor catalog-to-s3 \\(held by ${first.child.pid}@[^)]+\\), its lease until \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z`,
          ),
        );
        first.child.kill('SIGTERM');
        expect((await first.done).code).toBe(1);
        // Stopped cleanly, the backfill gave its lease back: the follower is no longer held off.
        const free = await runCli(['run', ...base, '--max-commits', '5', '--json']);
        expect(free.code).toBe(0);
        expect(JSON.parse(free.stdout)).toMatchObject({ stoppedBy: 'max-commits', commits: 5 });

        const abandoned = await runCli([
          'backfill',
          ...base,
          '--abandon',
          '--until',
          until,
          '--workers',
          '2',
          '--json',
        ]);
        expect(abandoned.code, abandoned.stderr).toBe(0);
        expect(abandoned.stderr).toContain(`abandoned backfill ${backfillId}`);
        const all = await plans(dir);
        expect(all.map((plan) => [plan.backfillId === backfillId, plan.status])).toEqual([
          [true, 'abandoned'],
          [false, 'finished'],
        ]);
        expect(all[1]).toMatchObject({ until, bound: until });
      } finally {
        first.killGroup();
      }
    },
    SLOW,
  );
});
