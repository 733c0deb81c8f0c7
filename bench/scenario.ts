/**
 * One benchmark scenario, in a process of its own so that its peak RSS (`process.resourceUsage().maxRSS`)
 * and CPU time (`process.cpuUsage()`) are its own. Started by run.ts with `fork`, the {@link ScenarioConfig} as
 * JSON in argv[2]; sends one {@link ScenarioResult} over IPC and exits.
 *
 * Kinds:
 * - `engine`: `runSlice` exactly as the Lambda wires it (awsClients, HttpClient sized to the concurrency,
 *   CatalogClient, S3SnapshotStore), with an in-memory cursor store (with latency) or DynamoDB.
 * - `sequential`: the documented algorithm (catalog-protocol.md, "The cursor") with the same clients, one leaf
 *   at a time: fetch it, then PUT it; a commit's manifest after its leaves; the cursor at the end.
 * - `ceiling` / `ceiling-lean`: a bare loop over the same leaves (planned before the clock starts), `concurrency`
 *   workers doing GET + decompress + PUT, no validation, ordering, manifests or cursor. `ceiling` PUTs with the
 *   same AWS SDK client as the engine; `ceiling-lean` PUTs with plain undici, signed with SigV4 (sigv4.ts): what
 *   the PUT costs without the SDK's middleware stack.
 */
import { promisify } from 'node:util';
import * as zlib from 'node:zlib';
import { constants as perfConstants, PerformanceObserver } from 'node:perf_hooks';
import type { S3Client } from '@aws-sdk/client-s3';
import { Agent } from 'undici';
import { CatalogClient, HttpClient, type PageItem } from '../lambda/catalog/index.js';
import {
  commitKey,
  compareTicks,
  manifestKey,
  MIN_TICKS,
  parseSettings,
  type RunSummary,
  type Ticks,
} from '../lambda/contract/index.js';
import {
  awsClients,
  type CursorStore,
  DynamoStore,
  type RunLogStore,
  S3SnapshotStore,
} from '../lambda/stores/index.js';
import { pagesAfter, runSlice, leafKeyOf, manifestOf, metadataOf, type ManifestEntry } from '../lambda/sync/index.js';
import { MemoryCursorStore } from './memory-cursor-store.js';
import { LeanS3SnapshotStore } from './lean-s3-store.js';
import { profiled } from './profiler.js';
import { machineCpuMs, mean, quantile, round, sortedPrefix } from './stats.js';

export type ScenarioKind = 'engine' | 'sequential' | 'ceiling' | 'ceiling-lean';

/** argv[2] of this process. */
export interface ScenarioConfig {
  readonly kind: ScenarioKind;
  /** Row name in the table. */
  readonly label: string;
  /** Service index URL of the replica. */
  readonly source: string;
  readonly s3Endpoint: string;
  readonly bucket: string;
  /** Most leaves (whole commits only, like MAX_LEAVES). */
  readonly leaves: number;
  readonly concurrency: number;
  readonly cursor: 'memory' | 'dynamo';
  readonly cursorLatencyMs: number;
  readonly dynamoTable?: string;
  /** When set, the measured part runs under the V8 CPU profiler and the profile is written there. */
  readonly profileFile?: string;
  /** Engine only: `lean` gives it LeanS3SnapshotStore (SigV4-signed undici PUTs) instead of S3SnapshotStore. */
  readonly store?: 'sdk' | 'lean';
}

/** Per-leaf times, ms. */
export interface LeafTimes {
  readonly p50: number;
  readonly p99: number;
  readonly mean: number;
  readonly fetchP50: number;
  readonly fetchP99: number;
  readonly putP50: number;
  readonly putP99: number;
}

