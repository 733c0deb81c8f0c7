/**
 * A front for s3rver that injects S3's faults and checks what s3rver does not: the SigV4 signature.
 *
 * s3rver accepts any SigV4 signature (it checks only that the access key exists, and the request time), so a
 * signing bug would pass against it. This front, an independent implementation of SigV4 on node:crypto, verifies
 * every header-signed request against `secrets` (the canonical request rebuilt from what arrived: method, the path
 * as sent, the query, the signed headers, the payload hash) and the payload itself: a body whose SHA-256 or
 * `x-amz-checksum-crc32` differs from its headers is refused as S3 refuses it. Then it forwards to s3rver,
 * unless a fault rule matches: an S3 XML error answer (status, Code, Message, headers), a connection reset, no
 * answer at all (`hang`: the request is held until the client gives up or the front stops), or an answer lost
 * (`lost`: forwarded, so it takes effect, then the connection reset instead of the answer).
 *
 * Time is checked as S3 checks it: a signed request whose `x-amz-date` is more than 15 minutes from the front's
 * clock is refused with 403 RequestTimeTooSkewed (its `ServerTime` in the body); every answer carries the
 * front's clock in `Date`. `clockOffsetMs` sets that clock off from the machine's, which is how a test (or a
 * person at the CLI) gives catalog-sync a skewed clock without changing the machine's. The verifier is checked
 * against vectors computed by aws4, an independent SigV4 implementation (test/fixtures/sigv4/); it lives in
 * s3-signed-request.ts.
 */
