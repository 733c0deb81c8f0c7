/**
 * The view rebuild's per-item costs and its local speed-up (issue 32), on nuget.org's shape (1-5 leaves a commit,
 * about 3; 10 versions a package): `tsx bench/view-rebuild.ts [commits]` (default 2,000: about 2 minutes on the shared machine).
 *
 * 1. On S3's shape: the in-memory bucket of the view row (bench/view-upkeep.ts: 20-50 ms a request, 2% at
 *    200 ms), the engine's own functions run as one worker runs them (plan, every range, every shard, finish).
 *    Wall and CPU per phase, and per item: a manifest GET (phase 1, read 256 ahead, its records built), a record
 *    object write, a leaf GET (phase 2, its fields read), an index written (its records read and folded, the
 *    index's GET and conditional PUT). CPU is taken from a second run with no latency (timers cost CPU too), a
 *    phase's CPU split by micro-runs of the record writes and the leaf GETs alone.
 * 2. On a folder (tmpfs where there is one): `catalog-sync view --rebuild --workers N` (the built CLI, dist/cli/),
 *    N = 1 and 2, each twice, alternating, into an empty view: wall, and CPU of the command and its workers.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MirrorLeaf } from '../lambda/consumer/index.js';
import { LocalStore } from '../lambda/stores/index.js';
import {
  finishRebuild,
  leafFieldsOf,
  planRebuild,
  runIndexShard,
  runRecordsRange,
  SnapshotRecordStore,
  type RebuildStores,
} from '../lambda/view/index.js';
import { mulberry32 } from '../testkit/index.js';
import { round, timed } from './stats.js';
import { fillNugetShaped } from './view-shape.js';
import { SlowBucket } from './view-upkeep.js';

const SHARDS = 16;

/** Runs `task` on each of `items`, at most `limit` at once. */
async function forEachBounded<T>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await task(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
const RANGE_MANIFESTS = 500;

/** The view row's bucket, counting requests by kind, its latency switched off for the CPU runs. */
class CountingBucket extends SlowBucket {
  instant = false;
  readonly counts = { manifestGets: 0, leafGets: 0, recordGets: 0, recordPuts: 0, indexReads: 0, indexWrites: 0 };

  protected override wait(): Promise<void> {
    return this.instant ? Promise.resolve() : super.wait();
  }
  override getBytes(key: string): Promise<Buffer | undefined> {
    if (key.startsWith('commits/')) this.counts.manifestGets++;
    else if (key.startsWith('leaves/')) this.counts.leafGets++;
    else if (key.includes('/records/')) this.counts.recordGets++;
    return super.getBytes(key);
  }
  override read(key: string) {
    this.counts.indexReads++;
    return super.read(key);
  }
  override writeIf(key: string, bytes: Buffer, expected: string | undefined): Promise<boolean> {
    this.counts.indexWrites++;
    return super.writeIf(key, bytes, expected);
  }
  async putLeaf(key: string, body: Buffer): Promise<void> {
    if (key.includes('/records/')) this.counts.recordPuts++;
    await this.wait();
    this.put(key, body);
  }
  async putJson(key: string, value: unknown): Promise<void> {
    await this.wait();
    this.put(key, Buffer.from(JSON.stringify(value)));
  }
  async getJson(key: string): Promise<unknown> {
    const bytes = await this.getBytes(key);
    return bytes === undefined ? undefined : JSON.parse(bytes.toString('utf8'));
  }
  async deleteKey(key: string): Promise<void> {
    await this.wait();
    this.objects.delete(key);
  }
}

interface Phases {
  plan: { wallMs: number; cpuMs: number };
  records: { wallMs: number; cpuMs: number };
  indexes: { wallMs: number; cpuMs: number };
  finish: { wallMs: number; cpuMs: number };
  packages: number;
  bodiesRead: number;
  counts: CountingBucket['counts'];
}

function stateDir(name: string): string {
  return mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), name));
}

