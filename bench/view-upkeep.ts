/**
 * The latest view's row of `npm run bench`: upkeep (the `view-latest` consumer) and `--rebuild` over a mirror of
 * nuget.org's shape (1-5 leaves a commit, about 3; packages touched again and again) in an in-memory S3 with a
 * latency per request of 20-50 ms and a slow tail (2% at 200 ms). Every request waits, so the figures are what the
 * view's request pattern allows. Run in the same `npm run bench` as the follower's headline rows, so that upkeep is
 * compared with the follower on the same machine at the same time (issue 32: upkeep at least the follower's
 * leaves/s); the folder row (view-folder.ts, at least 1,000 commits/s) is run with it.
 */
import { keepView, rebuildView, type StoredDocument, type ViewDocuments } from '../lambda/view/index.js';
import type { SnapshotReader } from '../lambda/consumer/index.js';
import { mulberry32, type Prng } from '../testkit/index.js';
import { PRICES_US_EAST_1 } from './backfill-estimate.js';
import { MemoryCursorStore } from './memory-cursor-store.js';
import { round, timed } from './stats.js';
import { runViewFolderRow, viewFolderText, type ViewFolderResult } from './view-folder.js';
import { fillNugetShaped, withPeakMemory } from './view-shape.js';

/** The view Lambda's memory (CatalogConsumer's default), GB: what its waiting on S3 is billed at. */
const VIEW_LAMBDA_GB = 0.5;

/** What a million leaves of upkeep cost on AWS (us-east-1), USD, from the requests and the wall time measured. */
export interface ViewUpkeepCost {
  readonly indexPuts: number;
  readonly gets: number;
  readonly checkpoints: number;
  readonly lambda: number;
  readonly total: number;
}

/** What the view row measured. */
export interface ViewRowResult {
  readonly commits: number;
  readonly leaves: number;
  readonly packages: number;
  readonly latency: string;
  readonly upkeep: {
    readonly wallMs: number;
    readonly cpuMs: number;
    readonly leavesPerSec: number;
    readonly commitsPerSec: number;
    readonly cpuPerLeafMs: number;
    readonly written: number;
    /** Batches applied: their size follows the stream (commits / batches on average). */
    readonly batches: number;
    /** Conditional PUTs of indexes, and GETs (manifests, leaf bodies, indexes), as S3 would bill them. */
    readonly indexPuts: number;
    readonly gets: number;
    /** How far the process's RSS rose above its level when upkeep started (sampled every 10 ms), MB. */
    readonly peakRssGrowthMb: number;
    readonly costPerMillionLeaves: ViewUpkeepCost;
  };
  /** The folder row (view-folder.ts), when run. */
  readonly folder?: ViewFolderResult;
  readonly rebuild: {
    readonly wallMs: number;
    readonly cpuMs: number;
    readonly secondsPerMillionLeaves: number;
    /** Leaf bodies and manifests the rebuild read (GETs of the mirror, not of the view). */
    readonly mirrorGets: number;
    /** How far the process's RSS rose above its level when the rebuild started (sampled every 10 ms), MB. */
    readonly peakRssGrowthMb: number;
    /** With `node --expose-gc`: how far the live heap (after a full collection, every 500 ms) rose, MB; else null. */
    readonly peakLiveHeapGrowthMb: number | null;
    /** The process's peak RSS so far (`process.resourceUsage().maxRSS`), MB: includes the in-memory bucket. */
    readonly maxRssMb: number;
  };
}

/** An in-memory bucket with a latency on every request; ETags are a serial number. */
export class SlowBucket implements SnapshotReader, ViewDocuments {
  readonly where = 's3://bench';
  readonly objects = new Map<string, { bytes: Buffer; tag: string }>();
  private serial = 0;
  /** GETs of everything but the view's own documents. */
  mirrorGets = 0;
  /** The view's own reads and conditional writes. */
  indexGets = 0;
  indexPuts = 0;
  constructor(private readonly random: Prng) {}