import {
  createServer,
  request,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { bodyOf, closeTracked, listenOnLoopback } from './loopback-listen.js';
import { checkSignedRequest, parseAmzDate, type S3Refusal, type SeenRequest } from './s3-signed-request.js';

export type { SeenRequest } from './s3-signed-request.js';

/** What the front does instead of forwarding. */
export type S3Fault =
  | {
      readonly kind: 'answer';
      readonly status: number;
      readonly code: string;
      readonly message?: string;
      readonly headers?: Record<string, string>;
    }
  | { readonly kind: 'reset' }
  | { readonly kind: 'hang' }
  /** Forwarded to s3rver (the request takes effect), then the connection reset before any answer: a lost answer. */
  | { readonly kind: 'lost' };

/** When to answer with a fault: requests `match` accepts, every `every`-th of them (default each), `times` times at most. */
export interface FaultRule {
  readonly match: (request: SeenRequest) => boolean;
  readonly fault: S3Fault;
  readonly every?: number;
  readonly times?: number;
}

/** Options of {@link S3FaultFront.start}. */
export interface S3FaultFrontOptions {
  /** Secret of each access key whose signatures are verified; default s3rver's `S3RVER`/`S3RVER`. */
  readonly secrets?: Readonly<Record<string, string>>;
  /** The front's clock minus the machine's, ms (default 0): requests signed on the machine's clock look skewed by it. */
  readonly clockOffsetMs?: number;
  /**
   * Forward every request without `If-Match` / `If-None-Match` (after checking its signature): a server that ignores
   * conditional writes, as stock s3rver and some S3-compatible servers do, without a second s3rver.
   */
  readonly dropConditions?: boolean;
}

/** An S3 error body as S3 writes it. */
export function s3ErrorXml(code: string, message: string, extra: Record<string, string> = {}): string {
  const fields = Object.entries({ Code: code, Message: message, ...extra, RequestId: 'FRONT', HostId: 'FRONT' })
    .map(
      ([name, value]) =>
        `<${name}>${value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}</${name}>`,
    )
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error>${fields}</Error>`;
}

/** A running front. */
export class S3FaultFront {
  /** Every request received, faulted or not, in order. */
  readonly seen: SeenRequest[] = [];
  /** Faults answered, by S3 code (`reset` for resets). */
  readonly faults = new Map<string, number>();
  private readonly rules: { rule: FaultRule; matched: number; fired: number }[] = [];
  private readonly sockets = new Set<Socket>();
  private gate: { count: number; open: Promise<void>; release: () => void } | undefined;
  /** Requests held by a `hang` fault, and how many of them the client has since given up (closed the connection). */
  private hung = 0;
  private abandoned = 0;
  private readonly waiters: { ready: () => boolean; resolve: () => void }[] = [];

  private constructor(
    private readonly server: Server,
    private readonly upstream: URL,
    private readonly secrets: Readonly<Record<string, string>>,
    private readonly clockOffsetMs: number,
    private readonly dropConditions: boolean,
  ) {}

  /** Starts a front on 127.0.0.1 forwarding to `target` (s3rver's `http://127.0.0.1:PORT`). */
  static async start(target: string, options: S3FaultFrontOptions = {}): Promise<S3FaultFront> {
    const server = createServer();
    const front = new S3FaultFront(
      server,
      new URL(target),
      options.secrets ?? { S3RVER: 'S3RVER' },
      options.clockOffsetMs ?? 0,
      options.dropConditions === true,
    );
    server.on('request', (req: IncomingMessage, res: ServerResponse) => void front.handle(req, res));
    await listenOnLoopback(server, front.sockets);
    return front;
  }

  /** `http://127.0.0.1:PORT`: an S3 endpoint (path-style). */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Adds a fault rule (rules are tried in the order added; the first that fires answers). */
  fault(rule: FaultRule): void {
    this.rules.push({ rule, matched: 0, fired: 0 });
  }

  /**
   * Holds every answer until `count` requests have arrived from now on (then answers them all): a test sees
   * `count` requests in flight at once, whatever the machine's speed.
   */
  holdUntil(count: number): void {
    let release = (): void => {};
    const open = new Promise<void>((resolve) => (release = resolve));
    this.gate = { count: this.seen.length + count, open, release };
  }

  /** Resolves once `count` requests are held by a `hang` fault. */
  whenHung(count = 1): Promise<void> {
    return this.when(() => this.hung >= count);
  }

  /** Resolves once the client has closed the connections of `count` held requests (it aborted them). */
  whenAbandoned(count = 1): Promise<void> {
    return this.when(() => this.abandoned >= count);
  }

  /** Requests held by a `hang` fault so far, and how many of those the client closed. */
  get hangs(): { readonly held: number; readonly abandoned: number } {
    return { held: this.hung, abandoned: this.abandoned };
  }

  /** The front's clock, ms. */
  now(): number {
    return Date.now() + this.clockOffsetMs;
  }

  /** Removes every rule and forgets what was seen and held. */
  reset(): void {
    this.gate?.release();
    this.gate = undefined;
    this.hung = 0;
    this.abandoned = 0;
    this.rules.length = 0;
    this.seen.length = 0;
    this.faults.clear();
  }

  /** The PUTs seen whose path is `/{bucket}/{encoded key}`. */
  putsOf(path: string): SeenRequest[] {
    return this.seen.filter((seen) => seen.method === 'PUT' && seen.url.split('?')[0] === path);
  }

  stop(): Promise<void> {
    return closeTracked(this.server, this.sockets);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.on('error', () => {});
    const seen: SeenRequest = {
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      headers: req.headers,
      body: await bodyOf(req),
    };
    this.seen.push(seen);
    const gate = this.gate;
    if (gate) {
      if (this.seen.length >= gate.count) gate.release();
      await gate.open;
    }
    const fault = this.faultFor(seen);
    if (fault?.kind === 'hang') {
      this.count('hang');
      this.hung++;
      res.on('close', () => {
        this.abandoned++;
        this.wake();
      });
      this.wake();
      return;
    }
    if (fault?.kind === 'reset') {
      this.count('reset');
      req.socket.resetAndDestroy();
      return;
    }
    if (fault && fault.kind !== 'lost') {
      this.count(fault.code);
      return answer(res, fault.status, fault.code, fault.message ?? `injected ${fault.code}`, {
        date: this.httpDate(),
        ...fault.headers,
      });
    }
    const refusal = this.verify(seen);
    if (refusal)
      return answer(res, refusal.status, refusal.code, refusal.message, { date: this.httpDate() }, refusal.extra);
    const forward = request(
      {
        host: this.upstream.hostname,
        port: this.upstream.port,
        method: seen.method,
        path: seen.url,
        headers: this.upstreamHeaders(req.headers),
      },
      (response) => {
        if (fault?.kind === 'lost') {
          this.count('lost');
          response.resume();
          response.on('end', () => req.socket.resetAndDestroy());
          return;
        }
        res.writeHead(response.statusCode ?? 502, { ...response.headers, date: this.httpDate() });
        response.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    forward.end(seen.body);
  }

  private faultFor(seen: SeenRequest): S3Fault | undefined {
    for (const entry of this.rules) {
      if (!entry.rule.match(seen)) continue;
      entry.matched++;
      if (entry.rule.times !== undefined && entry.fired >= entry.rule.times) continue;
      if (entry.matched % (entry.rule.every ?? 1) !== 0) continue;
      entry.fired++;
      return entry.rule.fault;
    }
    return undefined;
  }

  private count(code: string): void {
    this.faults.set(code, (this.faults.get(code) ?? 0) + 1);
  }

  private when(ready: () => boolean): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push({ ready, resolve });
      this.wake();
    });
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) {
      if (!waiter.ready()) continue;
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  }

  /**
   * The headers to forward: s3rver checks `x-amz-date` against the machine's clock (not the signature), so with
   * the front's clock set off, the date it verified is moved back onto the machine's clock for s3rver. With
   * `dropConditions`, without `If-Match` / `If-None-Match`.
   */
  private upstreamHeaders(received: IncomingHttpHeaders): IncomingHttpHeaders {
    const headers = this.dropConditions ? withoutConditions(received) : received;
    const amzDate = headers['x-amz-date'];
    if (this.clockOffsetMs === 0 || typeof amzDate !== 'string') return headers;
    const machine = new Date(parseAmzDate(amzDate) - this.clockOffsetMs)
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d{3}/, '');
    return { ...headers, 'x-amz-date': machine };
  }

  private httpDate(): string {
    return new Date(this.now()).toUTCString();
  }

  private verify(seen: SeenRequest): S3Refusal | undefined {
    return checkSignedRequest(seen, this.secrets, this.now());
  }
}

/** `headers` without the conditions of a conditional write. */
function withoutConditions(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const { 'if-match': _match, 'if-none-match': _noneMatch, ...rest } = headers;
  return rest;
}

function answer(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
  extra: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/xml', ...headers });
  res.end(s3ErrorXml(code, message, extra));
}
