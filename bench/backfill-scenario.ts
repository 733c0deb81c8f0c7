/**
 * The backfill rows: a whole generated catalog stored by one follower (`runSlice`, slice after slice until caught
 * up) or by a backfill with N range workers, each worker a process of its own (backfill-worker.ts), as
 * `catalog-sync backfill --workers N` runs them. Both write snapshots to the fake S3 through the SDK and keep the
 * cursor, run log and backfill state in a local folder on tmpfs (so a disk's fsyncs do not decide the figure).
 * Started by run.ts with `fork`, the {@link BackfillScenarioConfig} as JSON in argv[2]; sends one
 * {@link BackfillScenarioResult} over IPC and exits.
 */
import { fork } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CatalogClient, HttpClient } from '../lambda/catalog/index.js';
import { parseSettings, type BackfillRange, type SyncSettings } from '../lambda/contract/index.js';
import { awsClients, openLocalStores, S3SnapshotStore } from '../lambda/stores/index.js';
import { runSlice, type BackfillDeps } from '../lambda/sync/index.js';
import { finishBackfill, planBackfill } from '../lambda/backfill/index.js';
import type { BackfillWorkerConfig, FromBackfillWorker, ToBackfillWorker } from './backfill-worker.js';
import { machineCpuMs, round } from './stats.js';

const here = dirname(fileURLToPath(import.meta.url));

/** argv[2] of this process. */
export interface BackfillScenarioConfig {
  readonly label: string;
  readonly source: string;
  readonly bucket: string;
  /** 0: one follower; otherwise range worker processes. */
  readonly workers: number;
  readonly concurrency: number;
  readonly rangeLeaves: number;
}

/** What one backfill row measured. */
export interface BackfillScenarioResult {
  readonly label: string;
  readonly workers: number;
  readonly leaves: number;
  readonly commits: number;
  readonly ranges: number;
  /** From the first read to the cursor on the head (plan, ranges and finish for a backfill). */
  readonly wallMs: number;
  readonly planMs: number;
  readonly finishMs: number;
  readonly leavesPerSec: number;
  /** CPU of every process of the row (the parent and its workers), ms. */
  readonly cpuMs: number;
  readonly cpuPerLeafMs: number;
  /** The largest peak RSS of one process of the row, MB. */
  readonly maxRssMB: number;
  /** Cores the whole machine was busy meanwhile (the row, the servers, everything else); NaN without /proc/stat. */
  readonly machineBusyCores: number;
  readonly stoppedBy: string;
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as BackfillScenarioConfig;
  const stateDir = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'catalog-sync-bench-'));
  try {
    const machine0 = machineCpuMs();
    const measured = config.workers === 0 ? await follow(config, stateDir) : await backfill(config, stateDir);
    const result = { ...measured, machineBusyCores: round((machineCpuMs() - machine0) / measured.wallMs, 2) };
    process.send!({ type: 'result', result }, () => process.exit(0));
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
}

function settingsOf(config: BackfillScenarioConfig): SyncSettings {
  return parseSettings({
    CATALOG_SOURCE: config.source,
    CURSOR_NAME: 'bench-backfill',
    CONCURRENCY: String(config.concurrency),
  });
}

function depsOf(
  settings: SyncSettings,
  config: BackfillScenarioConfig,
  stateDir: string,
): { deps: BackfillDeps; close(): Promise<void> } {
  const clients = awsClients(process.env, settings.concurrency);
  const http = new HttpClient({ connections: settings.concurrency });
  const local = openLocalStores(stateDir);
  const deps: BackfillDeps = {
    catalog: new CatalogClient(http, settings.source, settings.allowedOrigins),
    cursors: local.cursors,
    runLog: local.runLog,
    backfills: local.backfills,
    snapshots: new S3SnapshotStore(config.bucket, clients.s3),
  };
  return {
    deps,
    close: async () => {
      await http.close();
      clients.s3.destroy();
    },
  };
}

/** One follower, slice after slice until caught up. */
type Measured = Omit<BackfillScenarioResult, 'machineBusyCores'>;

