/**
 * The private feed's rows of `npm run bench` (issue 33, part 1): the feed's packages/s and MB/s against a bare
 * download + upload loop at the same concurrency, on packages sized like nuget.org's (log-normal: median 280 KB, mean
 * about 1 MB, about 1% above 10 MB, capped at 250 MB; plus `large` packages near 250 MB), from a source answering
 * after 20 ms (feed-source.ts, a process of its own), on S3 (s3rver in /dev/shm where the machine has it, real
 * multipart uploads, behind a front that gives every answer 20-50 ms and 2% of them 200 ms) and on a folder (the
 * system's temporary folder, synced writes); the peak RSS of the feed's process while one package of `largeMib` MiB
 * streams, on each; and with `demo`, the feed's size and build time for the demo catalog, on a folder (about 2 min
 * more: the catalog's 765 real packages are built first).
 *
 * Alone: `node dist/bench/feed-row.js [--packages N] [--large N] [--long-packages N] [--long-large N] [--large-mib N]
 * [--concurrency N] [--packages-at-once N] [--seed N] [--demo] [--only latency,s3,folder] [--profile DIR]` (after
 * `tsc -p bench/tsconfig.json`; `--profile`: each feed run's V8 CPU profile written in DIR, for
 * `node dist/bench/profile-summary.js DIR/feed-{place}-{packages}.cpuprofile`).
 */
import { fork } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFAULT_FEED_CONCURRENCY, DEFAULT_FEED_DOWNLOADS } from '../lambda/feed/index.js';
import { LocalStore, S3SnapshotStore } from '../lambda/stores/index.js';
import { LocalViewDocuments, S3ViewDocuments } from '../lambda/view/index.js';
import { clientsFor, createBucket, startS3 } from '../testkit/index.js';
import { runChild } from './children.js';
import { demoFeed, mirrorOf, type DemoFeed } from './feed-mirror.js';
import type { FeedScenarioConfig, FeedScenarioResult } from './feed-scenario.js';
import {
  feedText,
  steadyStateOf,
  type FeedBulkRows,
  type FeedPlaceRows,
  type FeedRows,
  type FeedRun,
} from './feed-report.js';
import type { Options } from './options.js';
import type { SourcePackage } from './feed-source.js';
import { packageSizes } from './package-sizes.js';
import { FRONT_LATENCY, startS3LatencyFront } from './s3-latency-front.js';

const here = dirname(fileURLToPath(import.meta.url));
const MB = 1_000_000;
const MiB = 1024 * 1024;

/** The places of the rows: S3 bound by latency, s3rver, a folder. */
export type FeedPlaceName = 'latency' | 's3' | 'folder';

/** The rows' settings. */
export interface FeedRowsOptions {
  readonly packages: number;
  /** Packages of the second latency-bound run (0: none). */
  readonly longPackages: number;
  /**
   * Packages of the second latency-bound run made near 250 MB: with 2,000 packages and 2, the issue's own mix ("about
   * 1 MB on average, under 3% above 10 MB, a few near 250 MB"), as a backlog is.
   */
  readonly longLarge: number;
  readonly large: number;
  readonly largeMib: number;
  readonly concurrency: number;
  /** The feed's packages made at once (default its own). */
  readonly packagesAtOnce?: number;
  readonly seed: number;
  readonly demo: boolean;
  /** Only these places' rows (default all): for comparing two builds in the same minutes. */
  readonly only?: ReadonlySet<FeedPlaceName>;
  /** Write each feed run's V8 CPU profile in this folder (`bench/profile-summary.js` reads one). */
  readonly profileDir?: string;
  readonly log: (text: string) => void;
}

/** The rows' settings from `npm run bench`'s flags (`--feed-…`). */
export function feedRowsOptions(
  opts: Pick<Options, 'feedPackages' | 'feedLarge' | 'feedLargeMib' | 'feedConcurrency' | 'feedDemo' | 'seed'>,
  log: (text: string) => void,
): FeedRowsOptions {
  return {
    packages: opts.feedPackages,
    longPackages: 2000,
    longLarge: 2,
    large: opts.feedLarge,
    largeMib: opts.feedLargeMib,
    concurrency: opts.feedConcurrency,
    seed: opts.seed,
    demo: opts.feedDemo,
    log,
  };
}

