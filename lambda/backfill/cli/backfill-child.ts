/**
 * A worker process of `catalog-sync backfill` (forked by backfill-pool.ts, never run by hand): it opens the same
 * stores as the parent, then runs the ranges it is handed one at a time with the engine's `runRange`, reporting
 * progress and each outcome. It stops the range in hand on `stop`, on SIGINT/SIGTERM (Ctrl-C reaches the whole
 * process group), and when the parent goes away (its channel closes): the range's progress is checkpointed.
 */
import { CatalogClient, HttpClient } from '../../catalog/index.js';
import {
  CatalogSyncError,
  leafMemoryBudget,
  parseSettings,
  processMemory,
  type BackfillRange,
  type SyncSettings,
} from '../../contract/index.js';
import { LeafMemory, type EngineLogger } from '../../sync/index.js';
import { runRange } from '../index.js';
import type { FromWorker, ToWorker, WorkerOptions } from './backfill-messages.js';
import { openStores, type OpenStores } from '../../runtime/cli/open-stores.js';
import { FLAG_NAMES, rawSettingsOf } from '../../runtime/cli/options.js';
import { verboseHooks } from '../../sync/cli/verbose.js';

/** Least time between two progress messages of a worker. */
const PROGRESS_EVERY_MS = 100;

const stop = new AbortController();
let opened:
  | {
      settings: SyncSettings;
      stores: OpenStores;
      http: HttpClient;
      logger: EngineLogger | undefined;
      catalog: CatalogClient;
      leaseHolder: string | undefined;
      leafMemory: LeafMemory;
    }
  | undefined;
let busy: Promise<void> = Promise.resolve();

function send(message: FromWorker): void {
  if (process.connected) process.send!(message);
}

async function open(options: WorkerOptions): Promise<void> {
  const settings = parseSettings(rawSettingsOf(options), FLAG_NAMES);
  const stores = await withBackpressure(await openStores(options, settings.concurrency), options, settings.concurrency);
  const http = new HttpClient({ connections: settings.concurrency });
  const verbose = verboseHooks(options.verbose, http);
  // This worker's share of the parent's leaf memory budget (backfill-pool.ts sets LEAF_MEMORY_MB for each worker).
  const leafMemory = new LeafMemory(leafMemoryBudget(process.env, processMemory()));
  opened = {
    settings,
    stores: { ...stores, backfills: verbose.backfills(stores.backfills) },
    http,
    logger: verbose.logger,
    catalog: new CatalogClient(http, settings.source, settings.allowedOrigins),
    leaseHolder: options.leaseHolder,
    leafMemory,
  };
  send({ type: 'ready' });
}

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

async function run(range: BackfillRange): Promise<void> {
  const { settings, stores, catalog, logger, leaseHolder, leafMemory } = opened!;
  let last = 0;
  try {
    const outcome = await runRange(
      settings,
      {
        catalog,
        cursors: stores.cursors,
        snapshots: stores.snapshots,
        runLog: stores.runLog,
        backfills: stores.backfills,
        leafMemory,
        signal: stop.signal,
        ...(logger === undefined ? {} : { logger }),
        onProgress: (progress) => {
          const now = Date.now();
          if (now - last < PROGRESS_EVERY_MS) return;
          last = now;
          send({
            type: 'progress',
            n: range.n,
            commits: progress.commits,
            leaves: progress.leaves,
            bytes: progress.bytes,
          });
        },
      },
      range,
      leaseHolder === undefined ? {} : { holder: leaseHolder },
    );
    send({ type: 'outcome', outcome });
  } catch (error) {
    const cause = error as Error;
    send({
      type: 'failed',
      n: range.n,
      message: cause?.message ?? String(error),
      ...(error instanceof CatalogSyncError ? { code: error.code } : {}),
    });
  }
}

async function exit(code: number): Promise<never> {
  stop.abort();
  await busy.catch(() => undefined);
  if (opened) {
    opened.stores.close();
    await opened.http.close().catch(() => undefined);
  }
  process.exit(code);
}

process.on('message', (message: ToWorker) => {
  switch (message.type) {
    case 'init':
      busy = open(message.options).catch((error: unknown) => {
        send({ type: 'failed', n: -1, message: (error as Error)?.message ?? String(error) });
        void exit(1);
      });
      break;
    case 'range':
      busy = busy.then(() => run(message.range));
      break;
    case 'stop':
      stop.abort();
      break;
    case 'exit':
      void exit(0);
      break;
  }
});
// The parent went away (killed): stop at once, checkpointing what is complete.
process.on('disconnect', () => void exit(1));
// Ctrl-C reaches every process of the terminal's group: stop like the parent's `stop`, and let the parent decide.
// A second Ctrl-C quits at once (the parent's own `stop`, which may come first, is not a Ctrl-C: count signals only).
let signals = 0;
const onSignal = (): void => {
  if (++signals > 1) process.exit(130);
  stop.abort();
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);
