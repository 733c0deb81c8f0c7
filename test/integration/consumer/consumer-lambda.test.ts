/**
 * The consumer's Lambda handler (`catalog-sync/consumer/lambda`, what `CatalogConsumer` deploys), driven the way its
 * SQS wake-up queue and its backstop schedule drive it, on s3rver + DynamoDB Local: each invocation runs the
 * consumer from its cursor to the watermark, whatever woke it, and writes one EMF record (commits, lag, failures).
 * A handler failure is counted; a scheduled invocation then throws (to the dead-letter queue), an SQS wake-up does not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumerHandler } from '../../../lambda/consumer/lambda.js';
import { awsConsumerStores, consume, consumerKey, readCommits } from '../../../lambda/consumer/index.js';
import { consumerCursorKey, mirrorKeyOf } from '../../../lambda/contract/consumer-keys.js';
import { commitKeyOf } from '../../../lambda/contract/keys.js';
import { formatTimestamp } from '../../../lambda/contract/time.js';
import { generateCatalog, type GeneratedCatalog } from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { commitTicks, SyncHarness } from '../../../testkit/sync-harness.js';
import { captureEmf as capture } from '../emf-kit.js';

let catalog: GeneratedCatalog;
let replica: CatalogReplica;
let harness: SyncHarness;
const saved = { ...process.env };

beforeAll(async () => {
  catalog = generateCatalog({ commits: 30, seed: 3030, leavesPerCommit: [1, 3] });
  replica = await CatalogReplica.start({ catalog, pageSize: 8 });
  harness = await SyncHarness.create();
  expect(await harness.run(replica.serviceIndexUrl, { MAX_COMMITS: '20' })).toMatchObject({ commits: 20 });
  // The SDK reads its endpoints from the process's environment, as on Lambda.
  Object.assign(process.env, harness.env());
});
afterAll(async () => {
  for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
  Object.assign(process.env, saved);
  await replica.stop();
});

const sqsEvent = {
  Records: [{ eventSource: 'aws:sqs', messageId: 'm1', body: JSON.stringify({ 'detail-type': 'Object Created' }) }],
};
const scheduleEvent = { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} };
const context = { getRemainingTimeInMillis: () => 300_000 };

describe('consumerHandler', () => {
  it('an SQS wake-up runs to the watermark; a scheduled one later takes what the follower added since', async () => {
    const seen: string[] = [];
    const handler = consumerHandler(async (_commit, ctx) => void seen.push(ctx.idempotencyKey), {
      ...process.env,
      CONSUMER_NAME: 'lambda-indexer',
      CHECKPOINT_EVERY: '4',
    });
    const first = await capture(() => handler(sqsEvent, context));
    expect(first.error).toBeUndefined();
    expect(first.result).toMatchObject({
      wake: 'sqs',
      consumer: 'lambda-indexer',
      commits: 20,
      stoppedBy: 'caught-up',
      lagSeconds: 0,
      cursorAfter: formatTimestamp(commitTicks(catalog, 19)),
    });
    expect(first.emf).toHaveLength(1);
    expect(first.emf[0]).toMatchObject({
      ConsumerCommits: 20,
      ConsumerFailures: 0,
      ConsumerLagSeconds: 0,
      service: 'catalog-sync-consumer-lambda-indexer',
    });

    expect(await harness.run(replica.serviceIndexUrl)).toMatchObject({ commits: 10, caughtUp: true });
    const second = await capture(() => handler(scheduleEvent, context));
    expect(second.result).toMatchObject({
      wake: 'schedule',
      commits: 10,
      cursorBefore: formatTimestamp(commitTicks(catalog, 19)),
      cursorAfter: formatTimestamp(commitTicks(catalog, -1)),
    });
    expect(seen).toEqual(catalog.commits.map((commit) => commitKeyOf(commit.timestamp)));
    const idle = await capture(() => handler(sqsEvent, context));
    expect(idle.result).toMatchObject({ commits: 0, stoppedBy: 'caught-up' });
  });

  it("deployed before the follower's first run (its bucket still empty): reads nothing and does not fail", async () => {
    const fresh = await SyncHarness.create();
    try {
      const handler = consumerHandler(async () => undefined, {
        ...process.env,
        ...fresh.env(),
        CONSUMER_NAME: 'early',
      });
      const run = await capture(() => handler(scheduleEvent, context));
      expect(run.error).toBeUndefined();
      expect(run.result).toMatchObject({ commits: 0, stoppedBy: 'caught-up', cursorAfter: null });
    } finally {
      fresh.clients.dynamo.destroy();
      fresh.clients.s3.destroy();
    }
  });

  it('counts a failing commit; the schedule throws, an SQS wake-up returns; the cursor stays before the commit', async () => {
    const failOn = commitKeyOf(catalog.commits[12]!.timestamp);
    const handler = consumerHandler(
      async (commit) => {
        if (commit.commitKey === failOn) throw new Error('search index is down');
      },
      { ...process.env, CONSUMER_NAME: 'lambda-stuck' },
    );
    const woken = await capture(() => handler(sqsEvent, context));
    expect(woken.result).toMatchObject({
      wake: 'sqs',
      stoppedBy: 'handler-failed',
      failedCommitKey: failOn,
      commits: 12,
      cursorAfter: formatTimestamp(commitTicks(catalog, 11)),
    });
    expect(woken.emf[0]).toMatchObject({ ConsumerFailures: 1, ConsumerCommits: 12 });
    const scheduled = await capture(() => handler(scheduleEvent, context));
    expect(scheduled.error).toMatchObject({
      code: 'CS_ERR_CONSUMER_HANDLER',
      commitKey: failOn,
      message: expect.stringContaining('search index is down'),
    });
    expect(scheduled.emf[0]).toMatchObject({ ConsumerFailures: 1, ConsumerCommits: 0 });
    expect(await harness.cursor(consumerCursorKey(mirrorKeyOf(`s3://${harness.bucket}`, ''), 'lambda-stuck'))).toBe(
      formatTimestamp(commitTicks(catalog, 11)),
    );
  });

  it("awsConsumerStores reads the same mirror from the environment's endpoint; without a cursor table, consume says what is missing", async () => {
    const stores = awsConsumerStores({ bucket: harness.bucket, cursorTable: harness.table });
    const plain = awsConsumerStores({ bucket: harness.bucket });
    try {
      const keys: string[] = [];
      for await (const commit of readCommits(stores.mirror)) keys.push(commit.commitKey);
      expect(keys).toEqual(catalog.commits.map((commit) => commitKeyOf(commit.timestamp)));
      expect((await stores.cursors.read(consumerKey(stores.mirror, 'lambda-indexer')))?.stored).toBe(
        formatTimestamp(commitTicks(catalog, -1)),
      );
      await expect(consume('nowhere', () => undefined, plain)).rejects.toMatchObject({
        code: 'CS_ERR_CONSUMER',
        message: expect.stringContaining('no cursorTable'),
      });
    } finally {
      stores.close();
      plain.close();
    }
  });

  it('names a missing or bad setting', async () => {
    const env = { ...process.env };
    delete env.CONSUMER_NAME;
    await expect(consumerHandler(() => undefined, env)(scheduleEvent, context)).rejects.toThrow(
      /CONSUMER_NAME.*is required/,
    );
    await expect(
      consumerHandler(() => undefined, { ...env, CONSUMER_NAME: 'x', CHECKPOINT_EVERY: 'often' })(
        scheduleEvent,
        context,
      ),
    ).rejects.toThrow(/CHECKPOINT_EVERY/);
  });
});
