/**
 * One measured run of the feed's rows, in a child process of its own (its peak RSS and CPU are the run's), on S3
 * (s3rver behind the latency front) or on a folder:
 * `engine`, the feed consumer (`keepFeed`) as the Lambda or `catalog-sync feed` wires it, over a mirror and latest
 * view already written; `bare`, the least a copy costs: each package's GET (undici) piped into `@aws-sdk/lib-storage`'s
 * `Upload` with the same part size and parts in flight (S3), or into a file synced, renamed into place and its folder
 * synced (a folder: as durable as the feed's package write, its folder syncs grouped as the feed's are), at the same
 * concurrency; no hash, no leaf, no document, no state.
 *
 * Usage (forked by feed-row.ts): feed-scenario.js '<FeedScenarioConfig as JSON>'; sends `{ type: 'result', result }`.
 */
import { mkdir, open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { Upload } from '@aws-sdk/lib-storage';
import { request } from 'undici';
import { HttpClient } from '../lambda/catalog/index.js';
import { consumerKey, type SnapshotReader } from '../lambda/consumer/index.js';
import { VIEW_CONSUMER } from '../lambda/contract/index.js';
import {
  DEFAULT_FEED_CONCURRENCY,
  DEFAULT_PART_BYTES,
  DEFAULT_PARTS_AT_ONCE,
  keepFeed,
  LocalFeedStorage,
  S3FeedStorage,
  type FeedStorage,
} from '../lambda/feed/index.js';
import { awsClients, LocalStore, S3SnapshotStore } from '../lambda/stores/index.js';
import { eachBounded } from './bounded.js';
import { profiled } from './profiler.js';
import type { LatencyBucket } from './latency-bucket.js';
import type { SourcePackage } from './feed-source.js';
import { MemoryCursorStore } from './memory-cursor-store.js';

/** What a run is told. */
export interface FeedScenarioConfig {
  readonly mode: 'engine' | 'bare';
  /** Where the mirror is and the packages go: `s3://{bucket}/` (the environment names the endpoint) or a folder. */
  readonly place:
    | { readonly kind: 's3'; readonly bucket: string }
    | { readonly kind: 'folder'; readonly dir: string }
    /** The in-memory bucket with S3's latency (latency-bucket.ts), made in this process with its mirror. */
    | {
        readonly kind: 'memory';
        readonly seed: number;
        /** A JSON file of `{ packages, digests }`: the packages to copy and their digests (their leaves are written). */
        readonly listFile: string;
      };
  readonly prefix: string;
  /** The source's service index. */
  readonly source: string;
  /** Downloads in flight: the bare loop's copies, the feed's downloads. */
  readonly concurrency: number;
  /** `engine`: packages made at once (default the feed's own, `DEFAULT_FEED_CONCURRENCY`). */
  readonly packagesAtOnce?: number;
  /** `bare`: the packages to copy. */
  readonly packages: readonly SourcePackage[];
  /** `engine`: the latest view's cursor (ticks) and commit id, which the feed never passes. */
  readonly viewCursor?: { readonly ticks: string; readonly commitId: string };
  /** `engine`: write the run's V8 CPU profile in this folder (`feed-{place}-{packages}.cpuprofile`). */
  readonly profileDir?: string;
}

/** What a run measured. */
export interface FeedScenarioResult {
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly maxRssMb: number;
  readonly packages: number;
  readonly bytes: number;
  /** `memory`: the measured run's requests, by kind (latency-bucket.ts's `classOf`). */
  readonly requests?: Readonly<Record<string, number>>;
}

/** The bare loop: GET, then the body straight into S3 or a file. */
async function bare(
  config: FeedScenarioConfig,
  s3: ReturnType<typeof awsClients>['s3'],
  bucket: LatencyBucket | undefined,
): Promise<number> {
  const base = new URL(config.source).origin;
  const place = config.place;
  const folder = place.kind === 'folder' ? join(place.dir, `${config.prefix}bare`) : '';
  if (place.kind === 'folder') await mkdir(join(folder, 'tmp'), { recursive: true });
  const syncFolder = groupedSyncs(folder);
  let bytes = 0;
  await eachBounded(config.packages, config.concurrency, async (pkg) => {
    const id = pkg.id.toLowerCase();
    const name = `${id}.${pkg.version}.nupkg`;
    const response = await request(`${base}/flat/${id}/${pkg.version}/${name}`);
    if (bucket !== undefined) {
      await bucket.putStream(`${config.prefix}bare/${name}`, response.body);
    } else if (place.kind === 's3') {
      await new Upload({
        client: s3,
        params: { Bucket: place.bucket, Key: `${config.prefix}bare/${name}`, Body: response.body },
        partSize: DEFAULT_PART_BYTES,
        queueSize: DEFAULT_PARTS_AT_ONCE,
      }).done();
    } else if (place.kind === 'folder') {
      const temporary = join(folder, 'tmp', name);
      const handle = await open(temporary, 'w');
      try {
        for await (const piece of response.body) await handle.write(piece as Uint8Array);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temporary, join(folder, name));
      // The rename is durable once the folder that holds the name is synced, as the feed's package write makes it.
      await syncFolder();
    }
    bytes += pkg.size;
  });
  return bytes;
}

/**
 * The syncs of folder `dir`, grouped as the feed's durable writer groups them: a sync asked for while one runs is
 * made once, after it, for every request made meanwhile.
 */
function groupedSyncs(dir: string): () => Promise<void> {
  let running: Promise<void> | undefined;
  let next: Promise<void> | undefined;
  const start = (): Promise<void> => {
    const sync = (async () => {
      const handle = await open(dir, 'r');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
    })().finally(() => {
      if (running === sync) running = undefined;
    });
    running = sync;
    return sync;
  };
  return () => {
    if (next !== undefined) return next;
    if (running === undefined) return start();
    next = running
      .catch(() => undefined)
      .then(() => {
        next = undefined;
        return start();
      });
    return next;
  };
}

/** The feed consumer over the mirror and view at `config.prefix`. */
async function engine(
  config: FeedScenarioConfig,
  s3: ReturnType<typeof awsClients>['s3'],
  bucket: LatencyBucket | undefined,
): Promise<{ stored: number; storedBytes: number }> {
  const place = config.place;
  let store: SnapshotReader;
  let storage: FeedStorage;
  if (bucket !== undefined) {
    store = bucket;
    storage = bucket;
  } else if (place.kind === 's3') {
    store = new S3SnapshotStore(place.bucket, s3);
    storage = new S3FeedStorage(place.bucket, s3);
  } else if (place.kind === 'folder') {
    const local = new LocalStore(place.dir);
    store = local;
    storage = new LocalFeedStorage(place.dir, local);
  } else throw new Error('a memory place needs its bucket');
  const where =
    place.kind === 's3' ? `s3://${place.bucket}/${config.prefix}` : place.kind === 'folder' ? place.dir : bucket!.where;
  const mirror = { store, prefix: config.prefix, where };
  const cursors = new MemoryCursorStore(0);
  await cursors.compareAndSet(consumerKey(mirror, VIEW_CONSUMER), undefined, {
    value: BigInt(config.viewCursor!.ticks),
    commitId: config.viewCursor!.commitId,
    runId: 'bench',
  });
  const http = new HttpClient({ connections: config.concurrency });
  const result = await keepFeed(
    {
      storage,
      mirror,
      baseUrl: 'https://feed.bench.test/',
      http,
      source: config.source,
      ...(config.packagesAtOnce === undefined ? {} : { concurrency: config.packagesAtOnce }),
      downloads: config.concurrency,
    },
    { cursors, lease: false },
  );
  await http.close();
  if (result.quarantined > 0 || result.waiting > 0)
    throw new Error(`the feed did not store every package: ${JSON.stringify(result)}`);
  return result;
}

/** The in-memory bucket of a `memory` place, its mirror and view written (no latency yet); the view's cursor. */
async function memoryBucket(
  config: FeedScenarioConfig,
): Promise<
  { bucket: LatencyBucket; viewCursor: { ticks: string; commitId: string }; packages: SourcePackage[] } | undefined
> {
  if (config.place.kind !== 'memory') return undefined;
  // Loaded only here: the other places' runs measure the feed's peak RSS, which the testkit must not swell.
  const [{ mirrorOf }, { LatencyBucket }] = await Promise.all([
    import('./feed-mirror.js'),
    import('./latency-bucket.js'),
  ]);
  const bucket = new LatencyBucket(config.place.seed);
  const list = JSON.parse(await readFile(config.place.listFile, 'utf8')) as {
    packages: SourcePackage[];
    digests: { hash: string; size: number }[];
  };
  const viewCursor = await mirrorOf(
    { store: bucket, documents: bucket, where: `${bucket.where}/` },
    config.prefix,
    list.packages,
    list.digests,
  );
  for (const key of Object.keys(bucket.counts)) delete bucket.counts[key];
  bucket.latency = true;
  bucket.tracing = process.env['FEED_BENCH_TRACE'] !== undefined;
  return { bucket, viewCursor, packages: list.packages };
}

async function run(config: FeedScenarioConfig): Promise<FeedScenarioResult> {
  // The feed's clients as its Lambda makes them (its downloads and packages at once); the bare loop's for its copies.
  const { s3 } = awsClients(
    process.env,
    config.concurrency + (config.mode === 'engine' ? (config.packagesAtOnce ?? DEFAULT_FEED_CONCURRENCY) : 16),
  );
  const memory = await memoryBucket(config);
  if (memory !== undefined) config = { ...config, viewCursor: memory.viewCursor, packages: memory.packages };
  const bucket = memory?.bucket;
  const cpu = process.cpuUsage();
  const started = performance.now();
  let packages: number;
  let bytes: number;
  if (config.mode === 'bare') {
    bytes = await bare(config, s3, bucket);
    packages = config.packages.length;
  } else {
    const result = await profiled(
      config.profileDir === undefined
        ? undefined
        : join(config.profileDir, `feed-${config.place.kind}-${config.packages.length}.cpuprofile`),
      () => engine(config, s3, bucket),
    );
    packages = result.stored;
    bytes = result.storedBytes;
  }
  const wallMs = performance.now() - started;
  if (bucket?.tracing === true) {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(
      `${process.env['FEED_BENCH_TRACE']}-${config.mode}-${config.packages.length}.json`,
      JSON.stringify({ started, ended: started + wallMs, trace: bucket.trace }),
    );
  }
  const used = process.cpuUsage(cpu);
  s3.destroy();
  return {
    wallMs: Math.round(wallMs),
    cpuMs: Math.round((used.user + used.system) / 1000),
    maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    packages,
    bytes,
    ...(bucket === undefined ? {} : { requests: { ...bucket.counts } }),
  };
}

if (process.send !== undefined) {
  run(JSON.parse(process.argv[2]!) as FeedScenarioConfig).then(
    (result) => process.send!({ type: 'result', result }, () => process.exit(0)),
    (error: unknown) =>
      process.send!({ type: 'error', error: String((error as Error)?.stack ?? error) }, () => process.exit(1)),
  );
}
