/**
 * The range worker's CloudWatch metrics: each invocation, called as the Distributed Map calls it (a batch of the
 * planner's ranges file, BatchInput with the backfill id), writes one EMF record to stdout (Powertools Metrics) in
 * the follower's namespace with the backfill's `service` dimension: what its ranges stored (Leaves, Commits,
 * Deletes, Quarantined, Bytes), RangesDone and SlowDowns, and none of the follower's run metrics. A retried batch
 * records zeros; a batch whose second range fails still records what its first stored. Against the catalog
 * replica, DynamoDB Local (or dynalite) and s3rver.
 */
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BackfillRange } from '../../../lambda/contract/index.js';
import { parseTimestamp } from '../../../lambda/contract/time.js';
import { generateCatalog, type GeneratedCatalog, type GeneratedCommit } from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { SyncHarness } from '../../../testkit/sync-harness.js';
import { captureEmf as capture } from '../emf-kit.js';

const ENOUGH = { getRemainingTimeInMillis: () => 600_000 };
const SERVICE = 'catalog-sync-bfm-backfill'; // what infra/constructs/catalog-backfill.ts sets for cursor "bfm"

describe("the range worker's metrics", () => {
  let catalog: GeneratedCatalog;
  let replica: CatalogReplica;
  let harness: SyncHarness;
  const saved = { ...process.env };

  beforeAll(async () => {
    catalog = generateCatalog({ commits: 40, seed: 77, leavesPerCommit: [1, 4], deleteRatio: 0.15 });
    replica = await CatalogReplica.start({ catalog, pageSize: 5 });
    harness = await SyncHarness.create();
    Object.assign(
      process.env,
      harness.env({ CATALOG_SOURCE: replica.serviceIndexUrl, CURSOR_NAME: 'bfm', CONCURRENCY: '8' }),
      {
        POWERTOOLS_SERVICE_NAME: SERVICE,
        POWERTOOLS_METRICS_NAMESPACE: 'CatalogSync',
      },
    );
  });
  afterAll(async () => {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
    await replica.stop();
  });

  /** The commits a range owns: (lo, hi]. */
  const owned = (range: BackfillRange): GeneratedCommit[] =>
    catalog.commits.filter(
      (c) =>
        parseTimestamp(c.timestamp) > parseTimestamp(range.lo) &&
        parseTimestamp(c.timestamp) <= parseTimestamp(range.hi),
    );
  const leavesOf = (ranges: readonly BackfillRange[]) => ranges.flatMap(owned).flatMap((c) => c.leaves);

  it("one EMF record per invocation: what its ranges stored, in the follower's namespace, under the backfill's service", async () => {
    const planner = (await import('../../../lambda/backfill/lambda/planner.js')).handler;
    const worker = (await import('../../../lambda/backfill/lambda/worker.js')).handler;
    const planned = await planner({ rangeLeaves: 15 });
    const object = await harness.clients.s3.send(
      new GetObjectCommand({ Bucket: planned.bucket, Key: planned.rangesKey }),
    );
    const items = JSON.parse(await object.Body!.transformToString('utf8')) as BackfillRange[];
    expect(items.length).toBeGreaterThanOrEqual(4);
    const batch = (ranges: BackfillRange[]) => ({
      Items: ranges,
      BatchInput: { backfillId: planned.backfillId, passes: 0 },
    });

    // A batch of two ranges, run whole.
    const first = items.slice(0, 2);
    const ran = await capture(() => worker(batch(first), ENOUGH));
    expect(ran.result).toMatchObject({ done: true });
    expect(ran.emf).toHaveLength(1);
    const record = ran.emf[0]!;
    const leaves = leavesOf(first);
    expect(leaves.length).toBeGreaterThan(0);
    expect(record).toMatchObject({
      service: SERVICE,
      backfillId: planned.backfillId,
      Leaves: leaves.length,
      Commits: first.flatMap(owned).length,
      Deletes: leaves.filter((leaf) => leaf.type === 'PackageDelete').length,
      Quarantined: 0,
      RangesDone: 2,
      SlowDowns: 0,
    });
    expect(record.Bytes).toBe(ran.result!.ranges.reduce((n, r) => n + r.totals.bytes, 0));
    expect(record.Bytes as number).toBeGreaterThan(0);
    const [directive] = record._aws.CloudWatchMetrics;
    expect(directive).toMatchObject({ Namespace: 'CatalogSync', Dimensions: [['service']] });
    expect(Object.fromEntries(directive!.Metrics.map((m) => [m.Name, m.Unit]))).toEqual({
      Leaves: 'Count',
      Commits: 'Count',
      Deletes: 'Count',
      Quarantined: 'Count',
      Bytes: 'Bytes',
      RangesDone: 'Count',
      SlowDowns: 'Count',
    });
    // Not a follower run: nothing the follower's alarms (RunSucceeded, CursorLagSeconds) or graphs would read.
    for (const name of ['RunSucceeded', 'RunFailed', 'CursorLagSeconds']) expect(record).not.toHaveProperty(name);

    // The same batch retried: its ranges are done, nothing is stored again, and the record says so.
    const retried = await capture(() => worker(batch(first), ENOUGH));
    expect(retried.result!.ranges.every((r) => r.skipped)).toBe(true);
    expect(retried.emf).toHaveLength(1);
    expect(retried.emf[0]).toMatchObject({ Leaves: 0, Commits: 0, Bytes: 0, RangesDone: 0 });

    // A batch whose second range fails (a leaf that fails validation, quarantine off): the worker throws the
    // range's coded error, and its record still counts what the first range stored.
    const [good, bad] = [items[2]!, items[3]!];
    const badLeaf = owned(bad)
      .flatMap((c) => c.leaves)
      .find((leaf) => leaf.type !== 'PackageDelete');
    expect(badLeaf).toBeDefined();
    replica.overrideBody(new URL(replica.leafUrl(badLeaf!)).pathname, '{"@type": "PackageDetails"}');
    try {
      const failed = await capture(() => worker(batch([good, bad]), ENOUGH));
      expect(failed.error).toMatchObject({ code: 'CS_ERR_BACKFILL_RANGE', n: bad.n });
      expect(failed.emf).toHaveLength(1);
      expect(failed.emf[0]).toMatchObject({
        Leaves: leavesOf([good]).length,
        Commits: owned(good).length,
        RangesDone: 1,
      });
    } finally {
      replica.clearFaults();
    }
  });
});
