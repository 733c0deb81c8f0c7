/**
 * A worker process of `catalog-sync backfill` (forked by the worker pool, never run by hand): it opens the same
 * stores as the parent, then runs the ranges it is handed one at a time with the engine's `runRange`, reporting
 * the leaves stored and each outcome (the IPC harness is lambda/runtime/cli/worker-child.ts). Stopped (`stop`,
 * Ctrl-C, the parent gone), the range's progress is checkpointed.
 */
import { CatalogClient, HttpClient } from '../../catalog/index.js';
import { leafMemoryBudget, parseSettings, processMemory, type BackfillRange } from '../../contract/index.js';
import { LeafMemory, type EngineLogger } from '../../sync/index.js';
import { runRange, type RangeOutcome } from '../index.js';
import type { WorkerOptions } from './backfill-messages.js';
import { openStores, type OpenStores } from '../../runtime/cli/open-stores.js';
import { FLAG_NAMES, rawSettingsOf } from '../../runtime/cli/options.js';
import { serveWorker } from '../../runtime/cli/worker-child.js';
import { verboseHooks } from '../../sync/cli/verbose.js';

serveWorker<BackfillRange, RangeOutcome, WorkerOptions>({
  async open(options) {
    const settings = parseSettings(rawSettingsOf(options), FLAG_NAMES);
    const opened = await withBackpressure(
      await openStores(options, settings.concurrency),
      options,
      settings.concurrency,
    );
    const http = new HttpClient({ connections: settings.concurrency });
    const verbose = verboseHooks(options.verbose, http);
    const stores = { ...opened, backfills: verbose.backfills(opened.backfills) };
    const logger: EngineLogger | undefined = verbose.logger;
    const catalog = new CatalogClient(http, settings.source, settings.allowedOrigins);
    // This worker's share of the parent's leaf memory budget (backfill.ts sets LEAF_MEMORY_MB for each worker).
    const leafMemory = new LeafMemory(leafMemoryBudget(process.env, processMemory()));
    const { leaseHolder } = options;
    return {
      run: (range, signal, progress) =>
        runRange(
          settings,
          {
            catalog,
            cursors: stores.cursors,
            snapshots: stores.snapshots,
            runLog: stores.runLog,
            backfills: stores.backfills,
            leafMemory,
            signal,
            ...(logger === undefined ? {} : { logger }),
            onProgress: (done) => progress(done.leaves),
          },
          range,
          leaseHolder === undefined ? {} : { holder: leaseHolder },
        ),
      close: async () => {
        stores.close();
        await http.close().catch(() => undefined);
      },
    };
  },
});

/**
 * Into S3, many workers at once can meet 503 SlowDown (a new bucket's prefix partitions split under load): leaf PUTs
 * then back off and this worker lowers its own PUTs in flight, as the Lambda range worker does, instead of failing
 * the range.
 */
async function withBackpressure(stores: OpenStores, options: WorkerOptions, concurrency: number): Promise<OpenStores> {
  if (options.bucket === undefined) return stores;
  const [{ BackpressureSnapshotStore, backpressureS3Client, SlowDownGauge }, { S3SnapshotStore }] = await Promise.all([
    import('../../stores/s3-backpressure.js'),
    import('../../stores/s3-store.js'),
  ]);
  const gauge = new SlowDownGauge(concurrency);
  const s3 = backpressureS3Client(process.env, concurrency, gauge);
  return {
    ...stores,
    snapshots: new BackpressureSnapshotStore(new S3SnapshotStore(options.bucket, s3), gauge),
    close: () => {
      stores.close();
      s3.destroy();
    },
  };
}
