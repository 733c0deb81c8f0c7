/**
 * The backfill rows of `npm run bench`: one follower against backfills with 1, 2, 4 ... workers on the same
 * catalog (backfill-scenario.ts), the target (2 workers at least 1.6x one follower), and a full nuget.org backfill
 * on paper from the measured figures (backfill-estimate.ts).
 */
import { DEFAULT_CONCURRENCY, DEFAULT_RANGE_LEAVES } from '../lambda/contract/index.js';
import type { BackfillScenarioConfig, BackfillScenarioResult } from './backfill-scenario.js';
import { estimateTable, PRICES_US_EAST_1, type EstimateInputs } from './backfill-estimate.js';

/** What the rows report. */
export interface BackfillRows {
  readonly catalog: { readonly leaves: number; readonly commits: number; readonly pages: number };
  readonly rangeLeaves: number;
  readonly follower: BackfillScenarioResult;
  readonly backfills: readonly BackfillScenarioResult[];
  /** The full nuget.org backfill on paper, from the 1-worker row's CPU per leaf. */
  readonly estimate: { readonly inputs: EstimateInputs; readonly table: string; readonly partitionedTable: string };
}

/** Runs the follower row and one backfill row per worker count, each in a child of its own. */
export async function runBackfillRows(
  run: (config: BackfillScenarioConfig) => Promise<BackfillScenarioResult>,
  options: {
    source: string;
    bucket: string;
    workers: readonly number[];
    rangeLeaves: number;
    concurrency: number;
    log: (text: string) => void;
  },
  catalog: BackfillRows['catalog'],
): Promise<BackfillRows> {
  const base = {
    source: options.source,
    bucket: options.bucket,
    concurrency: options.concurrency,
    rangeLeaves: options.rangeLeaves,
  };
  const line = (r: BackfillScenarioResult): string =>
    `  ${r.leaves} leaves in ${(r.wallMs / 1000).toFixed(1)} s: ${r.leavesPerSec} leaves/s, ${r.cpuPerLeafMs} ms CPU/leaf, ${r.ranges} ranges, peak RSS ${r.maxRssMB} MB, machine ${r.machineBusyCores} cores busy`;
  options.log(`backfill: one follower over ${catalog.leaves} leaves`);
  const follower = await run({ ...base, label: 'follower, slice after slice', workers: 0 });
  options.log(line(follower));
  const backfills: BackfillScenarioResult[] = [];
  for (const workers of options.workers) {
    options.log(`backfill: ${workers} worker${workers === 1 ? '' : 's'}, ranges of ${options.rangeLeaves} leaves`);
    const row = await run({ ...base, label: `backfill, ${workers} worker${workers === 1 ? '' : 's'}`, workers });
    options.log(line(row));
    backfills.push(row);
  }
  const one = backfills.find((r) => r.workers === 1) ?? backfills[0]!;
  const inputs = nugetInputs(one.cpuPerLeafMs);
  const concurrencies = [8, 24, 48, 100];
  return {
    catalog,
    rangeLeaves: options.rangeLeaves,
    follower,
    backfills,
    estimate: {
      inputs,
      table: estimateTable(inputs, concurrencies),
      partitionedTable: estimateTable({ ...inputs, s3PutsPerSecond: 4 * inputs.s3PutsPerSecond }, concurrencies),
    },
  };
}

/**
 * nuget.org on paper. Measured: CPU per leaf (this machine's core taken as a Lambda vCPU). Assumed, and said so in
 * docs/backfill.md: 12 M leaves, 23,000 pages, 4 M commits (3 leaves a commit), 50 ms per request from Lambda.
 */
export function nugetInputs(cpuPerLeafMs: number): EstimateInputs {
  const networkMs = 50;
  // CPU-bound or latency-bound, whichever is lower: a leaf is one GET and one PUT, CONCURRENCY at once.
  const cpuBound = 1000 / cpuPerLeafMs;
  const latencyBound = DEFAULT_CONCURRENCY / ((2 * networkMs) / 1000);
  return {
    leaves: 12_000_000,
    commits: 4_000_000,
    pages: 23_000,
    rangeLeaves: DEFAULT_RANGE_LEAVES,
    rangesPerBatch: 4,
    workerLeavesPerSecond: Math.min(cpuBound, latencyBound),
    workerMemoryMb: 1769,
    orderedManifestPutMs: undefined,
    leafConcurrency: DEFAULT_CONCURRENCY,
    s3PutsPerSecond: 3_500,
    lambdaConcurrency: 1_000,
    transitionsPerBatch: 4,
    fixedSeconds: 60,
    prices: PRICES_US_EAST_1,
  };
}

/** The backfill's targets: 2 workers at least 1.6x one follower; the nuget.org backfill in 30 minutes on paper. */
export function backfillTargets(rows: BackfillRows | undefined): { target: string; value: string; ok: boolean }[] {
  if (rows === undefined) return [];
  const targets: { target: string; value: string; ok: boolean }[] = [];
  const two = rows.backfills.find((r) => r.workers === 2);
  if (two) {
    const ratio = two.leavesPerSec / rows.follower.leavesPerSec;
    targets.push({
      target: 'backfill, 2 workers >= 1.6x one follower',
      value: `${ratio.toFixed(2)}x`,
      ok: ratio >= 1.6,
    });
  }
  return targets;
}

/** The rows as report lines. */
export function backfillReport(rows: BackfillRows): string[] {
  const out: string[] = [];
  const { follower, backfills } = rows;
  out.push('');
  out.push(
    `Backfill vs one follower: ${rows.catalog.leaves} leaves in ${rows.catalog.commits} commits, ${rows.catalog.pages} pages; ranges of ${rows.rangeLeaves} leaves; ` +
      'snapshots to the fake S3, state in a local folder on tmpfs',
  );
  out.push(
    '| row | workers | ranges | leaves | wall s | leaves/s | vs follower | CPU ms/leaf | cores busy (whole machine) | plan ms | finish ms | peak RSS MB (one process) |',
  );
  out.push('|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of [follower, ...backfills]) {
    out.push(
      `| ${r.label} | ${r.workers || '-'} | ${r.ranges || '-'} | ${r.leaves} | ${(r.wallMs / 1000).toFixed(1)} | ${r.leavesPerSec} | ` +
        `${(r.leavesPerSec / follower.leavesPerSec).toFixed(2)}x | ${r.cpuPerLeafMs} | ${r.machineBusyCores} | ${r.workers ? r.planMs : '-'} | ${r.workers ? r.finishMs : '-'} | ${r.maxRssMB} |`,
    );
  }
  out.push('');
  out.push(
    `A full nuget.org backfill on paper (bench/backfill-estimate.ts): ${rows.estimate.inputs.leaves.toLocaleString('en-US')} leaves, ` +
      `${rows.estimate.inputs.commits.toLocaleString('en-US')} commits (assumed), ${Math.round(rows.estimate.inputs.workerLeavesPerSecond)} leaves/s per 1,769 MB worker ` +
      `(this run's CPU per leaf, or ${DEFAULT_CONCURRENCY} in flight over 50 ms GET + 50 ms PUT, whichever is lower), S3 at 3,500 PUT/s (one partition)`,
  );
  out.push(rows.estimate.table);
  out.push('');
  out.push("The same once S3 has split the bucket's leaves/ key space into 4 partitions (14,000 PUT/s):");
  out.push(rows.estimate.partitionedTable);
  return out;
}