/** Runs the rows. */
export async function runFeedRows(options: FeedRowsOptions): Promise<FeedRows> {
  const sizes = packageSizes(options.packages, options.large, options.seed);
  const main: SourcePackage[] = sizes.map((size, i) => ({ id: `Bench.Pkg${i}`, version: `1.0.${i}`, size }));
  const big: SourcePackage = { id: 'Bench.Large', version: '1.0.0', size: options.largeMib * MiB };
  // The latency-bound rows again over more packages: the feed's fixed cost of a run (the consumer's start, the first
  // package's reads, the last ones' documents) spread over a longer run, as a backlog is.
  const long: SourcePackage[] = packageSizes(options.longPackages, options.longLarge, options.seed + 1).map(
    (size, i) => ({
      id: `Bench.Long${i}`,
      version: `1.0.${i}`,
      size,
    }),
  );
  const s3rver = await startS3();
  const front = await startS3LatencyFront(s3rver.endpoint, options.seed);
  const dir = await mkdtemp(join(tmpdir(), 'catalog-sync-feed-bench-'));
  const source = fork(
    join(here, 'feed-source.js'),
    [JSON.stringify({ packages: [...main, ...long, big], latencyMs: 20 })],
    {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  try {
    const ready = await new Promise<{ port: number; digests: { hash: string; size: number }[] }>((resolve, reject) => {
      source.once('exit', (code) => reject(new Error(`feed-source exited (${code})`)));
      source.once('message', resolve as (message: unknown) => void);
    });
    const sourceUrl = `http://127.0.0.1:${ready.port}/v3/index.json`;
    const bucket = 'feed-bench';
    await createBucket(s3rver.endpoint, bucket);
    // The mirrors are written to s3rver directly: only the measured runs go through the front.
    const { s3, dynamo } = clientsFor({ s3Endpoint: s3rver.endpoint, dynamoEndpoint: 'http://127.0.0.1:9' });
    dynamo.destroy();
    const local = new LocalStore(dir);
    const places = {
      s3: {
        store: new S3SnapshotStore(bucket, s3),
        documents: new S3ViewDocuments(bucket, s3),
        where: `s3://${bucket}/`,
      },
      folder: { store: local, documents: new LocalViewDocuments(dir, local), where: `${dir}/` },
    };
    options.log(
      `feed: mirrors and views of ${main.length} packages (${Math.round(sum(sizes) / MB)} MB), S3 and folder`,
    );
    const runs = (name: FeedPlaceName) => options.only === undefined || options.only.has(name);
    const none = Promise.resolve({ ticks: '0', commitId: '' });
    const [s3Main, s3Large, folderMain, folderLarge] = await Promise.all([
      runs('s3') ? mirrorOf(places.s3, 'main/', main, ready.digests) : none,
      runs('s3') ? mirrorOf(places.s3, 'large/', [big], ready.digests.slice(-1)) : none,
      runs('folder') ? mirrorOf(places.folder, 'main/', main, ready.digests) : none,
      runs('folder') ? mirrorOf(places.folder, 'large/', [big], ready.digests.slice(-1)) : none,
    ]);
    const cursors = { s3: { main: s3Main, large: s3Large }, folder: { main: folderMain, large: folderLarge } };
    s3.destroy();
    const env = {
      ...process.env,
      AWS_ENDPOINT_URL_S3: front.endpoint,
      S3_FORCE_PATH_STYLE: 'true',
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
    };
    const run = (config: FeedScenarioConfig) => runChild<FeedScenarioResult>('feed-scenario.js', config, env);
    const sourceCpu = (): Promise<number> =>
      new Promise((resolve) => {
        const answer = (message: { type?: string; ms?: number }) => {
          if (message.type !== 'cpu') return;
          source.off('message', answer);
          resolve(message.ms!);
        };
        source.on('message', answer);
        source.send({ type: 'cpu' });
      });
    const profiling = options.profileDir === undefined ? {} : { profileDir: options.profileDir };
    const rated = async (config: FeedScenarioConfig): Promise<FeedRun> => {
      const before = front.requests().all;
      const sourceBefore = await sourceCpu();
      const serverBefore = process.cpuUsage();
      const result = await run(config);
      const server = process.cpuUsage(serverBefore);
      const sourceCpuMs = Math.round((await sourceCpu()) - sourceBefore);
      const serverCpuMs = config.place.kind === 's3' ? Math.round((server.user + server.system) / 1000) : undefined;
      const seconds = result.wallMs / 1000;
      const requests =
        result.requests === undefined
          ? front.requests().all - before
          : Object.values(result.requests).reduce((a, b) => a + b, 0);
      return {
        ...result,
        packagesPerSec: round(result.packages / seconds),
        mbPerSec: round(result.bytes / MB / seconds),
        ...(config.place.kind === 'folder' ? {} : { s3RequestsPerPackage: round(requests / result.packages) }),
        sourceCpuMs,
        ...(serverCpuMs === undefined ? {} : { serverCpuMs }),
        coresBusy: round((result.cpuMs + sourceCpuMs + (serverCpuMs ?? 0)) / result.wallMs),
      };
    };
    const latencyRows = async (packages: readonly SourcePackage[], from: number): Promise<FeedBulkRows> => {
      // The packages and their digests go through a file: as an argument, a thousand of them pass Linux's 128 KiB.
      const listFile = join(dir, `latency-${packages.length}.json`);
      await writeFile(
        listFile,
        JSON.stringify({ packages, digests: ready.digests.slice(from, from + packages.length) }),
      );
      const base = {
        place: { kind: 'memory', seed: options.seed, listFile } as const,
        source: sourceUrl,
        concurrency: options.concurrency,
        packages: [],
        prefix: 'main/',
        ...(options.packagesAtOnce === undefined ? {} : { packagesAtOnce: options.packagesAtOnce }),
      };
      options.log(`feed (S3 latency-bound, in memory, ${packages.length} packages): bare download + upload loop`);
      const bare = await rated({ ...base, mode: 'bare' });
      options.log(`feed (S3 latency-bound, in memory, ${packages.length} packages): the feed consumer`);
      const engine = await rated({ ...base, mode: 'engine', ...profiling });
      return { bare, engine, ratio: round(engine.packagesPerSec / bare.packagesPerSec) };
    };
    const rowsOn = async (name: 's3' | 'folder'): Promise<FeedPlaceRows> => {
      const place: FeedScenarioConfig['place'] = name === 's3' ? { kind: 's3', bucket } : { kind: 'folder', dir };
      const base = {
        place,
        source: sourceUrl,
        concurrency: options.concurrency,
        packages: main,
        prefix: 'main/',
        ...(options.packagesAtOnce === undefined ? {} : { packagesAtOnce: options.packagesAtOnce }),
      };
      options.log(`feed (${name}): bare download + upload loop`);
      const bare = await rated({ ...base, mode: 'bare' });
      options.log(`feed (${name}): the feed consumer`);
      const engine = await rated({ ...base, mode: 'engine', viewCursor: cursors[name].main, ...profiling });
      const largeBase = { ...base, prefix: 'large/', packages: [big] };
      options.log(`feed (${name}): one ${options.largeMib} MiB package, bare`);
      const largeBare = await rated({ ...largeBase, mode: 'bare' });
      options.log(`feed (${name}): one ${options.largeMib} MiB package, the feed`);
      const large = await rated({ ...largeBase, mode: 'engine', viewCursor: cursors[name].large });
      return {
        bare,
        engine,
        ratio: round(engine.packagesPerSec / bare.packagesPerSec),
        largeBare,
        large,
        largeRatio: round(large.mbPerSec / largeBare.mbPerSec),
      };
    };
    const latencyBound = runs('latency') ? await latencyRows(main, 0) : undefined;
    const latencyBoundLong = long.length === 0 || !runs('latency') ? undefined : await latencyRows(long, main.length);
    const s3Rows = runs('s3') ? await rowsOn('s3') : undefined;
    const folderRows = runs('folder') ? await rowsOn('folder') : undefined;
    let demo: DemoFeed | undefined;
    if (options.demo) {
      options.log('feed: the demo catalog');
      demo = await demoFeed();
    }
    return {
      packages: main.length,
      bytes: sum(sizes),
      above10MbShare: Math.round((sizes.filter((size) => size > 10 * MB).length / sizes.length) * 1000) / 1000,
      largest: Math.max(...sizes),
      concurrency: options.concurrency,
      packagesAtOnce: options.packagesAtOnce ?? DEFAULT_FEED_CONCURRENCY,
      largeMib: options.largeMib,
      s3Latency: FRONT_LATENCY,
      ...(latencyBound === undefined ? {} : { latencyBound }),
      ...(latencyBoundLong === undefined ? {} : { latencyBoundLong }),
      ...(latencyBound === undefined || latencyBoundLong === undefined
        ? {}
        : { steadyState: steadyStateOf(latencyBound, latencyBoundLong) }),
      cores: availableParallelism(),
      ...(s3Rows === undefined ? {} : { s3: s3Rows }),
      ...(folderRows === undefined ? {} : { folder: folderRows }),
      ...(demo === undefined ? {} : { demo }),
    };
  } finally {
    source.kill('SIGTERM');
    await front.stop();
    await s3rver.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0);
const round = (value: number): number => Math.round(value * 100) / 100;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const { values } = parseArgs({
    options: {
      packages: { type: 'string', default: '200' },
      'long-packages': { type: 'string', default: '2000' },
      'long-large': { type: 'string', default: '2' },
      large: { type: 'string', default: '0' },
      'large-mib': { type: 'string', default: '250' },
      concurrency: { type: 'string', default: String(DEFAULT_FEED_DOWNLOADS) },
      'packages-at-once': { type: 'string' },
      seed: { type: 'string', default: '42' },
      demo: { type: 'boolean', default: false },
      only: { type: 'string' },
      profile: { type: 'string' },
    },
    strict: true,
  });
  const started = performance.now();
  runFeedRows({
    packages: Number(values.packages),
    longPackages: Number(values['long-packages']),
    longLarge: Number(values['long-large']),
    large: Number(values.large),
    largeMib: Number(values['large-mib']),
    concurrency: Number(values.concurrency),
    ...(values['packages-at-once'] === undefined ? {} : { packagesAtOnce: Number(values['packages-at-once']) }),
    seed: Number(values.seed),
    demo: values.demo,
    ...(values.only === undefined ? {} : { only: new Set(values.only.split(',') as FeedPlaceName[]) }),
    ...(values.profile === undefined ? {} : { profileDir: values.profile }),
    log: (text) =>
      process.stderr.write(`[feed ${((performance.now() - started) / 1000).toFixed(0).padStart(3)}s] ${text}\n`),
  }).then(
    (rows) => {
      process.stdout.write(`${feedText(rows)}\n${JSON.stringify(rows)}\n`);
      process.exit(0);
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