/** What one scenario measured. */
export interface ScenarioResult {
  readonly label: string;
  readonly kind: ScenarioKind;
  readonly concurrency: number;
  readonly cursor: 'memory' | 'dynamo' | 'none';
  readonly leaves: number;
  readonly commits: number;
  readonly bytes: number;
  readonly wallMs: number;
  readonly leavesPerSec: number;
  readonly perLeafMs: LeafTimes;
  /** CPU (user + system) of this process during the measured part, ms. */
  readonly cpuMs: number;
  readonly cpuPerLeafMs: number;
  /** Share of the wall time the event loop was busy (1: CPU-bound on its one thread). */
  readonly eventLoopUtilization: number;
  /** Time in garbage collection during the measured part, ms. */
  readonly gcMs: number;
  /** CPU used by the whole machine during the measured part (all processes), ms; NaN without /proc/stat. */
  readonly machineCpuMs: number;
  /** Peak resident set size of this process, MB (from start to end, module loading included). */
  readonly maxRssMB: number;
  readonly heapUsedMB: number;
  /** Peaks sampled every 100 ms during the run, MB: V8 heap used and reserved, and memory outside it (Buffers). */
  readonly peak: { heapUsedMB: number; heapTotalMB: number; externalMB: number; arrayBuffersMB: number; rssMB: number };
  /** Heap used just after each full (mark-compact) GC during the run, with the leaves stored by then: about the live size. */
  readonly afterMajorGc: { leaves: number; heapUsedMB: number }[];
  readonly stoppedBy?: string;
}

interface Timing {
  record(start: number, fetched: number, stored: number): void;
  summary(): LeafTimes & { count: number };
}

function timing(capacity: number): Timing {
  const total = new Float64Array(capacity);
  const fetch = new Float64Array(capacity);
  const put = new Float64Array(capacity);
  let n = 0;
  return {
    record(start, fetched, stored) {
      if (n >= capacity) return;
      total[n] = stored - start;
      fetch[n] = fetched - start;
      put[n] = stored - fetched;
      n++;
      leavesDone++;
    },
    summary() {
      const t = sortedPrefix(total, n);
      const f = sortedPrefix(fetch, n);
      const p = sortedPrefix(put, n);
      return {
        count: n,
        p50: round(quantile(t, 0.5)),
        p99: round(quantile(t, 0.99)),
        mean: round(mean(t)),
        fetchP50: round(quantile(f, 0.5)),
        fetchP99: round(quantile(f, 0.99)),
        putP50: round(quantile(p, 0.5)),
        putP99: round(quantile(p, 0.99)),
      };
    },
  };
}

interface Measured<T> {
  value: T;
  wallMs: number;
  cpuMs: number;
  elu: number;
  gcMs: number;
  machineCpuMs: number;
}

/** Set from the config: the measured part runs under the CPU profiler, written to this file. */
let profileFile: string | undefined;

/** Measures what happens inside `body`: wall time, CPU, event-loop use, GC, and the machine's CPU. */
async function measured<T>(body: () => Promise<T>): Promise<Measured<T>> {
  return profiled(profileFile, () => measure(body));
}

async function measure<T>(body: () => Promise<T>): Promise<Measured<T>> {
  const sample = (): void => {
    const m = process.memoryUsage();
    peaks.heapUsedMB = Math.max(peaks.heapUsedMB, m.heapUsed / MB);
    peaks.heapTotalMB = Math.max(peaks.heapTotalMB, m.heapTotal / MB);
    peaks.externalMB = Math.max(peaks.externalMB, m.external / MB);
    peaks.arrayBuffersMB = Math.max(peaks.arrayBuffersMB, m.arrayBuffers / MB);
    peaks.rssMB = Math.max(peaks.rssMB, m.rss / MB);
  };
  const sampler = setInterval(sample, 100);
  try {
    return await measureOnly(body);
  } finally {
    clearInterval(sampler);
    sample();
  }
}

const MB = 1024 * 1024;
/** Leaves stored so far in this process (for the heap samples). */
let leavesDone = 0;
const afterMajorGc: { leaves: number; heapUsedMB: number }[] = [];
const peaks = { heapUsedMB: 0, heapTotalMB: 0, externalMB: 0, arrayBuffersMB: 0, rssMB: 0 };

