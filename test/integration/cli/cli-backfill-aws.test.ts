/**
 * `catalog-sync backfill --workers 2 --cursor-table --bucket` against DynamoDB Local (or dynalite) and s3rver, as
 * a user runs it: the plan and range items in the table, the ranges file and the snapshots in the bucket. It
 * stores the whole catalog exactly, moves the cursor to B, holds a follower back while it runs (`status` shows
 * it), and a follower then goes on with no gap.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../../../lambda/contract/run-summary.js';
import { formatTimestamp } from '../../../lambda/contract/time.js';
import { appendCommits, generateCatalog, type GeneratedCatalog } from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { startCliGroup } from '../../../testkit/cli-group.js';
import { runCli } from '../../../testkit/cli-process.js';
import { commitTicks, SyncHarness } from '../../../testkit/sync-harness.js';

let catalog: GeneratedCatalog;
let replica: CatalogReplica;

beforeAll(async () => {
  catalog = generateCatalog({
    commits: 120,
    seed: 53,
    leavesPerCommit: [1, 5],
    sameMillisecondPairs: 3,
    semver2Ratio: 0.2,
  });
  replica = await CatalogReplica.start({ catalog, pageSize: 16, splitCommits: true });
});
afterAll(async () => {
  await replica?.stop();
});

function jsonLine<T = RunSummary>(stdout: string): T {
  const lines = stdout.split('\n').filter((line) => line.trim() !== '');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as T;
}

describe('catalog-sync backfill with --cursor-table and --bucket', () => {
  it('stores the whole catalog, moves the cursor to B, holds a follower back meanwhile; the follower then goes on', async () => {
    const harness = await SyncHarness.create();
    const stores = ['--source', replica.serviceIndexUrl, '--cursor-table', harness.table, '--bucket', harness.bucket];
    const head = formatTimestamp(commitTicks(catalog, -1));
    // The backfill's workers wait at their first leaf until the follower and status have seen it running.
    const leaves = replica.hold('/v3/catalog0/data/');
    const backfill = startCliGroup(
      ['backfill', ...stores, '--workers', '2', '--range-leaves', '40', '--concurrency', '2'],
      harness.env(),
    );
    try {
      const planned = await backfill.stderrLine((line) => /^backfill \S+ planned: /.test(line));
      const backfillId = /^backfill (\S+) planned/.exec(planned)![1]!;
      await leaves.arrived;
      const follower = await runCli(['run', ...stores, '--json'], harness.env());
      expect(follower.code).toBe(0);
      expect(jsonLine(follower.stdout)).toMatchObject({ commits: 0, caughtUp: false, stoppedBy: 'backfill' });
      const status = await runCli(['status', ...stores, '--json'], harness.env());
      expect(jsonLine<{ backfill: unknown }>(status.stdout).backfill).toMatchObject({
        backfillId,
        bound: head,
        leaseLive: true,
      });

      leaves.release();
      const done = await backfill.done;
      expect(done.code).toBe(0);
      expect(done.stdout).toContain(`-> ${head}`);
    } finally {
      backfill.killGroup();
    }
    expect(await harness.cursor()).toBe(head);
    expect(await harness.verify(catalog, replica.origin, commitTicks(catalog, -1))).toEqual([]);

    appendCommits(catalog, 20, 531);
    const next = await runCli(['run', ...stores, '--json'], harness.env());
    expect(next.code).toBe(0);
    expect(jsonLine(next.stdout)).toMatchObject({ cursorBefore: head, commits: 20, stoppedBy: 'caught-up' });
    expect(await harness.verify(catalog, replica.origin, commitTicks(catalog, -1))).toEqual([]);
  }, 240_000);
});
