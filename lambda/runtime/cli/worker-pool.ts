/**
 * The parent's side of a command run by N forked worker processes (`backfill --workers N`, `view --rebuild
 * --workers N`): a queue of items handed out one at a time, heaviest first (a big item started last would be the
 * tail), in stages (an item of stage k + 1 is handed out only once stage k has none queued or in hand: the view
 * rebuild's ranges before its shards). An item whose worker fails or dies goes back to the queue, at most
 * {@link MAX_ITEM_ATTEMPTS} attempts in all; then the pool stops with an error naming the item. Stopping (Ctrl-C,
 * SIGTERM, an item that keeps failing) stops every worker at its next step, what each item in hand completed kept.
 * The child side is worker-child.ts.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { StoppedBy } from '../../contract/run-summary.js';
import type { FromWorker, ToWorker } from './worker-messages.js';

/** A failing item is tried this many times (retried 3 times) before the pool stops. */
export const MAX_ITEM_ATTEMPTS = 4;
/** Workers that die before they are ready, in a row, before the pool gives up starting them. */
const MAX_START_FAILURES = 3;

/** What the pool hands out: an item's number, and its weight (heaviest first). */
export interface PoolItem {
  readonly n: number;
  readonly weight: number;
}

/** What a worker says of an item it ran: done, or stopped (why). */
export interface PoolOutcome {
  readonly n: number;
  readonly done: boolean;
  readonly stoppedBy?: string;
}

/** What the pool tells the progress display. */
export interface PoolEvents<Outcome> {
  /** How far the attempt in hand at item `n` got (reset to 0 when the item is retried). */
  onProgress(n: number, amount: number): void;
  onItemDone(outcome: Outcome): void;
  /** An item's attempt failed (it will be retried unless it was its last). */
  onItemFailed(n: number, attempt: number, message: string): void;
}

/** How the pool ended. */
export type PoolResult =
  | { readonly kind: 'done' }
  | { readonly kind: 'stopped' }
  | { readonly kind: 'failed'; readonly n: number; readonly attempts: number; readonly message: string };

interface Worker<Item> {
  readonly child: ChildProcess;
  ready: boolean;
  item: Item | undefined;
  /** Told to exit: takes no item. */
  leaving: boolean;
}

/**
 * Runs the items of `stages`, stage after stage, in `workerCount` processes of `childEntry` (a module that calls
 * {@link serveWorker}), each opened with `options`. `stop()` ends it early; `done` resolves when every worker exited.
 */
export class WorkerPool<Item extends PoolItem, Outcome extends PoolOutcome, Options> {
  private readonly stages: Item[][];
  private stage = 0;
  private readonly attempts = new Map<number, number>();
  private readonly workers = new Set<Worker<Item>>();
  private stopping = false;
  private result: PoolResult | undefined;
  private startFailures = 0;
  /** Why the last worker that failed to start failed, when it could say. */
  private startError: string | undefined;
  private resolveDone!: (result: PoolResult) => void;
  readonly done: Promise<PoolResult>;

  constructor(
    private readonly childEntry: string,
    stages: readonly (readonly Item[])[],
    private readonly workerCount: number,
    private readonly options: Options,
    private readonly events: PoolEvents<Outcome>,
    /** The workers' environment (default: the parent's). */
    private readonly childEnv: NodeJS.ProcessEnv = process.env,
  ) {
    this.stages = stages.map((items) => [...items].sort((a, b) => b.weight - a.weight || a.n - b.n));
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    this.fill();
  }

  /** The current stage's queue. */
  private get queue(): Item[] {
    return this.stages[this.stage] ?? [];
  }

  /** Stops every worker at its next step (Ctrl-C, SIGTERM); what the items in hand completed is kept. */
  stop(): void {
    this.end({ kind: 'stopped' });
    this.fill();
  }

  /** Kills every worker at once (a second Ctrl-C). */
  kill(): void {
    for (const worker of this.workers) worker.child.kill('SIGKILL');
  }

  /** The process ids of the workers alive. */
  pids(): number[] {
    return [...this.workers].map((worker) => worker.child.pid ?? -1);
  }

