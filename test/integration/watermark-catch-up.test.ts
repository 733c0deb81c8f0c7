/**
 * `watermark.json` always catches up, never goes back, never holds a stop (issue 30, item 1):
 * - a watermark left behind the cursor (a kill between the last checkpoint and the closing PUT, a failed closing
 *   PUT) is brought up to the stored cursor by the next run, even one that takes nothing;
 * - two writers of one prefix never put an older watermark back: the write is conditional on what was read
 *   (S3 `If-Match` / `If-None-Match: *` on s3rver, whose patch honours them; the folder's state lock);
 * - with S3 gone silent, the writes after a stop end within the closing window: the run returns `time-budget`,
 *   not `error`, and the watermark (which may lag) is left for the next run.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitKey, manifestKey, watermarkKeyOf } from '../../lambda/contract/keys.js';
import { formatTimestamp } from '../../lambda/contract/time.js';
import { LocalStore } from '../../lambda/stores/local-store.js';
import { S3SnapshotStore } from '../../lambda/stores/s3-store.js';
import type { SnapshotStore } from '../../lambda/stores/types.js';
import { watermarkOf } from '../../lambda/sync/layout.js';
import { writeWatermarkForward } from '../../lambda/sync/watermark.js';
import { generateCatalog, type GeneratedCatalog } from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { testServices } from '../../testkit/env.js';
import { S3FaultFront } from '../../testkit/s3-fault-front.js';
import { commitTicks, SyncHarness } from '../../testkit/sync-harness.js';

const KEY = watermarkKeyOf('');

let catalog: GeneratedCatalog;
let replica: CatalogReplica;
let dir: string;

beforeAll(async () => {
  catalog = generateCatalog({ commits: 6, seed: 3001, leavesPerCommit: [1, 3] });
  replica = await CatalogReplica.start({ catalog, pageSize: 10 });
  dir = mkdtempSync(join(tmpdir(), 'catalog-sync-watermark-'));
});
afterAll(async () => {
  await replica.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The cursor `watermark.json` names. */
async function watermarkCursor(snapshots: SnapshotStore): Promise<string | undefined> {
  return ((await snapshots.getJson(KEY)) as { cursor?: string } | undefined)?.cursor;
}

const subjects: {
  name: string;
  open: (harness: SyncHarness, n: number) => { cursors?: LocalStore; snapshots: SnapshotStore; runLog?: LocalStore };
}[] = [
  { name: 'S3 + DynamoDB', open: (harness) => ({ snapshots: harness.snapshots }) },
  {
    name: 'a folder',
    open: (_harness, n) => {
      const store = new LocalStore(join(dir, `folder-${n}`));
      return { cursors: store, snapshots: store, runLog: store };
    },
  },
];

describe.each(subjects.map((subject, n) => [subject.name, subject, n] as const))('%s', (_name, subject, n) => {
  it('a run that takes nothing brings a watermark left behind up to the stored cursor', async () => {
    const harness = await SyncHarness.create();
    const stores = subject.open(harness, n);
    const head = formatTimestamp(commitTicks(catalog, 5));
    expect(await harness.run(replica.serviceIndexUrl, {}, stores)).toMatchObject({
      stoppedBy: 'caught-up',
      cursorAfter: head,
    });
    // As a run killed before its closing PUT leaves it: three commits behind.
    const behind = commitTicks(catalog, 2);
    await stores.snapshots.putJson(KEY, watermarkOf(behind, catalog.commits[2]!.commitId));
    const again = await harness.run(replica.serviceIndexUrl, {}, stores);
    expect(again).toMatchObject({ stoppedBy: 'caught-up', commits: 0, cursorBefore: head, cursorAfter: head });
    expect(await stores.snapshots.getJson(KEY)).toMatchObject({ cursor: head, commitId: catalog.commits[5]!.commitId });
  });

  it("two writers: A reads 1, B writes 4, A's write of 2 is refused and A finds 4: the watermark never goes back", async () => {
    const harness = await SyncHarness.create();
    const inner = subject.open(harness, n + 10).snapshots;
    await inner.putJson(KEY, watermarkOf(commitTicks(catalog, 1), catalog.commits[1]!.commitId));
    // A is held between its read and its conditional write while B writes.
    let readByA!: () => void;
    const aRead = new Promise<void>((resolve) => (readByA = resolve));
    let letAGo!: () => void;
    const aMayWrite = new Promise<void>((resolve) => (letAGo = resolve));
    const attempts: string[] = [];
    const a = Object.create(inner) as SnapshotStore;
    a.putJsonIf = async (key, value, expected, options) => {
      attempts.push((value as { cursor: string }).cursor);
      readByA();
      await aMayWrite;
      return inner.putJsonIf(key, value, expected, options);
    };
    const writingA = writeWatermarkForward(a, KEY, { value: commitTicks(catalog, 2) });
    await aRead;
    expect(await writeWatermarkForward(inner, KEY, { value: commitTicks(catalog, 4) })).toBe(true);
    letAGo();
    expect(await writingA).toBe(false);
    // One attempt, refused; A read again, found 4 and wrote nothing more.
    expect(attempts).toEqual([formatTimestamp(commitTicks(catalog, 2))]);
    expect(await watermarkCursor(inner)).toBe(formatTimestamp(commitTicks(catalog, 4)));
  });
});

