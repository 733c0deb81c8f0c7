/**
 * A named consumer as a Lambda function (`import { consumerHandler } from 'catalog-sync/consumer/lambda'`), the
 * function the `CatalogConsumer` construct deploys: each invocation, whatever woke it (a batch of `commits/`
 * events from its SQS queue, the backstop schedule, a manual invoke), runs the consumer from its cursor to the
 * watermark within the invocation's time, then returns. Events are a wake-up, never the data: the watermark and
 * the manifests are read again each time.
 *
 * One invocation at a time (the construct reserves a concurrency of 1), and the cursor's conditional writes make
 * even an overlap safe. A handler failure leaves the cursor on the commit before it and is counted in
 * `ConsumerFailures`: a consumer stuck on one commit fails every invocation, which the construct's alarm watches.
 * A scheduled invocation then throws (the failure lands in the dead-letter queue, naming the commit); an SQS
 * wake-up does not (its messages are only a wake-up, and would otherwise pile into the queue's dead letters).
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import {
  consumeAs,
  consumeBatches,
  type BatchHandler,
  type BatchSize,
  type CommitHandler,
  type ConsumeResult,
} from './consume.js';
import { id as newId } from '../ids/kuuid.js';
import { ConsumerHandlerError } from './errors.js';
import { consumerLag } from './lag.js';
import { readConsumerCursor } from './consumer-cursors.js';
import type { Mirror } from './mirror.js';
import { awsClients, DynamoStore, S3SnapshotStore } from '../stores/index.js';
import { safetyMarginMs } from '../runtime/deadline.js';
import { consumerLambdaSettings, type ConsumerLambdaSettings } from '../runtime/lambda-settings.js';
import { lambdaLogger, lambdaMetrics } from '../runtime/powertools.js';
import { deferWasmTierUp } from '../runtime/wasm-tiering.js';

/** The function's settings: read by the runtime kit, and `catalog-sync/consumer/lambda` still gives them. */
export { consumerLambdaSettings, type ConsumerLambdaSettings } from '../runtime/lambda-settings.js';

/** What woke an invocation. */
export type Wake = 'sqs' | 'schedule' | 'direct';

/** What one invocation did: the consume result (or the commit the handler failed on), its lag afterwards, and what woke it. */
export interface ConsumerRun extends Omit<ConsumeResult, 'stoppedBy' | 'runId' | 'checkpoints'> {
  /** Conditional writes that moved the cursor (not counted when the handler failed). */
  readonly checkpoints?: number;
  readonly wake: Wake;
  readonly stoppedBy: ConsumeResult['stoppedBy'] | 'handler-failed';
  /** The commit the handler failed on (`handler-failed`): the cursor stays on the commit before it. */
  readonly failedCommitKey?: string;
  /** Seconds of commit time between the consumer's cursor and the watermark afterwards. */
  readonly lagSeconds: number | null;
}

/** What an invocation runs with: given to `beforeRun`. @internal */
export interface InvocationDeps {
  readonly settings: ConsumerLambdaSettings;
  readonly mirror: Mirror;
  readonly cursors: DynamoStore;
  readonly metrics: Metrics;
  readonly logger: Logger;
}

/** How an invocation ended: given to `afterRun`. @internal */
export interface InvocationEnd extends InvocationDeps {
  /** What it returns; undefined when it throws. */
  readonly run: ConsumerRun | undefined;
  readonly context: Pick<Context, 'getRemainingTimeInMillis'>;
}

function wakeOf(event: unknown): Wake {
  const records = (event as { Records?: { eventSource?: string }[] } | undefined)?.Records;
  if (Array.isArray(records) && records.some((record) => record?.eventSource === 'aws:sqs')) return 'sqs';
  if ((event as { source?: string } | undefined)?.source === 'aws.events') return 'schedule';
  return 'direct';
}

/**
 * The Lambda handler of a named consumer: `export const handler = consumerHandler(async (commit, context) => …)`.
 * `handleCommit` gets each commit in order, at least once, with `context.idempotencyKey` (the commit key).
 */
export function consumerHandler(
  handleCommit: CommitHandler,
  env: NodeJS.ProcessEnv = process.env,
): (event: unknown, context: Pick<Context, 'getRemainingTimeInMillis'>) => Promise<ConsumerRun> {
  return batchConsumerHandler((commits, context) => handleCommit(commits[0]!, context), 1, env);
}

/**
 * {@link consumerHandler} for a handler of `batchSize` consecutive commits at a time (`consumeBatches`): the latest
 * view's, which writes each package once a batch.
 */
