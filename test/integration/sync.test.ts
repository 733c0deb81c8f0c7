/**
 * The engine end to end, over real HTTP: a catalog replica on 127.0.0.1, DynamoDB Local (or dynalite) and
 * s3rver. Every test checks the bucket byte for byte against the generated catalog. A catalog that serves stale
 * copies or fails: sync-stale-and-faults.test.ts.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { formatTimestamp, parseTimestamp } from '../../lambda/contract/time.js';
import { commitKey, manifestKey } from '../../lambda/contract/keys.js';
import { generateCatalog, type GeneratedCatalog } from '../../testkit/catalog-generator.js';
import type { CatalogReplica } from '../../testkit/catalog-replica.js';
import { commitTicks, RecordingCursorStore, SyncHarness } from '../../testkit/sync-harness.js';
import { useReplicas } from './sync-kit.js';

const replicaOf = useReplicas();

describe('a full sync', () => {
  let catalog: GeneratedCatalog;
  let replica: CatalogReplica;
  let harness: SyncHarness;

  beforeAll(async () => {
    // Every hard case (same-millisecond commits, trimmed timestamps, SemVer 2, deletes, non-normalized
    // deletes) over a dozen pages; more commits only cost time (listing past 1,000 keys through the S3
    // store is checked in emulators.test.ts).
    catalog = generateCatalog({
      commits: 75,
      seed: 7,
      leavesPerCommit: [1, 5],
      sameMillisecondPairs: 5,
      trimTrailingZeros: true,
      semver2Ratio: 0.2,
      deleteRatio: 0.15,
      nonNormalizedDeleteRatio: 0.5,
    });
    replica = await replicaOf(catalog, { pageSize: 20 });
    harness = await SyncHarness.create();
  });

  it('stores every leaf byte for byte, every manifest, and moves the cursor to the head', async () => {
    const summary = await harness.run(replica.serviceIndexUrl, { MAX_COMMITS: '1000', CONCURRENCY: '16' });
    const head = commitTicks(catalog, -1);
    const leaves = catalog.commits.reduce((n, commit) => n + commit.leaves.length, 0);
    const deletes = catalog.commits.reduce(
      (n, commit) => n + commit.leaves.filter((leaf) => leaf.type === 'PackageDelete').length,
      0,
    );
    expect(summary).toMatchObject({
      cursorName: 'catalog-to-s3',
      cursorBefore: '0001-01-01T00:00:00.0000000Z',
      cursorAfter: formatTimestamp(head),
      commits: catalog.commits.length,
      leaves,
      deletes,
      quarantined: 0,
      caughtUp: true,
      stoppedBy: 'caught-up',
    });
    expect(summary.bytes).toBeGreaterThan(leaves * 100);
    expect(await harness.cursor()).toBe(formatTimestamp(head));
    expect(await harness.verify(catalog, replica.origin, head)).toEqual([]);
    const keys = await harness.keys();
    expect(keys.filter((key) => key.startsWith('leaves/'))).toHaveLength(leaves);
    expect(keys.filter((key) => key.startsWith('commits/'))).toHaveLength(catalog.commits.length);
    expect(keys.filter((key) => !key.startsWith('leaves/') && !key.startsWith('commits/'))).toEqual(['watermark.json']);
  });

  it('writes watermark.json with the cursor it moved to: cursor, commitId, commitKey, updatedAt', async () => {
    const head = catalog.commits.at(-1)!;
    expect(await harness.snapshots.getJson('watermark.json')).toEqual({
      cursor: formatTimestamp(commitTicks(catalog, -1)),
      commitId: head.commitId,
      commitKey: commitKey(commitTicks(catalog, -1)),
      updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
  });

  it('stores the cursor with exactly seven fractional digits, and the run in the run log', async () => {
    expect(await harness.cursor()).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z$/);
    const runs = await harness.store.listRuns('catalog-to-s3', { limit: 10 });
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ stoppedBy: 'caught-up', commits: catalog.commits.length });
  });

  it('does nothing on the next run, and says it is caught up', async () => {
    const summary = await harness.run(replica.serviceIndexUrl);
    expect(summary).toMatchObject({ commits: 0, leaves: 0, caughtUp: true, stoppedBy: 'caught-up' });
  });
});

describe('bounded slices', () => {
  it('--max-commits 1 lands on each commit in turn, including two commits inside one millisecond', async () => {
    const catalog = generateCatalog({ commits: 24, seed: 11, sameMillisecondPairs: 6, trimTrailingZeros: true });
    const sameMillisecond = catalog.commits.filter(
      (commit, i) =>
        i > 0 &&
        parseTimestamp(commit.timestamp) / 10_000n === parseTimestamp(catalog.commits[i - 1]!.timestamp) / 10_000n,
    );
    expect(sameMillisecond.length).toBeGreaterThanOrEqual(3);
    const replica = await replicaOf(catalog, { pageSize: 7 });
    const harness = await SyncHarness.create();
    for (let i = 0; i < catalog.commits.length; i++) {
      const summary = await harness.run(replica.serviceIndexUrl, { MAX_COMMITS: '1' });
      expect(summary.commits).toBe(1);
      expect(summary.cursorAfter).toBe(formatTimestamp(commitTicks(catalog, i)));
      expect(summary.stoppedBy).toBe(i === catalog.commits.length - 1 ? 'caught-up' : 'max-commits');
      expect(await harness.manifestsAfter(catalog, commitTicks(catalog, i))).toEqual([]);
    }
    expect(await harness.verify(catalog, replica.origin, commitTicks(catalog, -1))).toEqual([]);
  });

  it('--max-leaves takes whole commits only, and at least one', async () => {
    const catalog = generateCatalog({ commits: 30, seed: 12, leavesPerCommit: [3, 6] });
    const replica = await replicaOf(catalog);
    const harness = await SyncHarness.create();
    const first = await harness.run(replica.serviceIndexUrl, { MAX_LEAVES: '1' });
    expect(first).toMatchObject({ commits: 1, leaves: catalog.commits[0]!.leaves.length, stoppedBy: 'max-leaves' });
    const second = await harness.run(replica.serviceIndexUrl, { MAX_LEAVES: '10' });
    const taken = second.commits;
    const leaves = catalog.commits.slice(1, 1 + taken).reduce((n, c) => n + c.leaves.length, 0);
    expect(leaves).toBeLessThanOrEqual(10);
    expect(leaves + catalog.commits[1 + taken]!.leaves.length).toBeGreaterThan(10);
    expect(second.cursorAfter).toBe(formatTimestamp(commitTicks(catalog, taken)));
  });

  it('starts from START_CURSOR when no cursor is stored', async () => {
    const catalog = generateCatalog({ commits: 10, seed: 13 });
    const replica = await replicaOf(catalog);
    const harness = await SyncHarness.create();
    const summary = await harness.run(replica.catalogIndexUrl, { START_CURSOR: catalog.commits[5]!.timestamp });
    expect(summary.commits).toBe(4);
    expect(summary.cursorBefore).toBe(formatTimestamp(commitTicks(catalog, 5)));
    expect(await harness.count('commits/')).toBe(4);
  });

  it('stops taking work at the deadline and checkpoints what it completed', async () => {
    const catalog = generateCatalog({ commits: 20, seed: 14 });
    const replica = await replicaOf(catalog);
    const harness = await SyncHarness.create();
    const summary = await harness.run(replica.serviceIndexUrl, {}, { deadline: Date.now() - 1 });
    expect(summary).toMatchObject({ commits: 0, stoppedBy: 'time-budget', caughtUp: false });
    expect(await harness.count('commits/')).toBe(0);
    // A run with no cursor stored writes no watermark.
    expect(await harness.keys('watermark.json')).toEqual([]);
  });

  it('writes the watermark only once the cursor it names is stored: it may lag the cursor, never lead it', async () => {
    const catalog = generateCatalog({ commits: 30, seed: 16 });
    const replica = await replicaOf(catalog, { pageSize: 6 });
    const harness = await SyncHarness.create();
    const seen: { watermark: string; storedCursor: string | undefined }[] = [];
    const snapshots = Object.create(harness.snapshots) as typeof harness.snapshots;
    snapshots.putJsonIf = async (key: string, value: unknown, expected: string | undefined): Promise<boolean> => {
      if (key === 'watermark.json')
        seen.push({ watermark: (value as { cursor: string }).cursor, storedCursor: await harness.cursor() });
      return harness.snapshots.putJsonIf(key, value, expected);
    };
    // Only the closing watermark of each run (a run longer than the interval also writes some during it: see
    // manifests-as-completed.test.ts).
    for (const maxCommits of ['7', '11', '1000'])
      await harness.run(
        replica.serviceIndexUrl,
        { MAX_COMMITS: maxCommits },
        { snapshots, watermarkIntervalMs: 3_600_000 },
      );
    expect(seen.map((s) => s.watermark)).toEqual([6, 17, 29].map((i) => formatTimestamp(commitTicks(catalog, i))));
    for (const { watermark, storedCursor } of seen) expect(storedCursor).toBe(watermark);
    expect(((await harness.snapshots.getJson('watermark.json')) as { cursor: string }).cursor).toBe(
      await harness.cursor(),
    );
  });

  it('a leaf that trickles for ever is aborted at the deadline: the run checkpoints the last complete commit and returns time-budget', async () => {
    const catalog = generateCatalog({ commits: 8, seed: 15 });
    const replica = await replicaOf(catalog);
    const harness = await SyncHarness.create();
    // In the second commit: the first one is stored well within the 2 s, even on a loaded machine.
    const slow = catalog.commits[1]!.leaves[0]!;
    // One byte a second: the leaf would take many minutes, and no body timeout ever fires.
    replica.trickleBody(slow.path, 1_000, 1_000);
    const summary = await harness.run(
      replica.serviceIndexUrl,
      { QUARANTINE: 'true' },
      { deadline: Date.now() + 2_000 },
    );
    const lastComplete = formatTimestamp(commitTicks(catalog, 0));
    expect(summary).toMatchObject({
      stoppedBy: 'time-budget',
      caughtUp: false,
      commits: 1,
      quarantined: 0,
      cursorAfter: lastComplete,
    });
    expect(await harness.cursor()).toBe(lastComplete);
    // Later commits may have completed meanwhile (their manifests are whole); the aborted one has none.
    expect(await harness.manifestsAfter(catalog, commitTicks(catalog, 0))).not.toContain(
      manifestKey('', commitKey(commitTicks(catalog, 1))),
    );
    expect(await harness.strayManifests(catalog, replica.origin, commitTicks(catalog, 0))).toEqual([]);
    expect(await harness.keys('quarantine/')).toEqual([]);
    // The run did not wait for the leaf: its one request was cut, and the replica saw the connection closed.
    await replica.whenAbandoned(slow.path, 1);
    expect(replica.countRequests(slow.path)).toBe(1);
  });

  it('the Lambda handler aborts at its remaining time less the margin, and returns time-budget', async () => {
    const catalog = generateCatalog({ commits: 4, seed: 16 });
    const replica = await replicaOf(catalog);
    const harness = await SyncHarness.create();
    const slow = catalog.commits[1]!.leaves[0]!;
    replica.trickleBody(slow.path, 1_000, 1_000);
    const saved = { ...process.env };
    Object.assign(process.env, harness.env({ CATALOG_SOURCE: replica.serviceIndexUrl }));
    // Powertools logs every run as JSON on stdout and stderr: kept out of the test output.
    const quiet = [
      vi.spyOn(process.stdout, 'write').mockImplementation(() => true),
      vi.spyOn(process.stderr, 'write').mockImplementation(() => true),
    ];
    try {
      const { handler } = await import('../../lambda/sync/lambda.js');
      // 7 s left, less the 5 s margin: a 2 s budget.
      const summary = await handler({}, { getRemainingTimeInMillis: () => 7_000 });
      expect(summary).toMatchObject({
        stoppedBy: 'time-budget',
        commits: 1,
        cursorAfter: formatTimestamp(commitTicks(catalog, 0)),
      });
      await replica.whenAbandoned(slow.path, 1);
    } finally {
      for (const spy of quiet) spy.mockRestore();
      process.env = saved;
    }
  });
});

describe('overlapping runs', () => {
  it('never move the cursor backward nor past an incomplete commit', async () => {
    const catalog = generateCatalog({ commits: 120, seed: 21, leavesPerCommit: [1, 4], sameMillisecondPairs: 4 });
    const replica = await replicaOf(catalog, { pageSize: 15, latencyMs: 1 });
    const harness = await SyncHarness.create();
    const violations: string[] = [];
    // Commits up to here were found whole at an earlier cursor write; nothing deletes them since.
    let wholeUpTo: bigint | undefined;
    const recording = new RecordingCursorStore(harness.store, async (value) => {
      // At the instant a cursor is written, every commit at or before it must be whole in the bucket.
      const problems = await harness.verify(catalog, replica.origin, value, '', wholeUpTo);
      violations.push(...problems.map((problem) => `cursor ${formatTimestamp(value)}: ${problem}`));
      if (problems.length === 0 && (wholeUpTo === undefined || value > wholeUpTo)) wholeUpTo = value;
    });
    for (let round = 0; round < 6; round++) {
      const runs = Array.from({ length: 4 }, (_, i) =>
        harness.run(
          replica.serviceIndexUrl,
          { MAX_COMMITS: String(8 + i * 5), CONCURRENCY: String(2 + i * 3) },
          { cursors: recording },
        ),
      );
      const summaries = await Promise.all(runs);
      for (const summary of summaries) expect(['max-commits', 'caught-up', 'lost-race']).toContain(summary.stoppedBy);
    }
    for (let i = 1; i < recording.written.length; i++) {
      expect(recording.written[i]! > recording.written[i - 1]!).toBe(true);
    }
    expect(violations).toEqual([]);
    while ((await harness.run(replica.serviceIndexUrl, { MAX_COMMITS: '1000' })).stoppedBy !== 'caught-up');
    expect(await harness.verify(catalog, replica.origin, commitTicks(catalog, -1))).toEqual([]);
  });
});

describe('dependencies', () => {
  it('never passes a DEPENDS_ON cursor', async () => {
    const catalog = generateCatalog({ commits: 30, seed: 31 });
    const replica = await replicaOf(catalog);
    const harness = await SyncHarness.create();
    const documents = DynamoDBDocumentClient.from(harness.clients.dynamo);
    // The upstream cursor sits 50 ns after commit 11: commits up to 11 may be taken, 12 may not.
    const bound = commitTicks(catalog, 11) + 500n;
    await documents.send(
      new PutCommand({
        TableName: harness.table,
        Item: { pk: 'upstream', sk: 'cursor', cursor: formatTimestamp(bound) },
      }),
    );
    const summary = await harness.run(replica.serviceIndexUrl, { DEPENDS_ON: 'upstream' });
    expect(summary).toMatchObject({
      commits: 12,
      stoppedBy: 'dependency',
      caughtUp: true,
      cursorAfter: formatTimestamp(commitTicks(catalog, 11)),
    });
    expect(await harness.manifestsAfter(catalog, commitTicks(catalog, 11))).toEqual([]);
    const again = await harness.run(replica.serviceIndexUrl, { DEPENDS_ON: 'upstream' });
    expect(again).toMatchObject({ commits: 0, stoppedBy: 'dependency' });
    // Held exactly at the bound, it reads no page at all.
    await documents.send(
      new PutCommand({
        TableName: harness.table,
        Item: { pk: 'upstream', sk: 'cursor', cursor: formatTimestamp(commitTicks(catalog, 11)) },
      }),
    );
    replica.clearLog();
    expect(await harness.run(replica.serviceIndexUrl, { DEPENDS_ON: 'upstream' })).toMatchObject({
      commits: 0,
      stoppedBy: 'dependency',
    });
    expect(replica.countRequests('/page')).toBe(0);
  });

  it('does nothing while a dependency has no cursor yet', async () => {
    const catalog = generateCatalog({ commits: 5, seed: 32 });
    const replica = await replicaOf(catalog);
    const harness = await SyncHarness.create();
    const summary = await harness.run(replica.serviceIndexUrl, { DEPENDS_ON: 'not-started' });
    expect(summary).toMatchObject({ commits: 0, stoppedBy: 'dependency' });
    expect(await harness.cursor()).toBeUndefined();
  });
});
