/**
 * The latest view over a backfill that writes out of order underneath it (S3 + DynamoDB Local, and a folder): a
 * follower mirrors the first commits, then a backfill of the rest runs its ranges in shuffled order (some with a
 * view consumer running at the same time) and finishes. The view consumer runs after every range. At every index
 * write, the index's commit is at or before the watermark; after every run, the consumer's cursor is at or before
 * the watermark and the view is exactly the one computed from the catalog up to that cursor; at the end, the whole
 * catalog's view.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumerKey, readWatermark } from '../../../lambda/consumer/index.js';
import { commitKeyOf } from '../../../lambda/contract/keys.js';
import { formatTimestamp, parseTimestamp } from '../../../lambda/contract/time.js';
import type {
  BackfillStore,
  CursorStore,
  RunLogStore,
  SnapshotReader,
  SnapshotStore,
} from '../../../lambda/stores/types.js';
import { runSlice } from '../../../lambda/sync/index.js';
import { finishBackfill, planBackfill, runRange } from '../../../lambda/backfill/index.js';
import {
  keepView,
  packageIndexKey,
  VIEW_CONSUMER,
  type StoredDocument,
  type ViewDocuments,
} from '../../../lambda/view/index.js';
import { withDeps, settingsOf, type BackfillTarget } from '../../../testkit/backfill-harness.js';
import { generateCatalog, type GeneratedCatalog } from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { mulberry32 } from '../../../testkit/prng.js';
import { openViewTarget, VIEW_KINDS, type ViewTestTarget } from '../../../testkit/view-harness.js';
import { expectedView } from '../../../testkit/view-mirror.js';

describe.each(VIEW_KINDS)('the latest view over an out-of-order backfill: %s', (kind) => {
  let catalog: GeneratedCatalog;
  let replica: CatalogReplica;
  let target: ViewTestTarget;

  beforeAll(async () => {
    catalog = generateCatalog({
      commits: 30,
      seed: 2324,
      leavesPerCommit: [1, 4],
      deleteRatio: 0.2,
      sameMillisecondPairs: 2,
    });
    replica = await CatalogReplica.start({ catalog, pageSize: 5, splitCommits: true });
    target = await openViewTarget(kind);
  });
  afterAll(async () => {
    await replica?.stop();
    target?.close();
  });

  it("never passes the watermark, and ends equal to the catalog's view", async () => {
    const stores = target.harness
      ? {
          cursors: target.harness.store,
          snapshots: target.harness.snapshots,
          runLog: target.harness.store,
          backfills: target.harness.store,
        }
      : {
          cursors: target.cursors,
          snapshots: target.store,
          runLog: target.store as unknown as RunLogStore,
          backfills: target.store as unknown as BackfillStore,
        };
    const mirrorTarget = {
      stores: stores as {
        cursors: CursorStore;
        snapshots: SnapshotStore & SnapshotReader;
        runLog: RunLogStore;
        backfills: BackfillStore;
      },
    } as BackfillTarget;
    const watermarkKey = async (): Promise<string | undefined> => (await readWatermark(target.mirror))?.commitKey;

    // Every index write is checked against the watermark at that moment.
    const writes: { commitKey: string; watermark: string | undefined }[] = [];
    const documents: ViewDocuments = {
      where: target.documents.where,
      read: (key: string): Promise<StoredDocument | undefined> => target.documents.read(key),
      writeIf: async (key: string, bytes: Buffer, expected: string | undefined): Promise<boolean> => {
        writes.push({
          commitKey: (JSON.parse(bytes.toString('utf8')) as { commitKey: string }).commitKey,
          watermark: await watermarkKey(),
        });
        return target.documents.writeIf(key, bytes, expected);
      },
    };
    const view = (): ReturnType<typeof keepView> =>
      keepView({ documents, prefix: '' }, { mirror: target.mirror, cursors: target.cursors, batchSize: 4 });

    /** After a view run: its cursor is at or before the watermark, and the view is the catalog's up to the cursor. */
    async function observe(): Promise<number> {
      const cursor = (await target.cursors.read(consumerKey(target.mirror, VIEW_CONSUMER)))?.value;
      const watermark = await readWatermark(target.mirror);
      if (cursor === undefined) return 0;
      expect(watermark).toBeDefined();
      expect(cursor <= watermark!.ticks).toBe(true);
      const upTo = catalog.commits.filter((commit) => parseTimestamp(commit.timestamp) <= cursor);
      const expected = expectedView('', upTo, new Map());
      const stored = new Map<string, unknown>();
      for await (const key of target.store.listKeys('packages/'))
        stored.set(key, JSON.parse((await target.store.getBytes(key))!.toString('utf8')));
      expect(stored).toEqual(
        new Map([...expected.values()].map((index) => [packageIndexKey('', (index as { id: string }).id), index])),
      );
      return upTo.length;
    }

    // A follower mirrors the first commits; the view follows them.
    const settings = settingsOf(replica.serviceIndexUrl);
    const first = await withDeps(mirrorTarget, settingsOf(replica.serviceIndexUrl, { MAX_COMMITS: '8' }), (deps) =>
      runSlice(settingsOf(replica.serviceIndexUrl, { MAX_COMMITS: '8' }), deps),
    );
    expect(first.commits).toBe(8);
    await view();
    expect(await observe()).toBe(8);

    // The backfill of the rest: its ranges in shuffled order, a view run at the same time as every other one.
    const { plan, ranges } = await withDeps(mirrorTarget, settings, (deps) =>
      planBackfill(settings, deps, { rangeLeaves: 6 }),
    );
    expect(ranges.length).toBeGreaterThan(4);
    for (const [i, range] of mulberry32(11)
      .shuffle([...ranges])
      .entries()) {
      const backfill = withDeps(mirrorTarget, settings, (deps) => runRange(settings, deps, range));
      if (i % 2 === 0) await Promise.all([backfill, view()]);
      else await backfill;
      await view();
      // The watermark has not moved: the view is where the follower left it, whatever the ranges stored.
      expect(await observe()).toBe(8);
    }
    await withDeps(mirrorTarget, settings, (deps) => finishBackfill(settings, deps, plan.backfillId));
    expect((await readWatermark(target.mirror))?.cursor).toBe(
      formatTimestamp(parseTimestamp(catalog.commits.at(-1)!.timestamp)),
    );
    const last = await view();
    expect(last.commits).toBe(catalog.commits.length - 8);
    expect(await observe()).toBe(catalog.commits.length);

    expect(writes.length).toBeGreaterThan(0);
    for (const write of writes) {
      expect(write.watermark).toBeDefined();
      expect(write.commitKey <= write.watermark!).toBe(true);
    }
    // Writes happened both before the backfill's watermark and after it: the check covered both sides.
    expect(writes.some((write) => write.commitKey <= commitKeyOf(catalog.commits[7]!.timestamp))).toBe(true);
    expect(writes.some((write) => write.commitKey > commitKeyOf(catalog.commits[7]!.timestamp))).toBe(true);
  }, 120_000);
});
