/**
 * A minimal Chrome DevTools Protocol client for a child started with `--inspect=127.0.0.1:0`: forces a full
 * garbage collection and reads the V8 heap in use, so a soak can tell a leak (live heap climbing) from the
 * RSS sawtooth of a healthy process.
 */
import type { ChildProcess } from 'node:child_process';
import { WebSocket } from 'undici';

export class HeapProbe {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();

  private constructor(private readonly socket: WebSocket) {
    socket.addEventListener('message', (event) => {
      const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
      if (message.id === undefined) return;
      const waiter = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      if (message.error) waiter?.reject(new Error(message.error.message));
      else waiter?.resolve(message.result);
    });
    socket.addEventListener('close', () => {
      for (const waiter of this.waiting.values()) waiter.reject(new Error('inspector connection closed'));
      this.waiting.clear();
    });
  }

  /** Waits for the child's "Debugger listening on ws://..." line (stderr) and connects. */
  static async attach(child: ChildProcess, timeoutMs = 30_000): Promise<HeapProbe> {
    const url = await new Promise<string>((resolve, reject) => {
      let text = '';
      const timer = setTimeout(() => reject(new Error('no inspector URL from the child')), timeoutMs);
      const onData = (chunk: Buffer): void => {
        text += chunk.toString('utf8');
        const match = /Debugger listening on (ws:\/\/\S+)/.exec(text);
        if (match) {
          clearTimeout(timer);
          child.stderr!.off('data', onData);
          resolve(match[1]!);
        }
      };
      child.stderr!.on('data', onData);
    });
    const socket = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('open', () => resolve(), { once: true });
      socket.addEventListener('error', () => reject(new Error(`cannot connect to ${url}`)), { once: true });
    });
    return new HeapProbe(socket);
  }

  private call(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }

  /** Forces a full GC, then returns the V8 heap in use (MB): the live heap. */
  async liveHeapMB(): Promise<number> {
    await this.call('HeapProfiler.collectGarbage');
    const usage = (await this.call('Runtime.getHeapUsage')) as { usedSize: number; totalSize: number };
    return usage.usedSize / 1024 / 1024;
  }

  close(): void {
    this.socket.close();
  }
}
