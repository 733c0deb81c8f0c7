/**
 * The child's side of a worker pool (worker-pool.ts): a forked process, never run by hand, that opens its stores
 * once (`init`), then runs the items it is handed one at a time, reporting progress and each outcome. It stops the
 * item in hand on `stop`, on SIGINT/SIGTERM (Ctrl-C reaches the whole process group), and when the parent goes
 * away (its channel closes); a second signal quits at once.
 */
import { CatalogSyncError } from '../../contract/errors.js';
import type { FromWorker, ToWorker } from './worker-messages.js';

/** Least time between two progress messages of a worker. */
const PROGRESS_EVERY_MS = 100;

/** What a worker's module gives {@link serveWorker}: how to open, run an item, and close. */
export interface WorkerHooks<Item extends { readonly n: number }, Outcome, Options> {
  open(options: Options): Promise<{
    run(item: Item, signal: AbortSignal, progress: (amount: number) => void): Promise<Outcome>;
    close(): Promise<void>;
  }>;
}

/** Serves the parent's messages in this process with `hooks`. */
export function serveWorker<Item extends { readonly n: number }, Outcome, Options>(
  hooks: WorkerHooks<Item, Outcome, Options>,
): void {
  const stop = new AbortController();
  let opened: Awaited<ReturnType<WorkerHooks<Item, Outcome, Options>['open']>> | undefined;
  let busy: Promise<void> = Promise.resolve();
  const send = (message: FromWorker<Outcome>): void => {
    if (process.connected) process.send!(message);
  };
  const failed = (n: number, error: unknown): void =>
    send({
      type: 'failed',
      n,
      message: (error as Error)?.message ?? String(error),
      ...(error instanceof CatalogSyncError ? { code: error.code } : {}),
    });
  const run = async (item: Item): Promise<void> => {
    let last = 0;
    try {
      const outcome = await opened!.run(item, stop.signal, (amount) => {
        const now = Date.now();
        if (now - last < PROGRESS_EVERY_MS) return;
        last = now;
        send({ type: 'progress', n: item.n, amount });
      });
      send({ type: 'outcome', outcome });
    } catch (error) {
      failed(item.n, error);
    }
  };
  const exit = async (code: number): Promise<never> => {
    stop.abort();
    await busy.catch(() => undefined);
    await opened?.close().catch(() => undefined);
    process.exit(code);
  };
  process.on('message', (message: ToWorker<Item, Options>) => {
    switch (message.type) {
      case 'init':
        busy = hooks.open(message.options).then(
          (worker) => {
            opened = worker;
            send({ type: 'ready' });
          },
          (error: unknown) => {
            failed(-1, error);
            void exit(1);
          },
        );
        break;
      case 'item':
        busy = busy.then(() => run(message.item));
        break;
      case 'stop':
        stop.abort();
        break;
      case 'exit':
        void exit(0);
        break;
    }
  });
  // The parent went away (killed): stop at once, keeping what is complete.
  process.on('disconnect', () => void exit(1));
  // Ctrl-C reaches every process of the terminal's group: stop like the parent's `stop`, and let the parent decide.
  // A second Ctrl-C quits at once (the parent's own `stop`, which may come first, is not a Ctrl-C: count signals only).
  let signals = 0;
  const onSignal = (): void => {
    if (++signals > 1) process.exit(130);
    stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}
