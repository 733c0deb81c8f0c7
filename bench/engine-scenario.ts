/**
 * The `engine` scenario: `runSlice` exactly as the Lambda wires it (awsClients, HttpClient sized to the
 * concurrency, CatalogClient, S3SnapshotStore with its lean PUTs), with an in-memory cursor store or DynamoDB.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { CatalogClient, HttpClient } from '../lambda/catalog/index.js';
import { leafMemoryBudget, parseSettings, processMemory, type RunSummary } from '../lambda/contract/index.js';
import {
  awsClients,
  type CursorStore,
  DynamoStore,
  type RunLogStore,
  S3SnapshotStore,
} from '../lambda/stores/index.js';
import { LeafMemory, runSlice } from '../lambda/sync/index.js';
import { measured, result, timing } from './measure.js';
import { MemoryCursorStore } from './memory-cursor-store.js';
import type { ScenarioConfig, ScenarioResult } from './scenario-types.js';

/** The cursor store and run log a scenario uses (in memory with latency, or DynamoDB), and its S3 client. */
export function cursorStores(
  config: ScenarioConfig,
  s3Concurrency: number,
): { cursors: CursorStore; runLog: RunLogStore; s3: S3Client } {
  const clients = awsClients(process.env, s3Concurrency);
  if (config.cursor === 'dynamo') {
    const store = new DynamoStore(config.dynamoTable!, clients.dynamo);
    return { cursors: store, runLog: store, s3: clients.s3 };
  }
  const store = new MemoryCursorStore(config.cursorLatencyMs);
  return { cursors: store, runLog: store, s3: clients.s3 };
}

/** `runSlice` exactly as the Lambda wires it. */
export async function runEngine(config: ScenarioConfig): Promise<ScenarioResult> {
  const settings = parseSettings({
    CATALOG_SOURCE: config.source,
    CURSOR_NAME: `bench-${config.label.replace(/[^A-Za-z0-9._-]/g, '-')}-${process.pid}`,
    MAX_LEAVES: String(config.leaves),
    MAX_COMMITS: '1000000',
    CONCURRENCY: String(config.concurrency),
  });
  // Wired as lambda/sync/lambda.ts does.
  const { cursors, runLog, s3 } = cursorStores(config, settings.concurrency);
  const http = new HttpClient({ connections: settings.concurrency });
  const catalog = new CatalogClient(http, settings.source, settings.allowedOrigins);
  const snapshots = new S3SnapshotStore(config.bucket, s3);
  const leafMemory = new LeafMemory(leafMemoryBudget(process.env, processMemory()));
  const times = timing(config.leaves);
  const run = await measured(() =>
    runSlice(settings, { catalog, cursors, snapshots, runLog, leafMemory, onLeaf: (a, b, c) => times.record(a, b, c) }),
  );
  const summary: RunSummary = run.value;
  await http.close();
  s3.destroy();
  return result(
    config,
    run,
    summary.leaves,
    summary.commits,
    summary.bytes,
    times.summary(),
    config.cursor,
    summary.stoppedBy,
  );
}
