/**
 * A front for the DynamoDB emulator that loses answers, as a network can: the first request whose body `match`
 * accepts is forwarded and applied by the emulator, but its answer is never sent back, so the client's request
 * timeout fires and the SDK retries. Requests that arrive meanwhile are forwarded only once that answer is in, so a
 * retry always meets the write already applied (its condition then fails against our own write). Everything else
 * is forwarded as is. The lost answer's connection is held until the client gives up on it.
 */
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { bodyOf, closeTracked, listenOnLoopback } from './loopback-listen.js';

/** A running front: its URL, what it dropped, and its stop. */
export class DynamoAnswerDrop {
  /** Answers the emulator gave that were never passed on (their requests were applied). */
  dropped = 0;
  /** Requests forwarded after a dropped one matched: the SDK's retries among them. */
  forwardedAfterDrop = 0;
  private armed: ((body: string) => boolean) | undefined;
  private gate: Promise<void> = Promise.resolve();

  private constructor(
    private readonly server: Server,
    private readonly sockets: Set<Socket>,
    private readonly upstream: URL,
  ) {}

  static async start(upstream: string): Promise<DynamoAnswerDrop> {
    const sockets = new Set<Socket>();
    let front: DynamoAnswerDrop | undefined;
    const server = createServer((req, res) => void front!.handle(req, res));
    await listenOnLoopback(server, sockets);
    front = new DynamoAnswerDrop(server, sockets, new URL(upstream));
    return front;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Drops the answer of the next request whose body `match` accepts (once). */
  dropNext(match: (body: string) => boolean): void {
    this.armed = match;
  }

  stop(): Promise<void> {
    return closeTracked(this.server, this.sockets);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await bodyOf(req);
    const match = this.armed;
    if (match?.(body.toString('utf8'))) {
      this.armed = undefined;
      let answered!: () => void;
      this.gate = new Promise((resolve) => (answered = resolve));
      // Applied upstream, answer thrown away: the client hears nothing until its timeout.
      await this.forward(req, body).then(
        () => undefined,
        () => undefined,
      );
      this.dropped++;
      answered();
      return;
    }
    await this.gate;
    if (this.dropped > 0) this.forwardedAfterDrop++;
    try {
      const answer = await this.forward(req, body);
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body);
    } catch {
      res.destroy();
    }
  }

  private forward(
    req: IncomingMessage,
    body: Buffer,
  ): Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const upstream = request(
        {
          host: this.upstream.hostname,
          port: this.upstream.port,
          method: req.method,
          path: req.url,
          headers: req.headers,
        },
        (response) => {
          bodyOf(response).then(
            (answer) => resolve({ status: response.statusCode ?? 502, headers: response.headers, body: answer }),
            reject,
          );
        },
      );
      upstream.on('error', reject);
      upstream.end(body);
    });
  }
}