  protected wait(): Promise<void> {
    const ms = this.random.chance(0.02) ? 200 : 20 + this.random.int(0, 30);
    return new Promise((resolve) => setTimeout(resolve, ms));
  }
  put(key: string, bytes: Buffer): void {
    this.objects.set(key, { bytes, tag: String(++this.serial) });
  }
  async *listKeys(prefix: string, startAfter = ''): AsyncIterable<string> {
    await this.wait();
    const keys = [...this.objects.keys()].filter((key) => key.startsWith(prefix) && key > startAfter).sort();
    yield* keys;
  }
  async getBytes(key: string): Promise<Buffer | undefined> {
    this.mirrorGets++;
    await this.wait();
    return this.objects.get(key)?.bytes;
  }
  async read(key: string): Promise<StoredDocument | undefined> {
    this.indexGets++;
    await this.wait();
    return this.objects.get(key);
  }
  async writeIf(key: string, bytes: Buffer, expected: string | undefined): Promise<boolean> {
    this.indexPuts++;
    await this.wait();
    if (this.objects.get(key)?.tag !== expected) return false;
    this.put(key, bytes);
    return true;
  }
}

/** Runs upkeep (unless `rebuildOnly`), then a rebuild into an empty view, over `commits` commits; then the folder row. */
export async function runViewRow(options: {
  commits: number;
  seed: number;
  log: (text: string) => void;
  rebuildOnly?: boolean;
  /** Commits of the folder row (view-folder.ts); 0 or absent: not run. */
  folderCommits?: number;
}): Promise<ViewRowResult> {
  const random = mulberry32(options.seed);
  const bucket = new SlowBucket(random);
  const leaves = fillNugetShaped((key, bytes) => bucket.put(key, bytes), options.commits, random);
  const mirror = { store: bucket, prefix: '', where: bucket.where };
  options.log(`latest view: ${options.commits} commits, ${leaves} leaves, S3 at 20-50 ms a request (2% at 200 ms)`);
  const upkeep = options.rebuildOnly
    ? {
        result: { result: { written: 0, batches: 0, checkpoints: 0 }, wallMs: Number.NaN, cpuMs: Number.NaN },
        peakRssGrowthMb: Number.NaN,
      }
    : await withPeakMemory(() =>
        timed(() =>
          keepView(
            { documents: bucket, prefix: '' },
            { mirror, cursors: new MemoryCursorStore(0), checkpointEvery: 1 },
          ),
        ),
      );
  const upkeepGets = bucket.mirrorGets + bucket.indexGets;
  const upkeepPuts = bucket.indexPuts;
  for (const key of [...bucket.objects.keys()].filter((k) => k.startsWith('packages/'))) bucket.objects.delete(key);
  bucket.mirrorGets = 0;
  const {
    result: rebuild,
    peakRssGrowthMb,
    peakLiveHeapGrowthMb,
  } = await withPeakMemory(() =>
    timed(() => rebuildView({ documents: bucket, prefix: '' }, mirror, new MemoryCursorStore(0))),
  );
  const run = upkeep.result;
  const leavesPerSec = leaves / (run.wallMs / 1000);
  const folder =
    (options.folderCommits ?? 0) > 0
      ? await runViewFolderRow({ commits: options.folderCommits!, seed: options.seed, log: options.log })
      : undefined;
  const result: ViewRowResult = {
    commits: options.commits,
    leaves,
    packages: rebuild.result.packages,
    latency: '20-50 ms, 2% at 200 ms',
    upkeep: {
      wallMs: round(run.wallMs, 0),
      cpuMs: round(run.cpuMs, 0),
      leavesPerSec: round(leavesPerSec, 0),
      commitsPerSec: round(options.commits / (run.wallMs / 1000), 1),
      cpuPerLeafMs: round(run.cpuMs / leaves, 3),
      written: run.result.written,
      batches: run.result.batches,
      indexPuts: upkeepPuts,
      gets: upkeepGets,
      peakRssGrowthMb: upkeep.peakRssGrowthMb,
      costPerMillionLeaves: upkeepCost(leaves, leavesPerSec, upkeepPuts, upkeepGets, run.result.checkpoints),
    },
    ...(folder === undefined ? {} : { folder }),
    rebuild: {
      wallMs: round(rebuild.wallMs, 0),
      cpuMs: round(rebuild.cpuMs, 0),
      secondsPerMillionLeaves: round((rebuild.wallMs / 1000) * (1_000_000 / leaves), 0),
      mirrorGets: bucket.mirrorGets,
      peakRssGrowthMb,
      peakLiveHeapGrowthMb,
      maxRssMb: round(process.resourceUsage().maxRSS / 1024, 0),
    },
  };
  options.log(`  ${viewText(result).trimEnd().replaceAll('\n', '\n  ')}`);
  return result;
}