async function measureOnly<T>(body: () => Promise<T>): Promise<Measured<T>> {
  let gcMs = 0;
  const observer = new PerformanceObserver((list) => {
    let major = false;
    for (const entry of list.getEntries()) {
      gcMs += entry.duration;
      if ((entry as { detail?: { kind?: number } }).detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR) major = true;
    }
    // Heap in use just after a full GC: about the live size. Growing with the leaves done means something is kept.
    if (major) afterMajorGc.push({ leaves: leavesDone, heapUsedMB: round(process.memoryUsage().heapUsed / MB, 1) });
  });
  observer.observe({ entryTypes: ['gc'] });
  const machine0 = machineCpuMs();
  const cpu0 = process.cpuUsage();
  const elu0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  const value = await body();
  const wallMs = performance.now() - t0;
  const elu = performance.eventLoopUtilization(elu0).utilization;
  const cpu = process.cpuUsage(cpu0);
  const machine = machineCpuMs() - machine0;
  await new Promise((resolve) => setImmediate(resolve));
  observer.disconnect();
  return { value, wallMs, cpuMs: (cpu.user + cpu.system) / 1000, elu, gcMs, machineCpuMs: machine };
}

function memory(): Pick<ScenarioResult, 'maxRssMB' | 'heapUsedMB' | 'peak' | 'afterMajorGc'> {
  return {
    afterMajorGc,
    maxRssMB: round(process.resourceUsage().maxRSS / 1024, 1),
    heapUsedMB: round(process.memoryUsage().heapUsed / MB, 1),
    peak: {
      heapUsedMB: round(peaks.heapUsedMB, 1),
      heapTotalMB: round(peaks.heapTotalMB, 1),
      externalMB: round(peaks.externalMB, 1),
      arrayBuffersMB: round(peaks.arrayBuffersMB, 1),
      rssMB: round(peaks.rssMB, 1),
    },
  };
}

function cursorStores(config: ScenarioConfig, s3Concurrency: number): { cursors: CursorStore; runLog: RunLogStore; s3: S3Client } {
  const clients = awsClients(process.env, s3Concurrency);
  if (config.cursor === 'dynamo') {
    const store = new DynamoStore(config.dynamoTable!, clients.dynamo);
    return { cursors: store, runLog: store, s3: clients.s3 };
  }
  const store = new MemoryCursorStore(config.cursorLatencyMs);
  return { cursors: store, runLog: store, s3: clients.s3 };
}

async function runEngine(config: ScenarioConfig): Promise<ScenarioResult> {
  const settings = parseSettings({
    CATALOG_SOURCE: config.source,
    CURSOR_NAME: `bench-${config.label.replace(/[^A-Za-z0-9._-]/g, '-')}-${process.pid}`,
    MAX_LEAVES: String(config.leaves),
    MAX_COMMITS: '1000000',
    CONCURRENCY: String(config.concurrency),
  });
  // Wired as lambda/handler.ts does.
  const { cursors, runLog, s3 } = cursorStores(config, settings.concurrency);
  const http = new HttpClient({ connections: settings.concurrency });
  const catalog = new CatalogClient(http, settings.source, settings.allowedOrigins);
  const lean = config.store === 'lean' ? new LeanS3SnapshotStore(config.bucket, config.s3Endpoint, s3, settings.concurrency) : undefined;
  const snapshots = lean ?? new S3SnapshotStore(config.bucket, s3);
  const times = timing(config.leaves);
  const run = await measured(() =>
    runSlice(settings, { catalog, cursors, snapshots, runLog, onLeaf: (a, b, c) => times.record(a, b, c) }),
  );
  const summary: RunSummary = run.value;
  await lean?.close();
  await http.close();
  s3.destroy();
  return result(config, run, summary.leaves, summary.commits, summary.bytes, times.summary(), config.cursor, summary.stoppedBy);
}

