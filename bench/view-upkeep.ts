/**
 * The latest view's row of `npm run bench`: upkeep (the `view-latest` consumer) and `--rebuild` over a mirror of
 * nuget.org's shape (1-5 leaves a commit, about 3; packages touched again and again) in an in-memory S3 with a
 * latency per request of 20-50 ms and a slow tail (2% at 200 ms). Every request waits, so the figures are what the
 * view's request pattern allows: per commit the leaf bodies in parallel, then per package one GET of its index and
 * one conditional PUT, packages in parallel, commits one after another.
 */
import { commitKey, formatTimestamp } from '../lambda/contract/index.js';
import { keepView, rebuildView, type StoredDocument, type ViewDocuments } from '../lambda/view/index.js';
import type { SnapshotReader } from '../lambda/consumer/index.js';
import { mulberry32, type Prng } from '../testkit/index.js';
import { MemoryCursorStore } from './memory-cursor-store.js';
import { round, timed } from './stats.js';

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
    readonly written: number;
  };
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
    await this.wait();
    return this.objects.get(key);
  }
  async writeIf(key: string, bytes: Buffer, expected: string | undefined): Promise<boolean> {
    await this.wait();
    if (this.objects.get(key)?.tag !== expected) return false;
    this.put(key, bytes);
    return true;
  }
}

/**
 * Fills a bucket with `commits` commits of nuget.org's shape: about 3 leaves a commit and 3 leaves an identity, 10
 * versions a package (nuget.org: ~12 M leaves, ~4 M identities, ~400 k packages), so `commits / 10` packages.
 */
export function fill(bucket: SlowBucket, commits: number, random: Prng): number {
  const base = 637_134_336_000_000_000n;
  const packages = Math.max(1, Math.floor(commits / 10));
  let leaves = 0;
  let last: { key: string; ticks: bigint } | undefined;
  for (let i = 0; i < commits; i++) {
    const ticks = base + BigInt(i) * 10_000_000n;
    const key = commitKey(ticks);
    const count = random.int(1, 5);
    const entries = [];
    const seen = new Set<string>();
    for (let n = 0; n < count; n++) {
      const id = `Package.${random.int(0, packages - 1)}`;
      const version = `1.${random.int(0, 4)}.${random.int(0, 1)}`;
      if (seen.has(`${id}/${version}`)) continue;
      seen.add(`${id}/${version}`);
      const type = random.chance(0.05) ? 'PackageDelete' : 'PackageDetails';
      const leafKey = `leaves/${key}/${id.toLowerCase()}/${version}.json`;
      const body =
        type === 'PackageDelete'
          ? { id, version }
          : {
              id,
              version,
              listed: !random.chance(0.1),
              ...(random.chance(0.1) ? { deprecation: { '@id': 'x', reasons: ['Legacy'] } } : {}),
            };
      bucket.put(leafKey, Buffer.from(JSON.stringify(body)));
      entries.push({ key: leafKey, id, version, type });
    }
    entries.sort((a, b) => (a.key < b.key ? -1 : 1));
    leaves += entries.length;
    bucket.put(
      `commits/${key}.json`,
      Buffer.from(
        JSON.stringify({
          commitId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
          commitTimeStamp: formatTimestamp(ticks),
          leaves: entries,
        }),
      ),
    );
    last = { key, ticks };
  }
  if (last)
    bucket.put(
      'watermark.json',
      Buffer.from(
        JSON.stringify({
          cursor: formatTimestamp(last.ticks),
          commitId: null,
          commitKey: last.key,
          updatedAt: new Date().toISOString(),
        }),
      ),
    );
  return leaves;
}

/**
 * Runs `action` while sampling the RSS every 10 ms: its peak growth above the level at the start, MB (garbage not
 * yet collected included). With `node --expose-gc`, also the live heap's peak growth: a full collection every
 * 500 ms, then `heapUsed` (what the rebuild holds, without its garbage).
 */
