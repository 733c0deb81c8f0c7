/**
 * A front for s3rver that gives it S3's latency, as the in-memory S3 of the view's rows does (view-upkeep.ts): every
 * answer waits 20-50 ms, and 2% of them 200 ms (a slow tail). Bodies stream through both ways untouched (a part of
 * a multipart upload is never held whole here); the wait is added between s3rver's answer and the client's, so a
 * request costs at least the latency whatever s3rver takes. Deterministic: the waits come from a seeded generator.
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { mulberry32 } from '../testkit/index.js';

/** The latency the front adds, as the figures name it. */
export const FRONT_LATENCY = '20-50 ms a request, 2% at 200 ms';

/** A running front. */
export interface S3LatencyFront {
  readonly endpoint: string;
  /** Requests answered, and of them those answered after the slow tail's 200 ms. */
  readonly requests: () => { readonly all: number; readonly slow: number };
  stop(): Promise<void>;
}

/** Starts a front on 127.0.0.1 forwarding to `upstream` (s3rver's endpoint). */
export async function startS3LatencyFront(upstream: string, seed: number): Promise<S3LatencyFront> {
  const random = mulberry32(seed);
  const target = new URL(upstream);
  const sockets = new Set<Socket>();
  let all = 0;
  let slow = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const forward = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        const tail = random.chance(0.02);
        const ms = tail ? 200 : 20 + random.int(0, 30);
        all++;
        if (tail) slow++;
        setTimeout(() => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        }, ms);
      },
    );
    forward.on('error', () => res.destroy());
    req.on('error', () => forward.destroy());
    req.pipe(forward);
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => ({ all, slow }),
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
