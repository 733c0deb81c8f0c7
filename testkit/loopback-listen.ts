import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Starts `server` on 127.0.0.1 (a free port), keeping every open connection in `sockets` so that a test server's
 * `stop()` can close them at once instead of waiting for keep-alive connections to time out.
 */
export async function listenOnLoopback(server: Server, sockets: Set<Socket>): Promise<void> {
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
}

/** Closes `server` after destroying every connection in `sockets` (see {@link listenOnLoopback}). */
export async function closeTracked(server: Server, sockets: Set<Socket>): Promise<void> {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
}

/** A request's whole body. */
export async function bodyOf(req: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
