/**
 * A local NuGet V3 catalog server for tests: serves a generated catalog (or a fixture catalog)
 * over real HTTP on 127.0.0.1, with the content coding, validators and failures a client meets in
 * the wild, injected on demand.
 *
 * @example
 * const replica = await CatalogReplica.start({ catalog: generateCatalog({ commits: 20 }), pageSize: 10 });
 * replica.failWith('/page1.json', 503, 2);
 * // ... run the client against replica.serviceIndexUrl ...
 * await replica.stop();
 */
import {
  createServer,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import { once, setMaxListeners } from 'node:events';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { SERVICE_INDEX_PATH } from './catalog-documents.js';
import type { GeneratedCatalog, GeneratedLeaf } from './catalog-generator.js';
import { parseTicks } from './catalog-time.js';
import { FixtureSource, type FixtureSelection } from './fixture-source.js';
import { FlatContainer } from './flat-container.js';
import { GeneratedSource } from './generated-source.js';
import { matchesPath, type PathMatch } from './path-match.js';
import { FaultList } from './replica-faults.js';
import {
  DEFAULT_PAGE_SIZE,
  type LoggedRequest,
  type OverrideOptions,
  type ReplicaOptions,
  type ReplicaServerOptions,
} from './replica-options.js';
import { ReplicaResponder } from './replica-responses.js';
import type { ReplicaSource, ServedDocument } from './replica-source.js';

export type { PathMatch } from './path-match.js';
export type { FixtureSelection } from './fixture-source.js';
export type { LoggedRequest, OverrideOptions, ReplicaOptions, ReplicaServerOptions } from './replica-options.js';

/** A NuGet V3 catalog served over HTTP on 127.0.0.1. See the module documentation. */
export class CatalogReplica {
  /** Every request received, in order of arrival. */
  readonly requests: LoggedRequest[] = [];
  /** Paths of trickled responses whose connection the client closed before the last byte, in order. */
  readonly abandoned: string[] = [];
  private readonly abandonWaiters: { match: PathMatch; count: number; resolve: () => void }[] = [];
  /** Told of each request as it arrives, before it is answered: a test steps in at an exact point. */
  onRequest: ((request: LoggedRequest) => void) | undefined;
  /**
   * The `PackageBaseAddress/3.0.0` resource of a generated catalog: the `.nupkg` of its details leaves that carry one
   * (testkit/catalog-packages.ts), withheld or corrupted on demand (testkit/flat-container.ts).
   */
  readonly packages = new FlatContainer(() =>
    this.source instanceof GeneratedSource ? this.source.catalog : undefined,
  );

  private source!: ReplicaSource;
  private latencyMs: number;
  private readonly faults = new FaultList();
  private readonly holds: { match: (path: string) => boolean; released: Promise<void> }[] = [];
  private readonly closing = new AbortController();
  private readonly responder: ReplicaResponder;

  private constructor(
    private readonly server: Server,
    /** `http://127.0.0.1:PORT`. */
    readonly origin: string,
    private readonly options: ReplicaOptions,
  ) {
    this.latencyMs = options.latencyMs ?? 0;
    // Every delayed answer listens on it: many requests in flight are normal, not a leak.
    setMaxListeners(0, this.closing.signal);
    this.responder = new ReplicaResponder(
      () => this.source,
      this.closing.signal,
      (path) => {
        this.abandoned.push(path);
        this.wakeAbandonWaiters();
      },
    );
  }

  /** Starts a replica of a generated catalog. */
  static async start(options: ReplicaOptions = {}): Promise<CatalogReplica> {
    const replica = await CatalogReplica.listen(options);
    replica.setCatalog(options.catalog ?? { commits: [] });
    return replica;
  }

  /**
   * Starts a replica of a fixture catalog: every selected file of `dir` is served at the path of
   * its `@id`, with `baseUrl` (e.g. `http://tempuri.org/`) rewritten to the replica's origin.
   *
   * @example
   * CatalogReplica.startFromFixtures(dir, 'http://tempuri.org/', { prefix: 'TestCatalogWithNonNormalizedDelete' })
   */
  static async startFromFixtures(
    dir: string,
    baseUrl: string,
    options: FixtureSelection & ReplicaServerOptions = {},
  ): Promise<CatalogReplica> {
    const replica = await CatalogReplica.listen(options);
    try {
      replica.source = new FixtureSource(dir, baseUrl, replica.origin, options);
    } catch (error) {
      await replica.stop();
      throw error;
    }
    return replica;
  }

  private static async listen(options: ReplicaOptions): Promise<CatalogReplica> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    const replica = new CatalogReplica(server, `http://127.0.0.1:${port}`, options);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      res.on('error', () => {}); // the client hung up: nothing to do
      replica.handle(req, res).catch((error: unknown) => {
        if (res.headersSent) res.destroy();
        else res.writeHead(500, { 'Content-Type': 'text/plain' }).end(String(error));
      });
    });
    return replica;
  }

  /** The service index URL (`/v3/index.json`); its `Catalog/3.0.0` resource is {@link catalogIndexUrl}. */
  get serviceIndexUrl(): string {
    return `${this.origin}${SERVICE_INDEX_PATH}`;
  }

  /** The catalog index URL. */
  get catalogIndexUrl(): string {
    return `${this.origin}${this.source.catalogIndexPath}`;
  }

  /**
   * Serves `catalog` from now on (switching from a fixture catalog too). A catalog grown in place
   * with `appendCommits` is picked up without this; any other change in place needs it.
   */
  setCatalog(catalog: GeneratedCatalog): void {
    this.source = new GeneratedSource(catalog, {
      pageSize: this.options.pageSize ?? DEFAULT_PAGE_SIZE,
      splitCommits: this.options.splitCommits ?? false,
      origin: this.options.publicOrigin ?? this.origin,
      leafOrigin: (this.options.leafOrigin ?? this.options.publicOrigin ?? this.origin).replace(/\/$/, ''),
      packages: this.packages,
    });
  }

  /** The URL this replica serves `leaf` at. */
  leafUrl(leaf: GeneratedLeaf): string {
    return `${this.origin}${leaf.path}`;
  }

  /** The page paths of the catalog index, oldest page first (the index itself lists them shuffled). */
  pagePaths(): string[] {
    const index = this.parsed(this.source.catalogIndexPath) as
      | { items?: { '@id': string; commitTimeStamp: string }[] }
      | undefined;
    return (index?.items ?? [])
      .map((item) => ({ path: new URL(item['@id']).pathname, ticks: parseTicks(item.commitTimeStamp) }))
      .sort((a, b) => (a.ticks < b.ticks ? -1 : a.ticks > b.ticks ? 1 : 0))
      .map((item) => item.path);
  }

  /** The page URLs of the catalog index, oldest page first. */
  pageUrls(): string[] {
    return this.pagePaths().map((path) => `${this.origin}${path}`);
  }

  /** How many distinct commits have leaves on page `number` (0 = the oldest page). */
  commitsOnPage(number: number): number {
    const path = this.pagePaths()[number];
    if (path === undefined) throw new Error(`no page ${number}`);
    const page = this.parsed(path) as { items: { commitId: string }[] };
    return new Set(page.items.map((item) => item.commitId)).size;
  }

  /**
   * The document at `path` as currently served without faults (decoded text).
   *
   * @throws when nothing is served there.
   */
  documentAt(path: string): string {
    const document = this.source.resolve(/^https?:\/\//.test(path) ? new URL(path).pathname : path);
    if (!document) throw new Error(`nothing is served at ${path}`);
    return document.body.toString('utf8');
  }

  private parsed(path: string): unknown {
    const document = this.source.resolve(path);
    return document ? JSON.parse(document.body.toString('utf8').replace(/^\uFEFF/, '')) : undefined;
  }

  /**
   * The next `times` requests matching `match` get `status` (with `headers`, e.g.
   * `{ 'Retry-After': '1' }`) instead of the document.
   */
  failWith(match: PathMatch, status: number, times = 1, headers: OutgoingHttpHeaders = {}): void {
    this.faults.add(match, times, { kind: 'status', status, headers });
  }

  /** The next `times` matching requests have their connection reset before any answer. */
  resetConnection(match: PathMatch, times = 1): void {
    this.faults.add(match, times, { kind: 'reset' });
  }

  /** The next `times` matching requests get the full `Content-Length` but half the body, then a close. */
  truncateBody(match: PathMatch, times = 1): void {
    this.faults.add(match, times, { kind: 'truncate' });
  }

  /**
   * The next `times` matching requests get headers and half the body, then nothing: the response
   * never ends until the client gives up (or {@link stop}).
   */
  stallBody(match: PathMatch, times = 1): void {
    this.faults.add(match, times, { kind: 'stall' });
  }

  /**
   * The next `times` matching requests get the headers (with the full `Content-Length`), then one byte of
   * the body every `intervalMs`: a response that is never silent long enough for a body timeout. If the
   * client closes the connection first, the path is recorded in {@link abandoned}.
   */
  trickleBody(match: PathMatch, intervalMs: number, times = 1): void {
    this.faults.add(match, times, { kind: 'trickle', intervalMs });
  }

  /** Resolves once `count` trickled responses matching `match` were abandoned by the client. */
  whenAbandoned(match: PathMatch, count = 1): Promise<void> {
    return new Promise((resolve) => {
      this.abandonWaiters.push({ match, count, resolve });
      this.wakeAbandonWaiters();
    });
  }

  private wakeAbandonWaiters(): void {
    for (const waiter of [...this.abandonWaiters]) {
      if (this.abandoned.filter((path) => matchesPath(waiter.match, path)).length < waiter.count) continue;
      this.abandonWaiters.splice(this.abandonWaiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  }

  /** Matching requests get `body` instead of the document (invalid JSON, wrong types, huge...). */
  overrideBody(match: PathMatch, body: string | Buffer, options: OverrideOptions = {}): void {
    const document: ServedDocument = {
      body: typeof body === 'string' ? Buffer.from(body, 'utf8') : body,
      contentType: options.contentType ?? 'application/json',
    };
    this.faults.add(match, options.times ?? Number.POSITIVE_INFINITY, {
      kind: 'override',
      document,
      status: options.status ?? 200,
      headers: options.headers ?? {},
    });
  }

  /**
   * The next `times` requests for the page at `pagePath` (a path or URL) get an older copy of it:
   * the page as it was `commitsBack` commits earlier, with that older `commitTimeStamp`, as a stale
   * cache would serve it.
   *
   * @throws now, when the page has no such older copy.
   */
  serveStalePage(pagePath: string, times = 1, commitsBack = 1): void {
    const path = /^https?:\/\//.test(pagePath) ? new URL(pagePath).pathname : pagePath;
    this.source.stalePage(path, commitsBack);
    this.faults.add((p) => p === path, times, { kind: 'stale', commitsBack });
  }

  /** Every answer from now on is delayed by `ms` (0 for none). */
  latency(ms: number): void {
    this.latencyMs = ms;
  }

  /**
   * Matching requests get a gzip bomb: about 1 MB with `Content-Encoding: gzip` that inflates to
   * 1 GiB (whatever the request's `Accept-Encoding`). `times` defaults to Infinity.
   */
  gzipBomb(match: PathMatch, times = Number.POSITIVE_INFINITY): void {
    this.faults.add(match, times, { kind: 'gzip-bomb' });
  }

  /**
   * Matching requests wait, unanswered, until `release()` is called (or {@link stop}): a test holds a run at an
   * exact point for as long as it needs, instead of slowing every answer and hoping the run lasts. `arrived`
   * resolves when the first matching request is waiting.
   */
  hold(match: PathMatch): { readonly arrived: Promise<void>; release(): void } {
    let release!: () => void;
    let arrive!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const arrived = new Promise<void>((resolve) => (arrive = resolve));
    const entry = { match: (path: string): boolean => matchesPath(match, path) && (arrive(), true), released };
    this.holds.push(entry);
    return {
      arrived,
      release: () => {
        const at = this.holds.indexOf(entry);
        if (at >= 0) this.holds.splice(at, 1);
        release();
      },
    };
  }

  /** Disarms every fault. */
  clearFaults(): void {
    this.faults.clear();
  }

  /** How many logged requests match (optionally only of `method`). */
  countRequests(match: PathMatch, method?: string): number {
    return this.requests.filter((r) => (method === undefined || r.method === method) && matchesPath(match, r.path))
      .length;
  }

  /** Empties the request log and the record of abandoned responses. */
  clearLog(): void {
    this.requests.length = 0;
    this.abandoned.length = 0;
  }

  /** Stops the server: ends stalled responses, closes every connection. */
  async stop(): Promise<void> {
    this.closing.abort();
    this.responder.endStalled();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const path = new URL(req.url ?? '/', this.origin).pathname;
    const logged = { method, path, headers: req.headers };
    this.requests.push(logged);
    this.onRequest?.(logged);
    if (this.latencyMs > 0) {
      try {
        await delay(this.latencyMs, undefined, { signal: this.closing.signal });
      } catch {
        res.destroy();
        return;
      }
    }
    const held = this.holds.filter((hold) => hold.match(path));
    if (held.length > 0 && this.closing.signal.aborted) {
      res.destroy();
      return;
    }
    if (held.length > 0) {
      // Until every hold on it is released, or the replica stops (the listener goes with the answer).
      const stopping = new AbortController();
      const stopped = once(this.closing.signal, 'abort', { signal: stopping.signal }).then(
        () => 'stopped' as const,
        () => 'released' as const,
      );
      const outcome = await Promise.race([
        Promise.all(held.map((hold) => hold.released)).then(() => 'released' as const),
        stopped,
      ]);
      stopping.abort();
      if (outcome === 'stopped') {
        res.destroy();
        return;
      }
    }
    if (method !== 'GET' && method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain' }).end('Method Not Allowed');
      return;
    }
    const fault = this.faults.take(path);
    if (fault) {
      await this.responder.injure(req, res, path, fault);
      return;
    }
    const document = this.source.resolve(path);
    if (!document) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not Found');
      return;
    }
    this.responder.send(req, res, document);
  }
}
