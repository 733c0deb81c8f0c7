/**
 * A retried conditional write that had succeeded is not a lost race (issue 30, item 4). DynamoDB applies a cursor
 * write whose answer never reaches the client (here a front drops it); the client's request timeout fires, the
 * SDK retries, and the retry's condition fails against the value our own first attempt stored. The stores
 * recognise their own write (same value, same run id) and report it written: the follower goes on and writes
 * its watermark, the backfill's range progress and a named consumer's checkpoint are written, not lost.
 * The folder stores do the same when a write is repeated.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpoint } from '../../lambda/consumer/checkpoint.js';
import { watermarkKeyOf } from '../../lambda/contract/keys.js';
import { formatTimestamp } from '../../lambda/contract/time.js';
import { DynamoStore } from '../../lambda/stores/dynamo-store.js';
import { LocalStore } from '../../lambda/stores/local-store.js';
import { sdkRequestHandler } from '../../lambda/stores/proxy-agents.js';
import { generateCatalog, type GeneratedCatalog } from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { DynamoAnswerDrop } from '../../testkit/dynamo-answer-drop.js';
import { testServices } from '../../testkit/env.js';
import { commitTicks, SyncHarness } from '../../testkit/sync-harness.js';

const ZERO = { commits: 0, leaves: 0, deletes: 0, quarantined: 0, bytes: 0 };

let catalog: GeneratedCatalog;
let replica: CatalogReplica;
let front: DynamoAnswerDrop;

/** A DynamoDB client through the front, its handler as the Lambda's (aws-clients.ts) but a 1 s request timeout (10 s there). */
function droppingClient(): DynamoDBClient {
  return new DynamoDBClient({
    endpoint: front.url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'fake', secretAccessKey: 'fake' },
    maxAttempts: 3,
    requestHandler: sdkRequestHandler({}, { connectionTimeout: 1_000, requestTimeout: 1_000 }),
  });
}

/** An UpdateItem on `sk` (the cursor item, a range item). */
const updateOf =
  (sk: string) =>
  (body: string): boolean =>
    body.includes('"UpdateExpression"') && body.includes(`"sk":{"S":"${sk}"}`);

beforeAll(async () => {
  catalog = generateCatalog({ commits: 3, seed: 3004, leavesPerCommit: [1, 2] });
  replica = await CatalogReplica.start({ catalog, pageSize: 10 });
  front = await DynamoAnswerDrop.start(testServices().dynamoEndpoint);
});
afterAll(async () => {
  await front.stop();
  await replica.stop();
});

/**
 * Runs `act` with a DynamoStore whose client goes through the front, the next UpdateItem on `sk` losing its answer,
 * and checks that exactly that one answer was dropped.
 */
async function withLostAnswer(
  sk: string,
  act: (store: DynamoStore, harness: SyncHarness) => Promise<void>,
): Promise<void> {
  const harness = await SyncHarness.create();
  const client = droppingClient();
  const dropped = front.dropped;
  try {
    front.dropNext(updateOf(sk));
    await act(new DynamoStore(harness.table, client), harness);
    expect(front.dropped).toBe(dropped + 1);
  } finally {
    client.destroy();
  }
}

describe('DynamoDB: the answer of an applied cursor write is lost, the SDK retries', () => {
  it('the follower takes its own write as written: caught up, not lost-race, and its watermark written', () =>
    withLostAnswer('cursor', async (cursors, harness) => {
      const summary = await harness.run(
        replica.serviceIndexUrl,
        {},
        { cursors, runLog: cursors, watermarkIntervalMs: 60_000 },
      );
      const head = formatTimestamp(commitTicks(catalog, 2));
      expect(summary).toMatchObject({ stoppedBy: 'caught-up', caughtUp: true, cursorAfter: head });
      expect(await harness.cursor()).toBe(head);
      expect(((await harness.snapshots.getJson(watermarkKeyOf(''))) as { cursor: string }).cursor).toBe(head);
    }));

  it("a backfill range's progress write is written", () =>
    withLostAnswer('backfill#b1#range#0', async (store, harness) => {
      const progress = {
        progress: formatTimestamp(commitTicks(catalog, 0)),
        progressCommitId: 'c0',
        totals: ZERO,
        runId: 'run-a',
      };
      expect(await store.advanceRange('c', 'b1', 0, undefined, progress)).toEqual({ outcome: 'written' });
      // Another run's write of the same progress is still a conflict.
      expect(await harness.store.advanceRange('c', 'b1', 0, undefined, { ...progress, runId: 'run-b' })).toMatchObject({
        outcome: 'conflict',
      });
    }));

  it("a named consumer's checkpoint is written, not lost-race", () =>
    withLostAnswer('cursor', async (store, harness) => {
      const target = { value: commitTicks(catalog, 1), commitId: 'c1', runId: 'consumer-run' };
      expect(await checkpoint(store, 'my-consumer', undefined, target)).toMatchObject({ outcome: 'written' });
      expect((await harness.store.read('my-consumer'))?.runId).toBe('consumer-run');
    }));
});

describe('the folder: a write repeated after it was stored', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'catalog-sync-own-write-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the cursor: written again by the same run, a conflict for another run', async () => {
    const store = new LocalStore(join(dir, 'cursor'));
    const next = { value: commitTicks(catalog, 0), commitId: 'c0', runId: 'run-a' };
    expect(await store.compareAndSet('c', undefined, next)).toEqual({ outcome: 'written' });
    expect(await store.compareAndSet('c', undefined, next)).toEqual({ outcome: 'written' });
    expect(await store.compareAndSet('c', undefined, { ...next, runId: 'run-b' })).toMatchObject({
      outcome: 'conflict',
    });
  });

  it("a range's progress: written again by the same run, a conflict for another run", async () => {
    const store = new LocalStore(join(dir, 'range'));
    const progress = {
      progress: formatTimestamp(commitTicks(catalog, 0)),
      progressCommitId: 'c0',
      totals: ZERO,
      runId: 'run-a',
    };
    expect(await store.advanceRange('c', 'b1', 0, undefined, progress)).toEqual({ outcome: 'written' });
    expect(await store.advanceRange('c', 'b1', 0, undefined, progress)).toEqual({ outcome: 'written' });
    expect(await store.advanceRange('c', 'b1', 0, undefined, { ...progress, runId: 'run-b' })).toMatchObject({
      outcome: 'conflict',
    });
  });
});