function result(
  config: ScenarioConfig,
  run: Omit<Measured<unknown>, 'value'>,
  leaves: number,
  commits: number,
  bytes: number,
  perLeafMs: LeafTimes,
  cursor: ScenarioResult['cursor'],
  stoppedBy?: string,
): ScenarioResult {
  return {
    label: config.label,
    kind: config.kind,
    concurrency: config.concurrency,
    cursor,
    leaves,
    commits,
    bytes,
    wallMs: round(run.wallMs, 1),
    leavesPerSec: round(leaves / (run.wallMs / 1000), 1),
    perLeafMs,
    cpuMs: round(run.cpuMs, 1),
    cpuPerLeafMs: round(run.cpuMs / Math.max(1, leaves), 3),
    eventLoopUtilization: round(run.elu, 3),
    gcMs: round(run.gcMs, 1),
    machineCpuMs: round(run.machineCpuMs, 0),
    ...memory(),
    ...(stoppedBy === undefined ? {} : { stoppedBy }),
  };
}

/** One planned commit, for the sequential and ceiling loops. */
interface PlainCommit {
  readonly ticks: Ticks;
  readonly commitId: string;
  readonly items: PageItem[];
}

/**
 * Steps 2–5 of the documented algorithm: the index, the pages after the cursor (in time order), their items
 * after the cursor, sorted by commit time; cut to whole commits of at most `maxLeaves` leaves (reading pages
 * only until that many are known, plus the next page so the last commit is whole).
 */
async function planCommits(catalog: CatalogClient, cursor: Ticks, maxLeaves: number): Promise<PlainCommit[]> {
  const index = await catalog.getIndex();
  const items: PageItem[] = [];
  let pagesAfterEnough = 0;
  for (const entry of pagesAfter(index, cursor)) {
    const page = await catalog.getPage(entry);
    for (const item of page.items) if (item.commitTicks > cursor) items.push(item);
    if (items.length >= maxLeaves && ++pagesAfterEnough > 1) break;
  }
  items.sort((a, b) => compareTicks(a.commitTicks, b.commitTicks));
  const groups: PlainCommit[] = [];
  for (const item of items) {
    const last = groups.at(-1);
    if (last && last.ticks === item.commitTicks) last.items.push(item);
    else groups.push({ ticks: item.commitTicks, commitId: item.commitId, items: [item] });
  }
  // Whole commits, as the engine takes them: the first always, then while they fit in maxLeaves.
  const commits: PlainCommit[] = [];
  let taken = 0;
  for (const commit of groups) {
    if (commits.length > 0 && taken + commit.items.length > maxLeaves) break;
    commits.push(commit);
    taken += commit.items.length;
  }
  return commits;
}

async function runSequential(config: ScenarioConfig): Promise<ScenarioResult> {
  const { cursors, s3 } = cursorStores(config, 1);
  const http = new HttpClient({ connections: 1 });
  const catalog = new CatalogClient(http, config.source);
  const snapshots = new S3SnapshotStore(config.bucket, s3);
  const name = `bench-sequential-${process.pid}`;
  const times = timing(config.leaves);
  let leaves = 0;
  let bytes = 0;
  let commitsDone = 0;
  const run = await measured(async () => {
    // 1. The cursor.
    const stored = await cursors.read(name);
    const cursor = stored?.value ?? MIN_TICKS;
    // 2–5. Index, pages, items after the cursor, sorted.
    const commits = await planCommits(catalog, cursor, config.leaves);
    // 6. Each leaf in order: fetch it, then store it; a commit's manifest once its leaves are stored.
    for (const commit of commits) {
      const key = commitKey(commit.ticks);
      const entries: ManifestEntry[] = [];
      for (const item of commit.items) {
        const start = performance.now();
        const fetched = await catalog.getLeaf(item);
        const fetchedAt = performance.now();
        const leafKey = leafKeyOf('', key, item);
        await snapshots.putLeaf(leafKey, fetched.body, metadataOf(item));
        times.record(start, fetchedAt, performance.now());
        entries.push({ key: leafKey, id: item.id, version: item.version, type: item.type });
        leaves++;
        bytes += fetched.body.length;
      }
      await snapshots.putJson(manifestKey('', key), manifestOf(commit, entries));
      commitsDone++;
    }
    // 7. The cursor: the last commit processed.
    const last = commits.at(-1);
    if (last) await cursors.compareAndSet(name, stored, { value: last.ticks, commitId: last.commitId, runId: 'sequential' });
  });
  await http.close();
  s3.destroy();
  return result(config, run, leaves, commitsDone, bytes, times.summary(), config.cursor);
}