async function follow(config: BackfillScenarioConfig, stateDir: string): Promise<Measured> {
  const settings = settingsOf(config);
  const { deps, close } = depsOf(settings, config, stateDir);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let leaves = 0;
  let commits = 0;
  let stoppedBy = '';
  for (;;) {
    const summary = await runSlice(settings, deps);
    leaves += summary.leaves;
    commits += summary.commits;
    stoppedBy = summary.stoppedBy;
    if (summary.caughtUp || summary.commits === 0) break;
  }
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  await close();
  return resultOf(config, {
    leaves,
    commits,
    ranges: 0,
    wallMs,
    planMs: 0,
    finishMs: 0,
    cpuMs: (cpu.user + cpu.system) / 1000,
    maxRssMB: ownRss(),
    stoppedBy,
  });
}

/** Plan, N worker processes over the ranges (largest first), finish. */
async function backfill(config: BackfillScenarioConfig, stateDir: string): Promise<Measured> {
  const settings = settingsOf(config);
  const { deps, close } = depsOf(settings, config, stateDir);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const planned = await planBackfill(settings, deps, { rangeLeaves: config.rangeLeaves });
  const planMs = performance.now() - t0;
  const workers = await runWorkers(planned.ranges, config, stateDir);
  const t1 = performance.now();
  const summary = await finishBackfill(settings, deps, planned.plan.backfillId);
  const finishMs = performance.now() - t1;
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  await close();
  return resultOf(config, {
    leaves: summary.leaves,
    commits: summary.commits,
    ranges: planned.ranges.length,
    wallMs,
    planMs,
    finishMs,
    cpuMs: (cpu.user + cpu.system) / 1000 + workers.cpuMs,
    maxRssMB: Math.max(ownRss(), workers.maxRssMB),
    stoppedBy: summary.stoppedBy,
  });
}

/** Runs every range in `config.workers` processes; resolves with their CPU once they exited. */
function runWorkers(
  ranges: readonly BackfillRange[],
  config: BackfillScenarioConfig,
  stateDir: string,
): Promise<{ cpuMs: number; maxRssMB: number }> {
  const queue = [...ranges].sort((a, b) => b.leaves - a.leaves || a.n - b.n);
  const workerConfig: BackfillWorkerConfig = {
    source: config.source,
    bucket: config.bucket,
    stateDir,
    cursorName: 'bench-backfill',
    concurrency: config.concurrency,
  };
  return new Promise((resolve, reject) => {
    let cpuMs = 0;
    let maxRssMB = 0;
    let alive = config.workers;
    for (let i = 0; i < config.workers; i++) {
      const child = fork(join(here, 'backfill-worker.js'), [JSON.stringify(workerConfig)], {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      const next = (): void => {
        const range = queue.shift();
        child.send((range === undefined ? { type: 'exit' } : { type: 'range', range }) satisfies ToBackfillWorker);
      };
      child.on('message', (message: FromBackfillWorker) => {
        if (message.type === 'ready') next();
        else if (message.type === 'outcome') {
          if (!message.outcome.done)
            reject(new Error(`range ${message.outcome.n} stopped by ${message.outcome.stoppedBy}`));
          next();
        } else if (message.type === 'cpu') {
          cpuMs += message.cpuMs;
          maxRssMB = Math.max(maxRssMB, message.maxRssMB);
        } else reject(new Error(`backfill worker: ${message.error}`));
      });
      child.on('exit', (code) => {
        if (code !== 0) reject(new Error(`backfill worker exited with ${code}`));
        if (--alive === 0) resolve({ cpuMs, maxRssMB });
      });
    }
  });
}

function ownRss(): number {
  return process.resourceUsage().maxRSS / 1024;
}

function resultOf(
  config: BackfillScenarioConfig,
  m: {
    leaves: number;
    commits: number;
    ranges: number;
    wallMs: number;
    planMs: number;
    finishMs: number;
    cpuMs: number;
    maxRssMB: number;
    stoppedBy: string;
  },
): Measured {
  return {
    label: config.label,
    workers: config.workers,
    leaves: m.leaves,
    commits: m.commits,
    ranges: m.ranges,
    wallMs: round(m.wallMs, 0),
    planMs: round(m.planMs, 1),
    finishMs: round(m.finishMs, 1),
    leavesPerSec: round(m.leaves / (m.wallMs / 1000), 1),
    cpuMs: round(m.cpuMs, 0),
    cpuPerLeafMs: round(m.cpuMs / Math.max(1, m.leaves), 2),
    maxRssMB: round(m.maxRssMB, 1),
    stoppedBy: m.stoppedBy,
  };
}

void main().catch((error: unknown) => {
  process.send?.({ type: 'error', error: String((error as Error)?.stack ?? error) }, () => process.exit(1));
});