export function batchConsumerHandler(
  handleBatch: BatchHandler,
  batchSize: BatchSize,
  env: NodeJS.ProcessEnv = process.env,
  /** @internal catalog-sync's own consumers (the latest view) run under a built-in name. */
  internal: {
    readonly builtIn?: boolean;
    /** @internal Runs at each invocation before the commits are read (the latest view: is it stale?); a throw fails it. */
    readonly beforeRun?: (run: InvocationDeps) => Promise<void>;
    /**
     * @internal Runs at each invocation that read its cursor, once its commits are done or failed and before its
     * metrics are published, so that what it adds is in this invocation's (the feed: its retries and its counts); a
     * throw fails the invocation, the metrics published still.
     */
    readonly afterRun?: (end: InvocationEnd) => Promise<void>;
  } = {},
): (event: unknown, context: Pick<Context, 'getRemainingTimeInMillis'>) => Promise<ConsumerRun> {
  const consumeUnder = internal.builtIn === true ? consumeAs : consumeBatches;
  // A Lambda's process: its first invocation should not pay for compiling undici's HTTP parser twice.
  deferWasmTierUp();
  let warm:
    | {
        settings: ConsumerLambdaSettings;
        cursors: DynamoStore;
        snapshots: S3SnapshotStore;
        metrics: Metrics;
        logger: Logger;
      }
    | undefined;
  return async (event, context) => {
    if (warm === undefined) {
      const settings = consumerLambdaSettings(env);
      const clients = awsClients(env, 64);
      const service = `catalog-sync-consumer-${settings.consumerName}`;
      warm = {
        settings,
        cursors: new DynamoStore(settings.table, clients.dynamo),
        snapshots: new S3SnapshotStore(settings.bucket, clients.s3),
        metrics: lambdaMetrics(env, service),
        logger: lambdaLogger(env, service),
      };
    }
    const { settings, cursors, snapshots, metrics, logger } = warm;
    const wake = wakeOf(event);
    const mirror = { store: snapshots, prefix: settings.prefix, where: `s3://${settings.bucket}/${settings.prefix}` };
    const remaining = context.getRemainingTimeInMillis();
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(), Math.max(0, remaining - safetyMarginMs(remaining)));
    let commits = 0;
    const runId = newId();
    const before = (await readConsumerCursor(cursors, mirror, settings.consumerName))?.stored ?? null;
    let ended: ConsumerRun | undefined;
    try {
      await internal.beforeRun?.({ settings, mirror, cursors, metrics, logger });
      const result = await consumeUnder(
        settings.consumerName,
        async (batch, consumeContext) => {
          await handleBatch(batch, consumeContext);
          commits += batch.length;
        },
        {
          batchSize,
          mirror,
          cursors,
          dependsOn: settings.dependsOn,
          checkpointEvery: settings.checkpointEvery,
          followerCursor: settings.followerCursor,
          signal: stop.signal,
          runId,
          // Deployed with its sync, on the sync's own bucket and prefix: before the follower's first run, nothing to read yet.
          awaitMirror: true,
          // One invocation at a time (a reserved concurrency of 1): no lease to keep, renew or give back.
          lease: false,
        },
      );
      const { lagSeconds } = await consumerLag(mirror, cursors, settings.consumerName);
      const { runId: _runId, ...done } = result;
      const run: ConsumerRun = { ...done, wake, lagSeconds };
      record(metrics, commits, lagSeconds, 0);
      logger.info('consumer run', { runId, ...run });
      ended = run;
      return run;
    } catch (error) {
      const lag = await consumerLag(mirror, cursors, settings.consumerName).catch(() => ({
        lagSeconds: null,
        cursor: null,
      }));
      record(metrics, commits, lag.lagSeconds, 1);
      const failedCommitKey = error instanceof ConsumerHandlerError ? error.commitKey : undefined;
      logger.error('consumer run failed', {
        runId,
        wake,
        error: (error as Error).message,
        ...(failedCommitKey ? { commitKey: failedCommitKey } : {}),
      });
      if (wake !== 'sqs' || failedCommitKey === undefined) throw error;
      ended = {
        consumer: settings.consumerName,
        wake,
        cursorBefore: before,
        cursorAfter: lag.cursor,
        commits,
        stoppedBy: 'handler-failed',
        failedCommitKey,
        lagSeconds: lag.lagSeconds,
      };
      return ended;
    } finally {
      clearTimeout(timer);
      try {
        await internal.afterRun?.({ settings, mirror, cursors, metrics, logger, run: ended, context });
      } finally {
        metrics.publishStoredMetrics();
      }
    }
  };
}

function record(metrics: Metrics, commits: number, lagSeconds: number | null, failures: number): void {
  metrics.addMetric('ConsumerCommits', MetricUnit.Count, commits);
  metrics.addMetric('ConsumerFailures', MetricUnit.Count, failures);
  if (lagSeconds !== null) metrics.addMetric('ConsumerLagSeconds', MetricUnit.Seconds, lagSeconds);
}
