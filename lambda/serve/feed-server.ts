/**
 * The feed server: an HTTP server (node:http) answering every request with {@link answerFeedRequest}, reporting each
 * one (for `--verbose`) and each failure to read the feed (a 500), and stopping at once when asked (open downloads are
 * cut: a NuGet client retries them).
 *
 * @example
 * const server = await FeedServer.start({ feed: { files: folderFeedFiles(store), prefix: '' }, host: '127.0.0.1', port: 0 });
 * // … server.origin is `http://127.0.0.1:PORT`
 * await server.stop();
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { type Answered, answerFeedRequest, type ServedFeed } from './feed-response.js';

/** One request as answered, for a request log. */
export interface FeedRequestEntry extends Answered {
  readonly method: string;
  /** The request target as received (path and query, still percent-encoded). */
  readonly target: string;
  /** The client's address. */
  readonly remote: string;
  /** Milliseconds from the request to the end of its answer. */
  readonly ms: number;
}

/** Settings of {@link FeedServer.start}. */
export interface FeedServerOptions {
  readonly feed: ServedFeed;
  /** The address to listen on (`127.0.0.1`, `::1`, `0.0.0.0`, a host name). */
  readonly host: string;
  /** The TCP port; 0 takes a free one (see {@link FeedServer.port}). */
  readonly port: number;
  /** Called after each request is answered. */
  readonly onRequest?: (entry: FeedRequestEntry) => void;
  /** Called when reading the feed failed (the request got a 500, or was cut if its body had begun). */
  readonly onError?: (error: unknown, target: string) => void;
}

/** A feed served over HTTP. See the module documentation. */
export class FeedServer {
  private constructor(
    private readonly server: Server,
    /** The port it listens on (the one taken when 0 was asked). */
    readonly port: number,
  ) {}

  /**
   * Listens on `host`:`port` and serves the feed.
   *
   * @throws the listening error as node gives it: `EADDRINUSE` (the port is taken), `EACCES` (a port that needs
   * privileges), `EADDRNOTAVAIL` or `ENOTFOUND` (not an address of this machine).
   */
  static async start(options: FeedServerOptions): Promise<FeedServer> {
    const server = createServer((req, res) => void handle(options, req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      // exclusive: a port another process (a cluster's primary included) holds is refused, never shared.
      server.listen({ host: options.host, port: options.port, exclusive: true }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return new FeedServer(server, (server.address() as AddressInfo).port);
  }

  /** Stops listening and closes every connection, open downloads included; resolves once the server is closed. */
  stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    return closed;
  }
}

async function handle(options: FeedServerOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const started = performance.now();
  const target = req.url ?? '';
  // Read now: once the client has gone, its socket no longer tells.
  const remote = req.socket.remoteAddress ?? '';
  let answered: Answered;
  try {
    answered = await answerFeedRequest(options.feed, req, res);
  } catch (error) {
    options.onError?.(error, target);
    if (!res.headersSent) {
      res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end('the feed could not be read\n');
    } else res.destroy();
    answered = { status: 500 };
  }
  options.onRequest?.({
    method: req.method ?? '',
    target,
    remote,
    ms: Math.round(performance.now() - started),
    ...answered,
  });
}
