/**
 * What the three backfill handlers share: settings from the same environment as the follower's function
 * (runtime/lambda-settings.ts), the catalog client and the stores, kept warm between invocations, and the
 * Powertools logger as the engine's logger.
 */
import { CatalogClient, HttpClient } from '../../catalog/index.js';
import { leafMemoryBudget, processMemory, type SyncSettings } from '../../contract/index.js';
import { deferWasmTierUp } from '../../runtime/wasm-tiering.js';
import { lambdaSettings } from '../../runtime/lambda-settings.js';
import { engineLogger, lambdaLogger } from '../../runtime/powertools.js';
import { checkLambdaIdFilter } from '../../sync/id-filter-check.js';
import { sourceSecretId, sourceSecrets } from '../../runtime/source-secret.js';
import { awsClients, DynamoStore, S3SnapshotStore, type SnapshotStore } from '../../stores/index.js';
import { BackpressureSnapshotStore, backpressureS3Client, SlowDownGauge } from '../../stores/s3-backpressure.js';
import { LeafMemory, type BackfillDeps, type EngineLogger } from '../../sync/index.js';

export const logger = lambdaLogger(process.env, 'catalog-sync-backfill');

export const engineLoggerOfBackfill: EngineLogger = engineLogger(logger);

/** A warm container's settings, clients and stores. */
export interface BackfillWarm {
  readonly key: string;
  readonly settings: SyncSettings;
  readonly bucket: string;
  readonly runLogDays: number;
  readonly deps: BackfillDeps;
  /** The S3 SlowDown gauge of the range worker's snapshot store (workers only). */
  readonly gauge?: SlowDownGauge;
}

const warm = new Map<string, BackfillWarm>();

/** The settings and stores for `env`; `backpressure` gives the range worker's SlowDown-aware snapshot store. */
export async function warmUp(env: NodeJS.ProcessEnv, { backpressure = false } = {}): Promise<BackfillWarm> {
  const key = `${backpressure}:${JSON.stringify(env, Object.keys(env).sort())}`;
  const found = warm.get(key);
  if (found) return found;
  // A Lambda's process: its first invocation should not pay for compiling undici's HTTP parser twice.
  deferWasmTierUp();
  const secretId = sourceSecretId(env);
  const credentials = secretId === undefined ? undefined : await sourceSecrets.read(secretId);
  const { settings, table, bucket, runLogDays } = lambdaSettings(env, credentials);
  const clients = awsClients(env, settings.concurrency);
  const store = new DynamoStore(table, clients.dynamo);
  let snapshots: SnapshotStore = new S3SnapshotStore(bucket, clients.s3);
  let gauge: SlowDownGauge | undefined;
  if (backpressure) {
    gauge = new SlowDownGauge(settings.concurrency);
    snapshots = new BackpressureSnapshotStore(
      new S3SnapshotStore(bucket, backpressureS3Client(env, settings.concurrency, gauge)),
      gauge,
    );
  }
  const http = new HttpClient({ connections: settings.concurrency });
  const made: BackfillWarm = {
    key,
    settings,
    bucket,
    runLogDays,
    deps: {
      catalog: new CatalogClient(http, settings.source, settings.allowedOrigins),
      cursors: store,
      snapshots,
      runLog: store,
      runLogDays,
      backfills: store,
      logger: engineLoggerOfBackfill,
      // A quarter of the function's memory for leaf bodies in flight (contract/leaf-memory.ts).
      leafMemory: new LeafMemory(leafMemoryBudget(env, processMemory())),
    },
    ...(gauge ? { gauge } : {}),
  };
  warm.clear();
  warm.set(key, made);
  return made;
}

const filterChecked = new WeakSet<BackfillWarm>();

/**
 * Refuses a backfill whose `INCLUDE_IDS`/`EXCLUDE_IDS` differ from the mirror's `filter.json` (`IdFilterChangedError`,
 * `CS_ERR_ID_FILTER_CHANGED`, naming both filters and the `--refilter` step), as the follower and the CLI's backfill
 * do: its manifests would otherwise mean another filter than the mirror's. Once per warm container; a mirror without
 * a cursor takes the filter and records it. When the store does not answer, the check is left to the next
 * invocation and the work meets that failure itself.
 */
export async function checkBackfillFilter(made: BackfillWarm): Promise<void> {
  if (filterChecked.has(made)) return;
  const { settings, deps } = made;
  if (
    await checkLambdaIdFilter(deps.snapshots, deps.cursors, settings, (message, error) =>
      logger.warn(message, { error: error.message }),
    )
  )
    filterChecked.add(made);
}
