import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { CatalogClient, HttpClient } from '../catalog/index.js';
import {
  leafMemoryBudget,
  parseTimestamp,
  processMemory,
  StoppedBy,
  type RunSummary,
  type SyncSettings,
  type Ticks,
} from '../contract/index.js';
import { id as newId } from '../ids/kuuid.js';
import { awsClients, DynamoStore, S3SnapshotStore } from '../stores/index.js';
import { lagSeconds, LeafMemory, runSlice, SyncError } from './index.js';
import { checkLambdaIdFilter } from './id-filter-check.js';
import { sourceSecretId, sourceSecrets } from '../runtime/source-secret.js';
import { deadlineOf } from '../runtime/deadline.js';
import { lambdaSettings } from '../runtime/lambda-settings.js';
import { engineLogger, lambdaLogger, lambdaMetrics } from '../runtime/powertools.js';
import { addWorkMetrics } from '../runtime/work-metrics.js';
import { deferWasmTierUp } from '../runtime/wasm-tiering.js';

const logger = lambdaLogger(process.env, 'catalog-sync');
const metrics = lambdaMetrics(process.env, 'catalog-sync');

/** Everything a warm Lambda keeps between invocations: the HTTP pool, the SDK clients, the cached index. */
interface Warm {
  readonly key: string;
  readonly settings: SyncSettings;
  readonly table: string;
  readonly catalog: CatalogClient;
  readonly store: DynamoStore;
  readonly snapshots: S3SnapshotStore;
  readonly runLogDays: number;
  /** The budget for leaf bodies in flight: a quarter of the function's memory (contract/leaf-memory.ts). */
  readonly leafMemory: LeafMemory;
}
let warm: Warm | undefined;

/**
 * The container's clients and settings, and, once per container and settings, the id filter check: the filter must
 * be the mirror's (a change is made once from the CLI). The check is handed back unfinished, for the engine to await
 * while its own first reads are in flight (the filter record's GET would otherwise come before them, one more round
 * trip on every cold start). When the store does not answer, the run goes on to meet that failure as a run (summary,
 * metrics), and the check is made again next time.
 */
async function warmUp(env: NodeJS.ProcessEnv): Promise<{ ready: Warm; admission?: Promise<unknown> }> {
  const key = JSON.stringify(env, Object.keys(env).sort());
  if (warm?.key === key) return { ready: warm };
  // A cold container's first invocation should not pay for compiling undici's HTTP parser twice.
  deferWasmTierUp();
  const secretId = sourceSecretId(env);
  const credentials = secretId === undefined ? undefined : await sourceSecrets.read(secretId);
  const { settings, table, bucket, runLogDays } = lambdaSettings(env, credentials);
  const clients = awsClients(env, settings.concurrency);
  const http = new HttpClient({ connections: settings.concurrency });
  const store = new DynamoStore(table, clients.dynamo);
  const snapshots = new S3SnapshotStore(bucket, clients.s3);
  const leafMemory = new LeafMemory(leafMemoryBudget(env, processMemory()));
  const ready: Warm = {
    key,
    settings,
    table,
    catalog: new CatalogClient(http, settings.source, settings.allowedOrigins),
    store,
    snapshots,
    runLogDays,
    leafMemory,
  };
  const admission = checkLambdaIdFilter(snapshots, store, settings, (message, error) =>
    logger.warn(message, { error: error.message }),
  ).then((checked) => {
    if (checked) warm = ready;
  });
  // Awaited by the engine; until then a refusal is not an unhandled rejection.
  admission.catch(() => undefined);
  return { ready, admission };
}

/** Kept back from the function's end after its closing writes: the metrics are flushed and the result returned. */
export const CLOSE_BEFORE_END_MS = 1_000;

/**
 * Runs one bounded slice of the catalog and returns its summary. Throws when the run stopped on an error
 * (after checkpointing what it completed), so the invocation counts as failed and alarms fire.
 */
export const handler = async (
  _event: unknown,
  context: Pick<Context, 'getRemainingTimeInMillis'>,
): Promise<RunSummary> => {
  const runId = newId();
  logger.appendKeys({ runId });
  let head: Ticks | undefined;
  try {
    const { ready, admission } = await warmUp(process.env);
    const { settings, catalog, store, snapshots, runLogDays, leafMemory } = ready;
    logger.appendKeys({ cursorName: settings.cursorName });
    const remaining = context.getRemainingTimeInMillis();
    const summary = await runSlice(settings, {
      catalog,
      cursors: store,
      snapshots,
      runLog: store,
      backfills: store,
      runLogDays,
      runId,
      leafMemory,
      ...(admission === undefined ? {} : { admission }),
      logger: engineLogger(logger),
      // The engine turns it into the signal that aborts every request in flight when it passes.
      deadline: deadlineOf(remaining),
      // And the writes after the stop (checkpoints, watermark, run log) end before the function does.
      closeBy: Date.now() + remaining - CLOSE_BEFORE_END_MS,
      onIndex: (ticks) => {
        head = ticks;
      },
    });
    record(summary, head);
    return summary;
  } catch (error) {
    if (error instanceof SyncError) record(error.summary, head);
    else logger.error('run could not start', { error: (error as Error).message });
    throw error;
  } finally {
    metrics.publishStoredMetrics();
    logger.resetKeys();
  }
};

function record(summary: RunSummary, head: Ticks | undefined): void {
  addWorkMetrics(metrics, summary);
  metrics.addMetric('RunSucceeded', MetricUnit.Count, summary.stoppedBy === StoppedBy.error ? 0 : 1);
  metrics.addMetric('RunFailed', MetricUnit.Count, summary.stoppedBy === StoppedBy.error ? 1 : 0);
  metrics.addMetric('PutRetries', MetricUnit.Count, summary.putRetries);
  if (head !== undefined) {
    metrics.addMetric('CursorLagSeconds', MetricUnit.Seconds, lagSeconds(head, parseTimestamp(summary.cursorAfter)));
  }
  metrics.addMetadata('stoppedBy', summary.stoppedBy);
  metrics.addMetadata('runId', summary.runId);
}