/**
 * A million leaves of upkeep on AWS at this row's ratios: S3 PUTs and GETs, one DynamoDB checkpoint a batch, and the
 * view Lambda billed while it waits (at {@link VIEW_LAMBDA_GB}, for a million leaves at the rate measured).
 */
function upkeepCost(leaves: number, leavesPerSec: number, puts: number, gets: number, checkpoints: number) {
  const perMillion = 1_000_000 / leaves;
  const prices = PRICES_US_EAST_1;
  const indexPuts = ((puts * perMillion) / 1000) * prices.s3PutPerThousand;
  const getCost = ((gets * perMillion) / 1000) * prices.s3GetPerThousand;
  const checkpointCost = ((checkpoints * perMillion) / 1_000_000) * prices.dynamoWritePerMillion;
  const lambda = (1_000_000 / leavesPerSec) * VIEW_LAMBDA_GB * prices.lambdaGbSecond;
  const cost = { indexPuts, gets: getCost, checkpoints: checkpointCost, lambda };
  const total = indexPuts + getCost + checkpointCost + lambda;
  return Object.fromEntries(
    Object.entries({ ...cost, total }).map(([name, usd]) => [name, round(usd, 3)]),
  ) as unknown as ViewUpkeepCost;
}

/** Issue 32's targets: upkeep at least the follower's leaves/s in the same run, and 1,000 commits/s on a folder. */
export function viewTargets(
  view: ViewRowResult | undefined,
  followerLeavesPerSec: number | undefined,
): { target: string; value: string; ok: boolean }[] {
  if (view === undefined) return [];
  const targets = [];
  if (followerLeavesPerSec !== undefined && Number.isFinite(view.upkeep.leavesPerSec)) {
    const ratio = view.upkeep.leavesPerSec / followerLeavesPerSec;
    targets.push({
      target: "latest view: upkeep's leaves/s >= the follower's (nuget: engine) in the same run",
      value: `${view.upkeep.leavesPerSec} / ${round(followerLeavesPerSec, 0)} = ${ratio.toFixed(2)}`,
      ok: ratio >= 1,
    });
  }
  if (view.folder !== undefined)
    targets.push({
      target: 'latest view on a folder: upkeep >= 1,000 commits/s',
      value: `${view.folder.upkeep.commitsPerSec} commits/s`,
      ok: view.folder.upkeep.commitsPerSec >= 1000,
    });
  return targets;
}

/** The view's lines in the report's text. */
export function viewText(view: ViewRowResult | undefined): string {
  if (view === undefined) return '';
  const { upkeep, rebuild } = view;
  const cost = upkeep.costPerMillionLeaves;
  return (
    `latest view: ${view.commits} commits (${view.leaves} leaves, ${view.packages} packages), S3 at ${view.latency}: upkeep ${upkeep.leavesPerSec} leaves/s ` +
    `(${upkeep.commitsPerSec} commits/s in ${upkeep.batches} batches, ${upkeep.cpuMs} ms CPU = ${upkeep.cpuPerLeafMs} ms a leaf, RSS +${upkeep.peakRssGrowthMb} MB at its peak; ` +
    `${upkeep.written} indexes written, ${upkeep.indexPuts} PUTs, ${upkeep.gets} GETs); rebuild ${rebuild.wallMs} ms ` +
    `(${rebuild.cpuMs} ms CPU) = ${rebuild.secondsPerMillionLeaves} s per million leaves, ${rebuild.mirrorGets} mirror GETs, RSS +${rebuild.peakRssGrowthMb} MB at its peak\n` +
    `latest view upkeep on AWS, per million leaves: $${cost.total} (index PUTs $${cost.indexPuts}, GETs $${cost.gets}, ` +
    `checkpoints $${cost.checkpoints}, Lambda at ${VIEW_LAMBDA_GB * 1024} MB while waiting $${cost.lambda})\n` +
    viewFolderText(view.folder)
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // `node dist/bench/view-upkeep.js [commits] [--rebuild-only] [--folder=N]`: --rebuild-only for the rebuild alone at a
  // size upkeep would take too long for; --folder=N also runs the folder row on N commits.
  const commits = Number(process.argv[2] ?? '2000');
  const result = await runViewRow({
    commits,
    seed: 23,
    log: (text) => console.log(text),
    rebuildOnly: process.argv.includes('--rebuild-only'),
    folderCommits: Number(process.argv.find((arg) => arg.startsWith('--folder='))?.slice('--folder='.length) ?? '0'),
  });
  console.log(JSON.stringify(result));
}
