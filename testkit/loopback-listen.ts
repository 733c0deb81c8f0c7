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
