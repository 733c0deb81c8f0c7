/**
 * A static file server on 127.0.0.1 for a feed written to a folder: each file at its path (a `.json` as
 * `application/json`, anything else as `application/octet-stream`), and 404 for a missing key, as NuGet clients need
 * (`missingStatus: 403` answers as S3 does without `s3:ListBucket`, which fails a restore). It logs every request, so
 * a test can tell its packages really came from the feed.
 *
 * @example
 * const server = await StaticFeedServer.start(folder); // then write the feed with server.baseUrl in its URLs
 */
import { createReadStream, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { extname, join, resolve, sep } from 'node:path';
import { closeTracked, listenOnLoopback } from './loopback-listen.js';

/** Options of {@link StaticFeedServer.start}. */
export interface StaticFeedOptions {
  /** The status of a missing file; default 404. */
  missingStatus?: 404 | 403;
}

/** One request as answered. */
export interface StaticFeedRequest {
  readonly method: string;
  /** The URL path, decoded, without query. */
  readonly path: string;
  readonly status: number;
}

/** Serves a folder over HTTP on 127.0.0.1. See the module documentation. */
export class StaticFeedServer {
  /** Every request, in order of arrival, with the status it got. */
  readonly requests: StaticFeedRequest[] = [];

  private constructor(
    private readonly server: Server,
    private readonly sockets: Set<Socket>,
    /** `http://127.0.0.1:PORT`. */
    readonly origin: string,
  ) {}

  /** `http://127.0.0.1:PORT/`: the base a feed's absolute URLs start with. */
  get baseUrl(): string {
    return `${this.origin}/`;
  }

  /** Starts serving `root` (its files may be written after the start: each request reads the folder as it is). */
  static async start(root: string, options: StaticFeedOptions = {}): Promise<StaticFeedServer> {
    const folder = resolve(root);
    const missing = options.missingStatus ?? 404;
    const sockets = new Set<Socket>();
    const server = createServer();
    await listenOnLoopback(server, sockets);
    const feed = new StaticFeedServer(server, sockets, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on('request', (req, res) => {
      const method = req.method ?? 'GET';
      let path = '/';
      try {
        path = decodeURIComponent(new URL(req.url ?? '/', feed.origin).pathname);
      } catch {
        path = req.url ?? '/';
      }
      const file = join(folder, path);
      let size = -1;
      try {
        if (file.startsWith(folder + sep) && (method === 'GET' || method === 'HEAD')) {
          const stat = statSync(file);
          if (stat.isFile()) size = stat.size;
        }
      } catch {
        size = -1;
      }
      const status = size < 0 ? (method === 'GET' || method === 'HEAD' ? missing : 405) : 200;
      feed.requests.push({ method, path, status });
      if (status !== 200) {
        res
          .writeHead(status, { 'Content-Type': 'application/xml' })
          .end(`<Error><Code>${status === 403 ? 'AccessDenied' : 'NoSuchKey'}</Code></Error>`);
        return;
      }
      res.writeHead(200, {
        'Content-Type': extname(file) === '.json' ? 'application/json' : 'application/octet-stream',
        'Content-Length': size,
      });
      if (method === 'HEAD') res.end();
      else createReadStream(file).pipe(res);
    });
    return feed;
  }

  /** Stops the server, closing every open connection. */
  stop(): Promise<void> {
    return closeTracked(this.server, this.sockets);
  }
}
