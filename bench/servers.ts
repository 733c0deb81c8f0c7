/**
 * The benchmark's servers, in a process of their own so that their CPU never counts against the engine:
 * catalog replicas (testkit/catalog-replica.ts) with per-request latency, and the fake S3.
 *
 * Started by run.ts with `fork` and a JSON config as argv[2]; sends `{ type: 'ready', ... }` over IPC once
 * every replica is generated and its documents are rendered and compressed in advance (so the replica's
 * one-time rendering and Brotli work never lands inside a measurement). A small admin HTTP server on
 * 127.0.0.1 lets the other processes read request logs, counters and CPU time, and grow a catalog.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import {
  appendCommits,
  CATALOG_INDEX_PATH,
  CatalogReplica,
  type ContentCoding,
  generateCatalog,
  type GeneratedCatalog,
  negotiateCoding,
  type ServedDocument,
  SERVICE_INDEX_PATH,
} from '../testkit/index.js';
import { startFakeS3, type FakeS3 } from './fake-s3.js';

/** One catalog to serve. */
export interface ReplicaSpec {
  readonly name: string;
  /** At least this many leaves. */
  readonly leaves: number;
  readonly leavesPerCommit: readonly [number, number];
  readonly seed: number;
  readonly pageSize: number;
}

/** argv[2] of this process. */
export interface ServersConfig {
  readonly catalogLatencyMs: number;
  readonly s3LatencyMs: number;
  readonly replicas: readonly ReplicaSpec[];
}

/** What a replica serves, as told to the other processes. */
export interface ReplicaInfo {
  readonly name: string;
  readonly origin: string;
  readonly serviceIndexUrl: string;
  readonly catalogIndexUrl: string;
  readonly commits: number;
  readonly leaves: number;
  readonly pages: number;
  /** Mean leaf body size, bytes, uncompressed. */
  readonly meanLeafBytes: number;
  readonly meanLeavesPerCommit: number;
}

/** The ready message. */
export interface ServersReady {
  readonly type: 'ready';
  readonly admin: string;
  readonly s3Endpoint: string;
  readonly replicas: readonly ReplicaInfo[];
  readonly setupMs: number;
}

/** What the replica's request log says, summed up. */
export interface LogSummary {
  readonly total: number;
  readonly serviceIndex: number;
  readonly index: number;
  /** Index requests that carried `If-None-Match` or `If-Modified-Since`. */
  readonly indexConditional: number;
  readonly pageRequests: number;
  /** Requests per page path. */
  readonly pages: Record<string, number>;
  readonly leaves: number;
}

/** The Accept-Encoding the engine's HttpClient sends: documents are compressed in advance for it. */
const CLIENT_ACCEPT_ENCODING = 'gzip, br, deflate';

interface Served {
  readonly spec: ReplicaSpec;
  readonly catalog: GeneratedCatalog;
  readonly replica: CatalogReplica;
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as ServersConfig;
  const started = performance.now();
  const served = new Map<string, Served>();
  const infos: ReplicaInfo[] = [];
  for (const spec of config.replicas) {
    const catalog = makeCatalog(spec);
    const replica = await CatalogReplica.start({ catalog, pageSize: spec.pageSize, latencyMs: 0 });
    const meanLeafBytes = await prepare(replica, catalog);
    replica.latency(config.catalogLatencyMs);
    served.set(spec.name, { spec, catalog, replica });
    const leaves = catalog.commits.reduce((n, c) => n + c.leaves.length, 0);
    infos.push({
      name: spec.name,
      origin: replica.origin,
      serviceIndexUrl: replica.serviceIndexUrl,
      catalogIndexUrl: replica.catalogIndexUrl,
      commits: catalog.commits.length,
      leaves,
      pages: replica.pagePaths().length,
      meanLeafBytes,
      meanLeavesPerCommit: leaves / catalog.commits.length,
    });
  }
  const s3 = await startFakeS3({ latencyMs: config.s3LatencyMs });
  const admin = createServer((req, res) => {
    try {
      answer(req, res, served, s3);
    } catch (error) {
      res.writeHead(500, { 'Content-Type': 'text/plain' }).end(String((error as Error).stack ?? error));
    }
  });
  await new Promise<void>((resolve) => admin.listen(0, '127.0.0.1', () => resolve()));
  const ready: ServersReady = {
    type: 'ready',
    admin: `http://127.0.0.1:${(admin.address() as AddressInfo).port}`,
    s3Endpoint: s3.endpoint,
    replicas: infos,
    setupMs: performance.now() - started,
  };
  process.send!(ready);
  const stop = async (): Promise<void> => {
    admin.close();
    admin.closeAllConnections();
    await Promise.allSettled([s3.stop(), ...[...served.values()].map((s) => s.replica.stop())]);
    process.exit(0);
  };
  process.on('disconnect', () => void stop());
  process.on('SIGTERM', () => void stop());
}

/** A catalog of at least `spec.leaves` leaves. */
function makeCatalog(spec: ReplicaSpec): GeneratedCatalog {
  const mean = (spec.leavesPerCommit[0] + spec.leavesPerCommit[1]) / 2;
  const catalog = generateCatalog({
    commits: Math.max(1, Math.ceil(spec.leaves / mean)),
    seed: spec.seed,
    leavesPerCommit: spec.leavesPerCommit,
    trimTrailingZeros: true,
    sameMillisecondPairs: 5,
    semver2Ratio: 0.05,
  });
  let leaves = catalog.commits.reduce((n, c) => n + c.leaves.length, 0);
  for (let round = 1; leaves < spec.leaves; round++) {
    const added = appendCommits(catalog, Math.ceil((spec.leaves - leaves) / mean) + 1, spec.seed + round);
    leaves += added.reduce((n, c) => n + c.leaves.length, 0);
  }
  return catalog;
}