async function withPeakMemory<T>(
  action: () => Promise<T>,
): Promise<{ result: T; peakRssGrowthMb: number; peakLiveHeapGrowthMb: number | null }> {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const start = process.memoryUsage.rss();
  const heapStart = process.memoryUsage().heapUsed;
  let peak = start;
  let heapPeak = heapStart;
  let ticks = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
    if (gc !== undefined && ++ticks % 50 === 0) {
      gc();
      heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
    }
  }, 10);
  try {
    const result = await action();
    peak = Math.max(peak, process.memoryUsage.rss());
    return {
      result,
      peakRssGrowthMb: round((peak - start) / 1048576, 1),
      peakLiveHeapGrowthMb: gc === undefined ? null : round((heapPeak - heapStart) / 1048576, 1),
    };
  } finally {
    clearInterval(sampler);
  }
}

/** Runs upkeep (unless `rebuildOnly`), then a rebuild into an empty view, over `commits` commits. */
export async function runViewRow(options: {
  commits: number;
  seed: number;
  log: (text: string) => void;
  rebuildOnly?: boolean;
}): Promise<ViewRowResult> {
  const random = mulberry32(options.seed);
  const bucket = new SlowBucket(random);
  const leaves = fill(bucket, options.commits, random);
  const mirror = { store: bucket, prefix: '', where: bucket.where };
  options.log(`latest view: ${options.commits} commits, ${leaves} leaves, S3 at 20-50 ms a request (2% at 200 ms)`);
  const upkeep = options.rebuildOnly
    ? { result: { written: 0 }, wallMs: Number.NaN, cpuMs: Number.NaN }
    : await timed(() =>
        keepView({ documents: bucket, prefix: '' }, { mirror, cursors: new MemoryCursorStore(0), checkpointEvery: 1 }),
      );
  for (const key of [...bucket.objects.keys()].filter((k) => k.startsWith('packages/'))) bucket.objects.delete(key);
  bucket.mirrorGets = 0;
  const {
    result: rebuild,
    peakRssGrowthMb,
    peakLiveHeapGrowthMb,
  } = await withPeakMemory(() =>
    timed(() => rebuildView({ documents: bucket, prefix: '' }, mirror, new MemoryCursorStore(0))),
  );
  const result: ViewRowResult = {
    commits: options.commits,
    leaves,
    packages: rebuild.result.packages,
    latency: '20-50 ms, 2% at 200 ms',
    upkeep: {
      wallMs: round(upkeep.wallMs, 0),
      cpuMs: round(upkeep.cpuMs, 0),
      leavesPerSec: round(leaves / (upkeep.wallMs / 1000), 0),
      commitsPerSec: round(options.commits / (upkeep.wallMs / 1000), 1),
      written: upkeep.result.written,
    },
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
  options.log(
    `  upkeep ${result.upkeep.leavesPerSec} leaves/s (${result.upkeep.commitsPerSec} commits/s, ${result.upkeep.cpuMs} ms CPU); rebuild ${result.rebuild.wallMs} ms = ${result.rebuild.secondsPerMillionLeaves} s per million leaves, ` +
      `${result.rebuild.mirrorGets} mirror GETs, RSS +${peakRssGrowthMb} MB at its peak${peakLiveHeapGrowthMb === null ? '' : `, live heap +${peakLiveHeapGrowthMb} MB`}`,
  );
  return result;
}

/** The view's line in the report's text. */
export function viewText(view: ViewRowResult | undefined): string {
  if (view === undefined) return '';
  return (
    `latest view: ${view.commits} commits (${view.leaves} leaves, ${view.packages} packages), S3 at ${view.latency}: upkeep ${view.upkeep.leavesPerSec} leaves/s ` +
    `(${view.upkeep.commitsPerSec} commits/s, ${view.upkeep.cpuMs} ms CPU, ${view.upkeep.written} indexes written); rebuild ${view.rebuild.wallMs} ms ` +
    `(${view.rebuild.cpuMs} ms CPU) = ${view.rebuild.secondsPerMillionLeaves} s per million leaves, ${view.rebuild.mirrorGets} mirror GETs, RSS +${view.rebuild.peakRssGrowthMb} MB at its peak\n`
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // `tsx bench/view-upkeep.ts [commits] [--rebuild-only]`: the rebuild alone, at a size upkeep would take too long for.
  const commits = Number(process.argv[2] ?? '2000');
  const result = await runViewRow({
    commits,
    seed: 23,
    log: (text) => console.log(text),
    rebuildOnly: process.argv.includes('--rebuild-only'),
  });
  console.log(JSON.stringify(result));
}
