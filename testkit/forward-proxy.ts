/**
 * A small forward proxy, as a corporate network has: `CONNECT` tunnels and absolute-form HTTP requests, with
 * optional Basic credentials. Every request that passes is logged, inside tunnels too (a tunnel to an `http:`
 * origin carries plain HTTP, which the proxy reads and forwards), so a test can tell that every request to the
 * replica went through it, or none did. A tunnel whose first bytes are a TLS handshake (to an `https:` origin) is
 * passed through as it is, as a real proxy does: only the tunnel is logged (`tlsTunnels`), never what is inside.
 */
import { Agent, createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { Duplex } from 'node:stream';

/** One request that passed through the proxy. */
export interface ProxiedRequest {
  /** `connect`: inside a tunnel; `forward`: an absolute-form request. */
  readonly via: 'connect' | 'forward';
  /** `host:port` of the origin. */
  readonly target: string;
  readonly method: string;
  readonly path: string;
}

/** Options of {@link ForwardProxy.start}. */
export interface ForwardProxyOptions {
  /** `user:password` the proxy requires (`Proxy-Authorization: Basic …`); 407 without it. */
  readonly credentials?: string;
}

export class ForwardProxy {
  /** Every request forwarded, in order. */
  readonly requests: ProxiedRequest[] = [];
  /** `host:port` of every tunnel opened. */
  readonly tunnels: string[] = [];
  /** `host:port` of every tunnel that carried TLS (passed through unread). */
  readonly tlsTunnels: string[] = [];
  /** Requests refused for want of credentials. */
  refused = 0;
  private readonly sockets = new Set<Socket | Duplex>();
  private readonly upstream = new Agent({ keepAlive: true });
  private readonly targets = new WeakMap<object, string>();
  private readonly inner: Server;

  private constructor(
    private readonly server: Server,
    private readonly options: ForwardProxyOptions,
  ) {
    this.inner = createServer((req, res) => this.forward('connect', this.targets.get(req.socket) ?? '', req, res));
    server.on('connection', (socket: Socket) => this.track(socket));
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (!this.authorized(req)) {
        res.writeHead(407, { 'Proxy-Authenticate': 'Basic realm="proxy"' }).end();
        return;
      }
      const target = new URL(req.url ?? '/');
      this.forward('forward', target.host, req, res, `${target.pathname}${target.search}`);
    });
    server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      this.track(socket);
      if (!this.authorized(req)) {
        socket.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="proxy"\r\n\r\n');
        return;
      }
      const target = req.url ?? '';
      this.tunnels.push(target);
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      const route = (first: Buffer): void => {
        // 0x16: a TLS handshake record. The proxy cannot read inside: it relays bytes, as a corporate proxy does.
        if (first[0] === 0x16) this.relay(target, socket, first);
        else this.readInside(target, socket, first);
      };
      if (head.length > 0) route(head);
      else
        socket.once('data', (chunk: Buffer) => {
          socket.pause();
          route(chunk);
        });
    });
  }

  /** Starts a proxy on a free port of 127.0.0.1. */
  static async start(options: ForwardProxyOptions = {}): Promise<ForwardProxy> {
    const server = createServer();
    const proxy = new ForwardProxy(server, options);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  /** `http://127.0.0.1:port`, for `HTTP_PROXY` / `HTTPS_PROXY`. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Closes every connection, tunnels included. */
  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.upstream.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /**
   * Hands the tunnel to the inner HTTP server, which reads the requests inside. Through a stream of its own that
   * starts with the bytes read to tell TLS from HTTP: the server reads a socket's handle directly, past anything
   * put back into it.
   */
  private readInside(target: string, socket: Duplex, first: Buffer): void {
    const inside = new Duplex({
      read: () => void socket.resume(),
      write: (chunk: Buffer, _encoding, done) => void socket.write(chunk, done),
      final: (done) => void socket.end(done),
      destroy: (error, done) => {
        socket.destroy();
        done(error);
      },
    });
    inside.push(first);
    socket.on('data', (chunk: Buffer) => {
      if (!inside.push(chunk)) socket.pause();
    });
    socket.on('end', () => inside.push(null));
    socket.on('close', () => inside.destroy());
    socket.resume();
    this.targets.set(inside, target);
    this.track(inside);
    this.inner.emit('connection', inside);
  }

  private relay(target: string, socket: Duplex, first: Buffer): void {
    this.tlsTunnels.push(target);
    const [host, port] = splitHostPort(target);
    const upstream = connect(port, host);
    this.track(upstream);
    upstream.write(first);
    socket.pipe(upstream).pipe(socket);
    socket.resume();
  }

  private track(socket: Socket | Duplex): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
  }

  private authorized(req: IncomingMessage): boolean {
    if (this.options.credentials === undefined) return true;
    const expected = `Basic ${Buffer.from(this.options.credentials, 'utf8').toString('base64')}`;
    if (req.headers['proxy-authorization'] === expected) return true;
    this.refused++;
    return false;
  }

  private forward(
    via: ProxiedRequest['via'],
    target: string,
    req: IncomingMessage,
    res: ServerResponse,
    path = req.url ?? '/',
  ): void {
    const method = req.method ?? 'GET';
    this.requests.push({ via, target, method, path });
    const [host, port] = splitHostPort(target);
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    delete headers['proxy-connection'];
    const out = request({ host, port, method, path, headers, agent: this.upstream }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    req.pipe(out);
  }
}

function splitHostPort(target: string): [string, number] {
  const match = /^\[?([^\]]*)\]?:(\d+)$/.exec(target);
  return match ? [match[1]!, Number(match[2])] : [target, 80];
}