const gunzip = promisify(zlib.gunzip);
const brotliDecompress = promisify(zlib.brotliDecompress);
const inflate = promisify(zlib.inflate);

async function decode(body: Buffer, encoding: string | string[] | undefined): Promise<Buffer> {
  switch (String(encoding ?? 'identity').toLowerCase()) {
    case 'br':
      return brotliDecompress(body);
    case 'gzip':
      return gunzip(body);
    case 'deflate':
      return inflate(body);
    default:
      return body;
  }
}

async function runCeiling(config: ScenarioConfig, lean: boolean): Promise<ScenarioResult> {
  // Planned before the clock starts: the same leaves the engine takes, with their keys and metadata.
  const planner = new HttpClient({ connections: 2 });
  const commits = await planCommits(new CatalogClient(planner, config.source), MIN_TICKS, config.leaves);
  await planner.close();
  const jobs = commits.flatMap((commit) => {
    const key = commitKey(commit.ticks);
    return commit.items.map((item) => ({ url: new URL(item.url), key: leafKeyOf('', key, item), metadata: metadataOf(item) }));
  });
  const { s3 } = cursorStores(config, config.concurrency);
  // The same pool shape as HttpClient's.
  const agent = new Agent({ connections: config.concurrency, keepAliveTimeout: 30_000, pipelining: 1 });
  // The same PUT as the engine's store: the ceiling differs from the engine only in having no catalog logic.
  const store = lean ? new LeanS3SnapshotStore(config.bucket, config.s3Endpoint, s3, config.concurrency) : new S3SnapshotStore(config.bucket, s3);
  const times = timing(jobs.length);
  let bytes = 0;
  let next = 0;
  const run = await measured(() =>
    Promise.all(
      Array.from({ length: config.concurrency }, async () => {
        while (next < jobs.length) {
          const job = jobs[next++]!;
          const start = performance.now();
          const response = await agent.request({
            origin: job.url.origin,
            path: job.url.pathname,
            method: 'GET',
            headers: { accept: 'application/json', 'accept-encoding': 'gzip, br, deflate' },
          });
          const body = await decode(Buffer.from(await response.body.arrayBuffer()), response.headers['content-encoding']);
          if (response.statusCode !== 200) throw new Error(`GET ${job.url.href}: HTTP ${response.statusCode}`);
          const fetchedAt = performance.now();
          await store.putLeaf(job.key, body, job.metadata);
          times.record(start, fetchedAt, performance.now());
          bytes += body.length;
        }
      }),
    ),
  );
  await agent.close();
  if (store instanceof LeanS3SnapshotStore) await store.close();
  s3.destroy();
  return result(config, run, jobs.length, commits.length, bytes, times.summary(), 'none');
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as ScenarioConfig;
  profileFile = config.profileFile;
  let outcome: ScenarioResult;
  switch (config.kind) {
    case 'engine':
      outcome = await runEngine(config);
      break;
    case 'sequential':
      outcome = await runSequential(config);
      break;
    case 'ceiling':
      outcome = await runCeiling(config, false);
      break;
    case 'ceiling-lean':
      outcome = await runCeiling(config, true);
      break;
    default:
      throw new Error(`unknown scenario kind ${String((config as { kind: unknown }).kind)}`);
  }
  process.send!({ type: 'result', result: outcome }, () => process.exit(0));
}

void main().catch((error: unknown) => {
  process.send?.({ type: 'error', error: String((error as Error)?.stack ?? error) }, () => process.exit(1));
});