  private spawn(): void {
    const child = fork(this.childEntry, [], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'json',
      env: this.childEnv,
    });
    const worker: Worker<Item> = { child, ready: false, item: undefined, leaving: false };
    this.workers.add(worker);
    child.on('message', (message: FromWorker<Outcome>) => this.onMessage(worker, message));
    child.on('error', () => undefined); // 'exit' follows
    child.on('exit', () => this.onExit(worker));
    this.send(worker, { type: 'init', options: this.options });
  }

  private send(worker: Worker<Item>, message: ToWorker<Item, Options>): void {
    if (worker.child.connected) worker.child.send(message, () => undefined);
  }

  private onMessage(worker: Worker<Item>, message: FromWorker<Outcome>): void {
    switch (message.type) {
      case 'ready':
        worker.ready = true;
        this.startFailures = 0;
        break;
      case 'progress':
        if (worker.item?.n === message.n) this.events.onProgress(message.n, message.amount);
        return;
      case 'outcome': {
        const item = worker.item;
        if (item?.n !== message.outcome.n) return;
        worker.item = undefined;
        if (message.outcome.done) this.events.onItemDone(message.outcome);
        else if (this.stopping) break;
        else if (message.outcome.stoppedBy === StoppedBy.interrupted) {
          // The worker was stopped by a signal of its own (Ctrl-C reaches the whole process group, maybe before this
          // process hears it): not a failure of the item. It stays stopped, so it goes, and the item waits.
          this.queue.unshift(item);
          this.events.onProgress(item.n, 0);
          worker.leaving = true;
          this.send(worker, { type: 'exit' });
        } else this.retry(item, `it stopped before the end of its item (${message.outcome.stoppedBy})`);
        break;
      }
      case 'failed': {
        const item = worker.item;
        if (message.n === -1) {
          this.startError = message.message; // it could not open the stores, and exits
          return;
        }
        if (item?.n !== message.n) return;
        worker.item = undefined;
        this.retry(item, message.code === undefined ? message.message : `${message.message} (${message.code})`);
        break;
      }
    }
    this.fill();
  }

  private onExit(worker: Worker<Item>): void {
    this.workers.delete(worker);
    const item = worker.item;
    worker.item = undefined;
    if (!this.stopping) {
      if (item !== undefined)
        this.retry(item, `its worker process ${worker.child.pid} died (${describeExit(worker.child)})`);
      if (!worker.ready && !worker.leaving && ++this.startFailures >= MAX_START_FAILURES) {
        this.end({
          kind: 'failed',
          n: -1,
          attempts: this.startFailures,
          message: this.startError ?? `worker processes exit as they start (${describeExit(worker.child)})`,
        });
      }
    }
    this.fill();
  }

  /** Counts an attempt of `item` that did not finish it; queues it again first, or ends the pool after the last. */
  private retry(item: Item, message: string): void {
    const attempt = (this.attempts.get(item.n) ?? 0) + 1;
    this.attempts.set(item.n, attempt);
    this.events.onItemFailed(item.n, attempt, message);
    if (attempt >= MAX_ITEM_ATTEMPTS) this.end({ kind: 'failed', n: item.n, attempts: attempt, message });
    else this.queue.unshift(item);
  }

  /**
   * Moves to the next stage once this one has nothing queued or in hand, hands each idle worker the next item,
   * starts workers while items wait for one (at most `workerCount`), lets idle workers exit when nothing is left for
   * them (in this stage or a later one), and resolves `done` once every worker exited.
   */
  private fill(): void {
    const inHand = (): boolean => [...this.workers].some((worker) => worker.item !== undefined);
    while (!this.stopping && this.queue.length === 0 && !inHand() && this.stage < this.stages.length - 1) this.stage++;
    const later = this.stages.slice(this.stage + 1).some((items) => items.length > 0);
    for (const worker of this.workers) {
      if (!worker.ready || worker.leaving || worker.item !== undefined) continue;
      const item = this.stopping ? undefined : this.queue.shift();
      if (item === undefined) {
        // Kept for the next stage (forking and opening the stores again would cost more than waiting).
        if (!this.stopping && later) continue;
        worker.leaving = true;
        this.send(worker, { type: 'exit' });
        continue;
      }
      worker.item = item;
      this.events.onProgress(item.n, 0);
      this.send(worker, { type: 'item', item });
    }
    if (!this.stopping) {
      const active = [...this.workers].filter((worker) => !worker.leaving);
      let starting = active.filter((worker) => !worker.ready).length;
      let count = active.length;
      while (this.queue.length > starting && count < this.workerCount) {
        this.spawn();
        starting++;
        count++;
      }
    }
    if (this.workers.size === 0 && (this.stopping || (this.queue.length === 0 && !later)))
      this.resolveDone(this.result ?? { kind: 'done' });
  }

  private end(result: PoolResult): void {
    if (this.stopping) return;
    this.stopping = true;
    this.result = result;
    for (const worker of this.workers) if (worker.item !== undefined) this.send(worker, { type: 'stop' });
  }
}

function describeExit(child: ChildProcess): string {
  return child.signalCode !== null ? `signal ${child.signalCode}` : `exit code ${child.exitCode}`;
}
