/**
 * A tiny HTTP proxy in front of an S3 server that records every object request it forwards: which client
 * (the proxy's label: one proxy per process traced), method, key, when it arrived and when the server
 * answered. Used to tell, for an object read torn or missing, whether another process was re-PUTting it
 * at that very moment, and when its first PUT was acknowledged.
 *
 * Headers are forwarded unchanged (the Host header included, so SigV4 signatures still match), except
 * `Expect`: this proxy answers `100 Continue` itself.
 */
import { createServer, request, Agent, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

/** One request forwarded to the server. Times are `performance.now()` ms of this process. */
export interface TracedRequest {
  readonly client: string;
  readonly method: string;
  /** Bucket-relative key (path-style requests: the path after `/{bucket}/`, decoded). */
  readonly key: string;
  readonly startMs: number;
  /** When the server's answer (status line) arrived; undefined while waiting, or when it never did. */
  answeredMs?: number;
  status?: number;
}

/** Every request of every proxy sharing it, and lookups by key. */
export class S3Trace {
  private readonly byKey = new Map<string, TracedRequest[]>();
  requests = 0;

  record(entry: TracedRequest): void {
    this.requests++;
    let list = this.byKey.get(entry.key);
    if (!list) this.byKey.set(entry.key, (list = []));
    list.push(entry);
  }

  /** PUTs of `key` whose time at the server may overlap [fromMs, toMs]: arrived before `toMs`, answered after `fromMs` (or not yet). */
  putsOverlapping(key: string, fromMs: number, toMs: number): TracedRequest[] {
    return (this.byKey.get(key) ?? []).filter(
      (r) => r.method === 'PUT' && r.startMs < toMs && (r.answeredMs === undefined || r.answeredMs > fromMs),
    );
  }

  /** When the first successful PUT of `key` was answered; undefined when none was (yet). */
  firstPutAnswered(key: string): TracedRequest | undefined {
    let first: TracedRequest | undefined;
    for (const r of this.byKey.get(key) ?? []) {
      if (r.method !== 'PUT' || r.status !== 200 || r.answeredMs === undefined) continue;
      if (!first || r.answeredMs < first.answeredMs!) first = r;
    }
    return first;
  }

  /** Successful PUTs of `key`. */
  puts(key: string): TracedRequest[] {
    return (this.byKey.get(key) ?? []).filter((r) => r.method === 'PUT' && r.status === 200);
  }
}

/** A running proxy. */
export interface TraceProxy {
  readonly endpoint: string;
  close(): Promise<void>;
}

/** Starts a proxy on 127.0.0.1 forwarding to `upstream` (`http://127.0.0.1:PORT`), recording into `trace` as `client`. */
export async function startTraceProxy(upstream: string, client: string, trace: S3Trace): Promise<TraceProxy> {
  const target = new URL(upstream);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/';
    const entry: TracedRequest = { client, method: req.method ?? 'GET', key: keyOf(path), startMs: performance.now() };
    trace.record(entry);
    const headers = { ...req.headers };
    delete headers.expect;
    const forwarded = request(
      { host: target.hostname, port: target.port, method: req.method, path, headers, agent },
      (answer) => {
        entry.answeredMs = performance.now();
        entry.status = answer.statusCode;
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on('error', () => res.destroy());
    // A client that goes away mid-request takes its forwarded request with it, as it would at the server.
    req.on('aborted', () => forwarded.destroy());
    res.on('close', () => {
      if (!res.writableFinished) forwarded.destroy();
    });
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        agent.destroy();
      }),
  };
}

/** `/bucket/a/b.json?x` -> `a/b.json`. */
function keyOf(path: string): string {
  const bare = path.split('?')[0]!;
  const slash = bare.indexOf('/', 1);
  return slash < 0 ? '' : decodeURIComponent(bare.slice(slash + 1));
}