/**
 * Renders and compresses every document of the replica in advance, as a CDN would have them cached: the
 * replica reaches into its private `source` and `encode` for that (test support internals); when those are
 * not there any more, every document is fetched once instead. Returns the mean leaf size.
 */
async function prepare(replica: CatalogReplica, catalog: GeneratedCatalog): Promise<number> {
  const paths = [
    SERVICE_INDEX_PATH,
    CATALOG_INDEX_PATH,
    ...replica.pagePaths(),
    ...catalog.commits.flatMap((c) => c.leaves.map((l) => l.path)),
  ];
  const coding: ContentCoding = negotiateCoding(CLIENT_ACCEPT_ENCODING);
  const internals = replica as unknown as {
    source?: { resolve(path: string): ServedDocument | undefined };
    encode?: (document: ServedDocument, coding: ContentCoding) => Buffer;
  };
  let leafBytes = 0;
  let leafCount = 0;
  const leafStart = 2 + replica.pagePaths().length;
  if (typeof internals.source?.resolve === 'function' && typeof internals.encode === 'function') {
    paths.forEach((path, i) => {
      const document = internals.source!.resolve(path);
      if (!document) throw new Error(`the replica serves nothing at ${path}`);
      internals.encode!.call(replica, document, coding);
      if (i >= leafStart) {
        leafBytes += document.body.length;
        leafCount++;
      }
    });
  } else {
    const agent = new Agent({ connections: 8 });
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < paths.length) {
          const i = next++;
          const response = await agent.request({
            origin: replica.origin,
            path: paths[i]!,
            method: 'GET',
            headers: { 'accept-encoding': 'identity' },
          });
          const body = Buffer.from(await response.body.arrayBuffer());
          if (i >= leafStart) {
            leafBytes += body.length;
            leafCount++;
          }
          // The compressed copy the engine will ask for.
          const again = await agent.request({
            origin: replica.origin,
            path: paths[i]!,
            method: 'GET',
            headers: { 'accept-encoding': CLIENT_ACCEPT_ENCODING },
          });
          await again.body.dump();
        }
      }),
    );
    await agent.close();
  }
  replica.clearLog();
  return leafCount > 0 ? Math.round(leafBytes / leafCount) : 0;
}

function answer(req: IncomingMessage, res: ServerResponse, served: Map<string, Served>, s3: FakeS3): void {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const json = (value: unknown): void => {
    const body = JSON.stringify(value);
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) }).end(body);
  };
  const replicaOf = (): Served => {
    const name = url.searchParams.get('replica') ?? 'main';
    const found = served.get(name);
    if (!found) throw new Error(`no replica ${name}`);
    return found;
  };
  switch (url.pathname) {
    case '/cpu': {
      const usage = process.cpuUsage();
      json({ userUs: usage.user, systemUs: usage.system, rssBytes: process.memoryUsage().rss });
      return;
    }
    case '/log': {
      const { replica } = replicaOf();
      const summary = summarize(replica);
      if (url.searchParams.get('clear') === '1') replica.clearLog();
      json(summary);
      return;
    }
    case '/append': {
      const { catalog } = replicaOf();
      const commits = Number(url.searchParams.get('commits') ?? '1');
      const added = appendCommits(catalog, commits, 1_000 + catalog.commits.length);
      json({
        commits: added.length,
        leaves: added.reduce((n, c) => n + c.leaves.length, 0),
        newest: added.at(-1)?.timestamp,
      });
      return;
    }
    case '/s3': {
      const stats = s3.stats();
      if (url.searchParams.get('reset') === '1') s3.reset();
      json(stats);
      return;
    }
    case '/s3-latency': {
      // ?ms=30 sets every request's latency; &slowEvery=N&slowMs=M makes every Nth PUT take M ms (no slowEvery: none).
      s3.setLatency(Number(url.searchParams.get('ms') ?? '0'));
      const every = Number(url.searchParams.get('slowEvery') ?? '0');
      s3.setPutTail(every > 0 ? { every, ms: Number(url.searchParams.get('slowMs') ?? '0') } : undefined);
      json({ ok: true });
      return;
    }
    default:
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
  }
}

function summarize(replica: CatalogReplica): LogSummary {
  const pages: Record<string, number> = {};
  let serviceIndex = 0;
  let index = 0;
  let indexConditional = 0;
  let pageRequests = 0;
  let leaves = 0;
  for (const request of replica.requests) {
    if (request.path === SERVICE_INDEX_PATH) serviceIndex++;
    else if (request.path === CATALOG_INDEX_PATH) {
      index++;
      if (request.headers['if-none-match'] !== undefined || request.headers['if-modified-since'] !== undefined)
        indexConditional++;
    } else if (/^\/v3\/catalog0\/page\d+\.json$/.test(request.path)) {
      pageRequests++;
      pages[request.path] = (pages[request.path] ?? 0) + 1;
    } else leaves++;
  }
  return { total: replica.requests.length, serviceIndex, index, indexConditional, pageRequests, pages, leaves };
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