describe('S3 through the fault front', () => {
  let front: S3FaultFront;
  beforeAll(async () => {
    front = await S3FaultFront.start(testServices().s3Endpoint);
  });
  afterAll(() => front.stop());
  const frontClient = (): S3Client =>
    new S3Client({
      endpoint: front.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      forcePathStyle: true,
      maxAttempts: 5,
    });

  it('a server without conditional writes (501 NotImplemented to If-None-Match) still gets the watermark, written without the condition', async () => {
    const harness = await SyncHarness.create();
    front.fault({
      match: (seen) => seen.method === 'PUT' && seen.headers['if-none-match'] !== undefined,
      fault: { kind: 'answer', status: 501, code: 'NotImplemented' },
    });
    const client = frontClient();
    try {
      expect(
        await writeWatermarkForward(new S3SnapshotStore(harness.bucket, client), KEY, {
          value: commitTicks(catalog, 3),
        }),
      ).toBe(true);
      expect(await watermarkCursor(harness.snapshots)).toBe(formatTimestamp(commitTicks(catalog, 3)));
    } finally {
      front.reset();
      client.destroy();
    }
  });

  it("with a 2 s budget the run ends time-budget, not error: the watermark's read and write, and the listing of the commits behind the cursor, are aborted within the closing window", {
    timeout: 30_000,
  }, async () => {
    const harness = await SyncHarness.create();
    const client = frontClient();
    const snapshots = new S3SnapshotStore(harness.bucket, client);
    try {
      // A first run stores two commits: the second one's page spans its cursor, so the next run lists commits/ behind it.
      expect(await harness.run(replica.serviceIndexUrl, { MAX_COMMITS: '2' }, { snapshots })).toMatchObject({
        commits: 2,
      });
      // Once the third commit's manifest is stored, no request gets an answer: leaves, manifests, the watermark's GET
      // and PUT, the listing of commits/.
      const thirdManifest = `/${harness.bucket}/${manifestKey('', commitKey(commitTicks(catalog, 2)))}`;
      let silent = false;
      front.fault({
        match: (seen) => {
          if (silent) return true;
          if (seen.method === 'PUT' && seen.url.startsWith(thirdManifest)) silent = true;
          return false;
        },
        fault: { kind: 'hang' },
      });
      // The closing writes end 5 s past the deadline (CLOSING_MS; the Lambda passes its own end). One leaf at a time,
      // so the commits complete in order: with leaves in parallel, a busy machine could store the later commits
      // before the third one's manifest, and the cursor would pass it before the silence.
      const summary = await harness.run(
        replica.serviceIndexUrl,
        { CONCURRENCY: '1' },
        { snapshots, deadline: Date.now() + 2_000 },
      );
      expect(summary).toMatchObject({
        stoppedBy: 'time-budget',
        cursorAfter: formatTimestamp(commitTicks(catalog, 2)),
      });
      expect(summary.error).toBeUndefined();
      // The watermark lags (by contract), never leads: the next run catches it up.
      const watermark = await watermarkCursor(harness.snapshots);
      expect(watermark === undefined || watermark <= summary.cursorAfter).toBe(true);
      const held = (path: string) =>
        front.seen.filter((seen) => seen.url.startsWith(`/${harness.bucket}${path}`)).length;
      expect(held('/watermark.json')).toBeGreaterThan(0);
      expect(held('/?list-type=2')).toBeGreaterThan(0);
      await front.whenAbandoned(front.hangs.held);
    } finally {
      front.reset();
      client.destroy();
    }
  });
});