/** One rebuild of `commits` commits as one worker runs it, phase by phase. */
async function phases(commits: number, instant: boolean): Promise<{ phases: Phases; bucket: CountingBucket }> {
  const random = mulberry32(32);
  const bucket = new CountingBucket(random);
  fillNugetShaped((key, bytes) => bucket.put(key, bytes), commits, random);
  bucket.instant = instant;
  const dir = stateDir('catalog-sync-bench-view-rebuild-');
  const local = new LocalStore(dir);
  const stores: RebuildStores = {
    mirror: { store: bucket, prefix: '', where: bucket.where },
    cursors: local,
    plans: local,
    records: new SnapshotRecordStore(bucket, '', `${bucket.where}/view-rebuild/`),
    documents: bucket,
  };
  try {
    const plan = await timed(() =>
      planRebuild(stores, { holder: 'bench', shards: SHARDS, rangeManifests: RANGE_MANIFESTS }),
    );
    const planned = plan.result;
    if (planned.running) throw new Error('a rebuild is running');
    const options = { holder: 'bench' };
    const records = await timed(async () => {
      for (const range of planned.ranges) await runRecordsRange(stores, planned.plan, range, options);
    });
    let packages = 0;
    let bodiesRead = 0;
    const indexes = await timed(async () => {
      for (const shard of planned.shards) {
        const outcome = await runIndexShard(stores, planned.plan, shard, options);
        packages += outcome.totals.commits;
        bodiesRead += outcome.totals.bytes;
      }
    });
    // The records are kept for the micro-runs: the finish is timed on a copy of nothing but the plan.
    const kept = [...bucket.objects].filter(([key]) => key.includes('/records/'));
    const finish = await timed(() => finishRebuild(stores, { rebuildId: planned.plan.backfillId }));
    for (const [key, value] of kept) bucket.objects.set(key, value);
    const pick = (t: { wallMs: number; cpuMs: number }) => ({ wallMs: round(t.wallMs, 0), cpuMs: round(t.cpuMs, 0) });
    return {
      phases: {
        plan: pick(plan),
        records: pick(records),
        indexes: pick(indexes),
        finish: pick(finish),
        packages,
        bodiesRead,
        counts: { ...bucket.counts },
      },
      bucket,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** CPU (and wall) of the record writes alone, and of the latest details leaves' GETs alone, on `bucket`. */
async function microRuns(bucket: CountingBucket): Promise<{ recordWrite: Cost; leafGet: Cost }> {
  const records = [...bucket.objects].filter(([key]) => key.includes('/records/'));
  const writes = await timed(() =>
    forEachBounded(records, 32, async ([key, value]) => bucket.putLeaf(`${key}.again`, value.bytes)),
  );
  const leaves: { key: string; id: string; version: string; type: string; commitKey: string }[] = [];
  for (const [key, value] of bucket.objects)
    if (key.startsWith('commits/')) {
      const manifest = JSON.parse(value.bytes.toString('utf8')) as {
        leaves: { key: string; id: string; version: string; type: string }[];
      };
      for (const leaf of manifest.leaves)
        if (leaf.type === 'PackageDetails') leaves.push({ ...leaf, commitKey: key.slice(8, -5) });
    }
  const mirror = { store: bucket, prefix: '', where: bucket.where };
  const gets = await timed(() =>
    forEachBounded(leaves, 64, async (leaf) => {
      leafFieldsOf(await new MirrorLeaf(leaf as never, mirror, leaf.commitKey).json());
    }),
  );
  return {
    recordWrite: {
      count: records.length,
      wallMs: writes.wallMs / records.length,
      cpuMs: writes.cpuMs / records.length,
    },
    leafGet: { count: leaves.length, wallMs: gets.wallMs / leaves.length, cpuMs: gets.cpuMs / leaves.length },
  };
}

interface Cost {
  count: number;
  /** Wall ms per item at the phase's concurrency (a request waits 20-50 ms). */
  wallMs: number;
  cpuMs: number;
}

/** The CPU of this process's waited-for children so far (Linux: /proc/self/stat cutime + cstime), ms. */
function childrenCpuMs(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  // After "pid (comm) ": state is field 3, so cutime (16) and cstime (17) are at 13 and 14.
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

/** The CLI (bin/catalog-sync.js, which runs the build's dist/cli/), from bench/ under tsx or from dist/bench/. */
function cliPath(): string {
  for (const candidate of ['../bin/catalog-sync.js', '../../bin/catalog-sync.js']) {
    const path = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new Error('bin/catalog-sync.js is missing');
}

async function folderWorkers(commits: number, log: (text: string) => void) {
  const random = mulberry32(33);
  const bucket = new SlowBucket(random);
  fillNugetShaped((key, bytes) => bucket.put(key, bytes), commits, random);
  const dir = stateDir('catalog-sync-bench-view-workers-');
  const local = new LocalStore(dir);
  try {
    await forEachBounded([...bucket.objects], 64, async ([key, value]) =>
      key.startsWith('leaves/')
        ? local.putLeaf(key, value.bytes)
        : local.putJson(key, JSON.parse(value.bytes.toString('utf8'))),
    );
    const cli = cliPath();
    const runs: { workers: number; wallMs: number; cpuMs: number }[] = [];
    for (const workers of [1, 2, 1, 2]) {
      rmSync(join(dir, 'packages'), { recursive: true, force: true });
      const cpu0 = childrenCpuMs();
      const started = performance.now();
      const child = spawn(
        process.execPath,
        [cli, 'view', '--rebuild', '--workers', String(workers), '--json', '--data-dir', dir],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let out = '';
      child.stdout.on('data', (chunk) => (out += chunk));
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
      const wallMs = performance.now() - started;
      if (code !== 0) throw new Error(`view --rebuild --workers ${workers} exited ${code}: ${out}`);
      runs.push({ workers, wallMs: round(wallMs, 0), cpuMs: round(childrenCpuMs() - cpu0, 0) });
      log(
        `  folder --workers ${workers}: ${round(wallMs, 0)} ms, ${runs.at(-1)!.cpuMs} ms CPU (${JSON.parse(out).packages} packages)`,
      );
    }
    const best = (workers: number) =>
      Math.min(...runs.filter((run) => run.workers === workers).map((run) => run.wallMs));
    return { runs, speedUp: round(best(1) / best(2), 2) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Cores busy with anything meanwhile, from /proc/stat (a loaded machine's figures are a loaded machine's). */
function loadNow(): string {
  try {
    return execFileSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).split(' ').slice(0, 3).join(' ');
  } catch {
    return 'unknown';
  }
}

export async function runViewRebuildBench(commits: number, log: (text: string) => void) {
  log(
    `view rebuild: ${commits} commits of nuget.org's shape; ranges of ${RANGE_MANIFESTS} manifests, ${SHARDS} shards; load average ${loadNow()}`,
  );
  const slow = await phases(commits, false);
  const fast = await phases(commits, true);
  const micro = await microRuns(fast.bucket);
  const slowMicro = await microRuns(slow.bucket);
  const { counts } = slow.phases;
  const perManifestCpu =
    (fast.phases.records.cpuMs - micro.recordWrite.cpuMs * micro.recordWrite.count) / counts.manifestGets;
  const perIndexCpu = (fast.phases.indexes.cpuMs - micro.leafGet.cpuMs * fast.phases.bodiesRead) / fast.phases.packages;
  const perItem = {
    manifestGet: {
      count: counts.manifestGets,
      wallMs: round(slow.phases.records.wallMs / counts.manifestGets, 2),
      cpuMs: round(perManifestCpu, 3),
    },
    recordWrite: {
      count: micro.recordWrite.count,
      wallMs: round(slowMicro.recordWrite.wallMs, 2),
      cpuMs: round(micro.recordWrite.cpuMs, 3),
    },
    leafGet: {
      count: fast.phases.bodiesRead,
      wallMs: round(slowMicro.leafGet.wallMs, 2),
      cpuMs: round(micro.leafGet.cpuMs, 3),
    },
    indexPut: {
      count: fast.phases.packages,
      wallMs: round(slow.phases.indexes.wallMs / fast.phases.packages, 2),
      cpuMs: round(perIndexCpu, 3),
    },
  };
  log(`  S3 shape, one worker: ${JSON.stringify({ withLatency: slow.phases, noLatency: fast.phases })}`);
  for (const [name, cost] of Object.entries(perItem))
    log(`  ${name}: ${cost.count} × ${cost.wallMs} ms wall each at the phase's concurrency, ${cost.cpuMs} ms CPU each`);
  const workers = await folderWorkers(commits, log);
  log(`  folder speed-up, 2 workers against 1: ${workers.speedUp}×; load average ${loadNow()}`);
  return {
    commits,
    shards: SHARDS,
    rangeManifests: RANGE_MANIFESTS,
    s3: { withLatency: slow.phases, noLatency: fast.phases },
    perItem,
    folder: workers,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await runViewRebuildBench(Number(process.argv[2] ?? '2000'), (text) => console.log(text));
  console.log(JSON.stringify(result));
}
