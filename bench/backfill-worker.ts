/**
 * One range worker of the benchmark's backfill scenario (backfill-scenario.ts), in a process of its own as
 * `catalog-sync backfill --workers N` runs them: asks its parent for a range over IPC, runs it with `runRange`
 * (snapshots to the fake S3 through the SDK, range state in the local folder's backfill store on tmpfs), reports
 * the outcome, and at the end its own CPU time.
 */
import { CatalogClient, HttpClient } from '../lambda/catalog/index.js';
import { parseSettings, type BackfillRange } from '../lambda/contract/index.js';
import { awsClients, openLocalStores, S3SnapshotStore } from '../lambda/stores/index.js';
import { runRange, type RangeOutcome } from '../lambda/backfill/index.js';

/** argv[2] of this process. */
export interface BackfillWorkerConfig {
  readonly source: string;
  readonly bucket: string;
  readonly stateDir: string;
  readonly cursorName: string;
  readonly concurrency: number;
}

/** What a worker says to its parent. */
export type FromBackfillWorker =
  | { readonly type: 'ready' }
  | { readonly type: 'outcome'; readonly outcome: RangeOutcome }
  | { readonly type: 'cpu'; readonly cpuMs: number; readonly maxRssMB: number }
  | { readonly type: 'error'; readonly error: string };

/** What a parent says to a worker: a range to run, or that there is none left. */
export type ToBackfillWorker = { readonly type: 'range'; readonly range: BackfillRange } | { readonly type: 'exit' };

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as BackfillWorkerConfig;
  const settings = parseSettings({
    CATALOG_SOURCE: config.source,
    CURSOR_NAME: config.cursorName,
    CONCURRENCY: String(config.concurrency),
  });
  const clients = awsClients(process.env, settings.concurrency);
  const http = new HttpClient({ connections: settings.concurrency });
  const catalog = new CatalogClient(http, settings.source, settings.allowedOrigins);
  const local = openLocalStores(config.stateDir);
  const deps = {
    catalog,
    cursors: local.cursors,
    backfills: local.backfills,
    snapshots: new S3SnapshotStore(config.bucket, clients.s3),
  };
  const cpu0 = process.cpuUsage();
  const send = (message: FromBackfillWorker): Promise<void> =>
    new Promise((resolve) => process.send!(message, () => resolve()));
  process.on('message', (message: ToBackfillWorker) => {
    if (message.type === 'exit') {
      const cpu = process.cpuUsage(cpu0);
      void send({
        type: 'cpu',
        cpuMs: (cpu.user + cpu.system) / 1000,
        maxRssMB: process.resourceUsage().maxRSS / 1024,
      }).then(async () => {
        await http.close();
        clients.s3.destroy();
        process.exit(0);
      });
      return;
    }
    runRange(settings, deps, message.range).then(
      (outcome) => send({ type: 'outcome', outcome }),
      (error: unknown) => send({ type: 'error', error: String((error as Error)?.stack ?? error) }),
    );
  });
  await send({ type: 'ready' });
}

void main().catch((error: unknown) => {
  process.send?.({ type: 'error', error: String((error as Error)?.stack ?? error) }, () => process.exit(1));
});
