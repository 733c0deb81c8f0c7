/**
 * The audit's rate (issue 24, part 2): leaves per second of `auditMirror` (what `catalog-sync verify` runs) over a
 * mirror synced by the engine, on nuget.org's shape (about 3 leaves a commit):
 *
 * - S3 (bench/fake-s3.ts with `s3LatencyMs` per request, ListObjectsV2 pages of 1,000 keys): the listing by
 *   commit-key ranges, with 1 range and with `ranges` at once: what parallel listing buys on a big mirror;
 * - a local folder: the plain audit, and `--deep` (every body read back and compared with the catalog's).
 *
 * The catalog replica answers after `catalogLatencyMs`. Alone: `node dist/bench/verify-rate.js [--leaves N]`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CatalogClient, HttpClient } from '../lambda/catalog/index.js';
import { parseSettings } from '../lambda/contract/index.js';
import {
  awsClients,
  openLocalStores,
  S3SnapshotStore,
  type CursorStore,
  type SnapshotStore,
} from '../lambda/stores/index.js';
import { runSlice } from '../lambda/sync/index.js';
import { auditMirror, type AuditSummary } from '../lambda/verify/index.js';
import { CatalogReplica, generateCatalog } from '../testkit/index.js';
import { startFakeS3 } from './fake-s3.js';
import { MemoryCursorStore } from './memory-cursor-store.js';

export interface VerifyRateConfig {
  readonly leaves: number;
  readonly ranges: number;
  readonly s3LatencyMs: number;
  readonly catalogLatencyMs: number;
}

export interface VerifyRateRow {
  readonly label: string;
  readonly leaves: number;
  readonly seconds: number;
  readonly leavesPerSecond: number;
}

async function fill(
  settings: ReturnType<typeof parseSettings>,
  catalog: CatalogClient,
  cursors: CursorStore,
  snapshots: SnapshotStore,
): Promise<void> {
  for (;;) {
    const summary = await runSlice(settings, { catalog, cursors, snapshots });
    if (summary.caughtUp) return;
  }
}

async function timed(label: string, audit: () => Promise<AuditSummary>): Promise<VerifyRateRow> {
  const started = performance.now();
  const summary = await audit();
  const seconds = (performance.now() - started) / 1000;
  if (summary.missingLeaves + summary.missingManifests + summary.differ > 0)
    throw new Error(`${label}: the audit found problems in a whole mirror`);
  return { label, leaves: summary.leaves, seconds, leavesPerSecond: Math.round(summary.leaves / seconds) };
}

/** Every row; the servers and folders are its own. */
export async function measureVerifyRate(
  config: VerifyRateConfig,
  log: (line: string) => void = () => undefined,
): Promise<VerifyRateRow[]> {
  const generated = generateCatalog({ commits: Math.ceil(config.leaves / 3), seed: 2402, leavesPerCommit: [1, 5] });
  const replica = await CatalogReplica.start({ catalog: generated, pageSize: 550, latencyMs: config.catalogLatencyMs });
  const s3 = await startFakeS3({ latencyMs: config.s3LatencyMs });
  const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-verify-bench-'));
  // The SDK reads its endpoint, region and credentials from this process's environment.
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_S3: s3.endpoint,
    S3_FORCE_PATH_STYLE: 'true',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'bench',
    AWS_SECRET_ACCESS_KEY: 'bench',
  });
  const clients = awsClients(process.env, 32);
  const http = new HttpClient({ connections: 32 });
  try {
    await clients.s3.send(new (await import('@aws-sdk/client-s3')).CreateBucketCommand({ Bucket: 'verify' }));
    const settings = parseSettings({
      CATALOG_SOURCE: replica.serviceIndexUrl,
      MAX_LEAVES: '100000',
      MAX_COMMITS: '100000',
      CONCURRENCY: '32',
    });
    const catalog = new CatalogClient(http, settings.source, settings.allowedOrigins);
    const rows: VerifyRateRow[] = [];

    log(`verify: filling the fake S3 with ${generated.commits.length} commits`);
    const s3Cursors = new MemoryCursorStore(0);
    const bucket = new S3SnapshotStore('verify', clients.s3);
    await fill(settings, catalog, s3Cursors, bucket);
    const s3Audit = (ranges: number) => () =>
      auditMirror(
        settings,
        { catalog, cursors: s3Cursors, snapshots: bucket },
        { listRanges: ranges, windowCommits: 2_000, concurrency: 32, onFinding: () => undefined },
      );
    rows.push(await timed(`S3, 1 listing at a time (${config.s3LatencyMs} ms a request)`, s3Audit(1)));
    rows.push(await timed(`S3, ${config.ranges} listings at once`, s3Audit(config.ranges)));

    log('verify: filling a local folder');
    const local = openLocalStores(join(dir, 'mirror'), {});
    await fill(settings, catalog, local.cursors, local.snapshots);
    const localAudit = (deep: boolean) => () =>
      auditMirror(
        settings,
        { catalog, cursors: local.cursors, snapshots: local.snapshots },
        { deep, listRanges: 1, windowCommits: Number.POSITIVE_INFINITY, concurrency: 32, onFinding: () => undefined },
      );
    rows.push(await timed('local folder', localAudit(false)));
    rows.push(
      await timed(
        `local folder, --deep (every body fetched, ${config.catalogLatencyMs} ms, and compared)`,
        localAudit(true),
      ),
    );
    return rows;
  } finally {
    clients.dynamo.destroy();
    clients.s3.destroy();
    await http.close();
    await replica.stop();
    await s3.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function verifyRateText(rows: readonly VerifyRateRow[]): string {
  const lines = [
    'Audit (catalog-sync verify): leaves per second over a whole mirror',
    '  what                                                           leaves      s   leaves/s',
  ];
  for (const row of rows)
    lines.push(
      `  ${row.label.padEnd(62)} ${String(row.leaves).padStart(6)} ${row.seconds.toFixed(2).padStart(6)} ${String(row.leavesPerSecond).padStart(10)}`,
    );
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--leaves');
  const leaves = at > 0 ? Number(process.argv[at + 1]) : 20_000;
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  measureVerifyRate({ leaves, ranges: 8, s3LatencyMs: 15, catalogLatencyMs: 20 }, (line) =>
    process.stderr.write(`${line}\n`),
  ).then(
    (rows) => {
      process.stdout.write(`${verifyRateText(rows)}\n${JSON.stringify(rows)}\n`);
      process.exit(0);
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
