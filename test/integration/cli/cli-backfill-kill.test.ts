/**
 * `catalog-sync backfill --workers 2` SIGKILLed with its workers (the whole process group) at points chosen from
 * what it printed, never from timers: right after planning, after the k-th range done (other ranges mid-work:
 * the replica answers slowly), right after it starts finishing. Rerun until it finishes: nothing is lost (the
 * verifier), the stored cursor is after each kill either where it started or B (never past a range not done),
 * and every rerun resumes the same plan.
 *
 * Every seed kills at each kind of point; seeds differ only in the order and in which range. One seed a run
 * (testkit/run-seed.ts, printed; CATALOG_SYNC_TEST_SEED replays one), so that over CI runs all are reached.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatTimestamp, parseTimestamp } from '../../../lambda/contract/time.js';
import { generateCatalog, type GeneratedCatalog } from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { startCliGroup } from '../../../testkit/cli-group.js';
import { verifyBackfilled } from '../../../testkit/backfill-verify.js';
import { readLocalState } from '../../../testkit/local-verify.js';
import { mulberry32 } from '../../../testkit/prng.js';
import { runSeed } from '../../../testkit/run-seed.js';
import { commitTicks } from '../../../testkit/sync-harness.js';

let root: string;
let catalog: GeneratedCatalog;
let replica: CatalogReplica;
let head: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'catalog-sync-backfill-kill-'));
  catalog = generateCatalog({
    commits: 200,
    seed: 41,
    leavesPerCommit: [1, 4],
    sameMillisecondPairs: 4,
    semver2Ratio: 0.2,
  });
  replica = await CatalogReplica.start({ catalog, pageSize: 16, splitCommits: true, latencyMs: 4 });
  head = formatTimestamp(commitTicks(catalog, -1));
});
afterAll(async () => {
  await replica?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

type KillPoint = { kind: 'planned' } | { kind: 'range-done'; k: number } | { kind: 'finishing' };

function matches(point: KillPoint, line: string): boolean {
  switch (point.kind) {
    case 'planned':
      return /^backfill \S+ (planned|resumed): /.test(line);
    case 'range-done': {
      const done = /^range \d+ done.*: (\d+)\/\d+ ranges/.exec(line);
      return done !== null && Number(done[1]) >= point.k;
    }
    case 'finishing':
      return line.startsWith('finishing backfill ');
  }
}

/** The verifier's problems, but for the temporary files a killed writer leaves in the state folder's tmp/ by design (removed once an hour old). */
async function problems(dir: string, upTo: bigint): Promise<string[]> {
  return (await verifyBackfilled(dir, catalog, replica.origin, upTo)).filter(
    (problem) => !problem.startsWith('temporary file left: .catalog-sync/tmp/'),
  );
}

describe('catalog-sync backfill killed with SIGKILL', () => {
  const seed = runSeed('cli-backfill-kill.test.ts kill points', [1, 2, 3]);
  it(`seed ${seed}: killed at random points and rerun, it loses nothing and never moves the cursor early`, async () => {
    const prng = mulberry32(seed * 7919);
    const dir = join(root, `seed-${seed}`);
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
      '3',
    ];
    let backfillId: string | undefined;
    let ranges = 0;
    const kills: string[] = [];
    // The points: always one of each kind, in an order and at ranges the seed picks; then run to the end.
    const points: KillPoint[] = prng.shuffle<KillPoint>([
      { kind: 'planned' },
      { kind: 'range-done', k: 0 },
      { kind: 'range-done', k: 0 },
      { kind: 'finishing' },
    ]);
    for (let attempt = 0; ; attempt++) {
      const point = points[attempt];
      const cli = startCliGroup(args);
      const planned = await cli.stderrLine((line) => /^backfill \S+ (planned|resumed): /.test(line));
      const [, id, how, count] = /^backfill (\S+) (planned|resumed): (\d+) ranges/.exec(planned)!;
      if (backfillId === undefined) {
        expect(how).toBe('planned');
        backfillId = id;
        ranges = Number(count);
        expect(ranges).toBeGreaterThan(4);
      } else if (how === 'planned') {
        // Only when the last kill landed after the plan was marked finished: a new plan with nothing to do.
        expect((await readLocalState(dir))?.cursors['catalog-to-s3']?.cursor, kills.join('\n')).toBe(head);
        expect(Number(count)).toBe(0);
      } else {
        // Every rerun resumes the same plan until it finished.
        expect(`${how} ${id}`).toBe(`resumed ${backfillId}`);
      }
      if (point === undefined) {
        const result = await cli.done;
        // The plan this run printed: the first one resumed, or (when the last kill landed after that plan was
        // marked finished, checked above) a new plan of no ranges. On a busy machine either happens.
        expect(result.stderr).toContain(`finishing backfill ${id}`);
        expect(result.code).toBe(0);
        expect(result.stdout).toContain(`-> ${head}`);
        break;
      }
      const target: KillPoint =
        point.kind === 'range-done' ? { kind: 'range-done', k: prng.int(1, ranges - 1) } : point;
      const reached = await cli
        .stderrLine((line) => matches(target, line))
        .then(
          () => true,
          () => false,
        );
      cli.killGroup();
      const result = await cli.done;
      kills.push(`${JSON.stringify(target)}: ${reached ? 'killed' : `ended first (${result.code})`}`);
      // After each kill the cursor is where it started (none stored) or B: never in between, never past a range not done.
      const cursor = (await readLocalState(dir))?.cursors['catalog-to-s3']?.cursor;
      expect([undefined, head], kills.join('\n')).toContain(cursor);
      expect(await problems(dir, cursor === undefined ? -1n : parseTimestamp(cursor)), kills.join('\n')).toEqual([]);
      if (result.code === 0) break; // it finished before the kill landed (e.g. k past the ranges left)
    }
    expect((await readLocalState(dir))!.cursors['catalog-to-s3']!.cursor).toBe(head);
    expect(await problems(dir, parseTimestamp(head))).toEqual([]);
  }, 240_000);
});
