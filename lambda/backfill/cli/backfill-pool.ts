/**
 * The parent's side of `catalog-sync backfill --workers N`: N forked worker processes (backfill-child.ts), and a
 * queue of ranges handed out one at a time, largest first (a big range started last would be the tail). A range
 * whose worker fails or dies goes back to the queue, at most {@link MAX_RANGE_ATTEMPTS} attempts in all; then the
 * backfill stops with an error naming the range. Stopping (Ctrl-C, SIGTERM, a range that keeps failing) stops
 * every worker at its next leaf, the progress of each range in hand checkpointed.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  LEAF_MEMORY_ENV,
  leafMemoryBudget,
  processMemory,
  StoppedBy,
  type BackfillRange,
} from '../../contract/index.js';
import type { RangeOutcome } from '../index.js';
import type { FromWorker, ToWorker, WorkerOptions } from './backfill-messages.js';

/** A failing range is tried this many times (retried 3 times) before the backfill stops. */
export const MAX_RANGE_ATTEMPTS = 4;
/** Workers that die before they are ready, in a row, before the backfill gives up starting them. */
const MAX_START_FAILURES = 3;
const CHILD_ENTRY = fileURLToPath(new URL('./backfill-child.js', import.meta.url));

/** What the pool tells the progress display. */
export interface PoolEvents {
  /** Leaves stored so far by the attempt in hand at range `n` (reset when the range is retried). */
  onProgress(n: number, leaves: number): void;
  onRangeDone(outcome: RangeOutcome): void;
  /** A range's attempt failed (it will be retried unless it was its last). */
  onRangeFailed(n: number, attempt: number, message: string): void;
}

/** How the pool ended. */
export type PoolResult =
  | { readonly kind: 'done' }
  | { readonly kind: 'stopped' }
  | { readonly kind: 'failed'; readonly n: number; readonly attempts: number; readonly message: string };

interface Worker {
  readonly child: ChildProcess;
  ready: boolean;
  range: BackfillRange | undefined;
  /** Told to exit: takes no range. */
  leaving: boolean;
}

/** Runs `ranges` in `workers` processes. `stop()` ends it early; `done` resolves when every worker exited. */
export class WorkerPool {
  private readonly queue: BackfillRange[];
  private readonly attempts = new Map<number, number>();
  private readonly workers = new Set<Worker>();
  private stopping = false;
  private result: PoolResult | undefined;
  private startFailures = 0;
  /** Why the last worker that failed to start failed, when it could say. */
  private startError: string | undefined;
  private resolveDone!: (result: PoolResult) => void;
  readonly done: Promise<PoolResult>;

  /** The workers' environment: the parent's, with each worker's share of its leaf memory budget. */
  private readonly childEnv: NodeJS.ProcessEnv;

  constructor(
    ranges: readonly BackfillRange[],
    private readonly workerCount: number,
    private readonly options: WorkerOptions,
    private readonly events: PoolEvents,
  ) {
    const budget = leafMemoryBudget(process.env, processMemory());
    this.childEnv = {
      ...process.env,
      [LEAF_MEMORY_ENV]: String(Math.max(1, Math.floor(budget.bytes / workerCount / 1024 / 1024))),
    };
    this.queue = [...ranges].sort((a, b) => b.leaves - a.leaves || a.n - b.n);
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    this.fill();
  }

  /** Stops every worker at its next leaf (Ctrl-C, SIGTERM); the ranges in hand keep their checkpointed progress. */
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
    const child = fork(CHILD_ENTRY, [], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'json',
      env: this.childEnv,
    });
    const worker: Worker = { child, ready: false, range: undefined, leaving: false };
    this.workers.add(worker);
    child.on('message', (message: FromWorker) => this.onMessage(worker, message));
    child.on('error', () => undefined); // 'exit' follows
    child.on('exit', () => this.onExit(worker));
    this.send(worker, { type: 'init', options: this.options });
  }

  private send(worker: Worker, message: ToWorker): void {
    if (worker.child.connected) worker.child.send(message, () => undefined);
  }

  private onMessage(worker: Worker, message: FromWorker): void {
    switch (message.type) {
      case 'ready':
        worker.ready = true;
        this.startFailures = 0;
        break;
      case 'progress':
        if (worker.range?.n === message.n) this.events.onProgress(message.n, message.leaves);
        return;
      case 'outcome': {
        const range = worker.range;
        if (range?.n !== message.outcome.n) return;
        worker.range = undefined;
        if (message.outcome.done) this.events.onRangeDone(message.outcome);
        else if (this.stopping) break;
        else if (message.outcome.stoppedBy === StoppedBy.interrupted) {
          // The worker was stopped by a signal of its own (Ctrl-C reaches the whole process group, maybe before this
          // process hears it): not a failure of the range. It stays stopped, so it goes, and the range waits.
          this.queue.unshift(range);
          this.events.onProgress(range.n, 0);
          worker.leaving = true;
          this.send(worker, { type: 'exit' });
        } else this.retry(range, `it stopped before the end of its range (${message.outcome.stoppedBy})`);
        break;
      }
      case 'failed': {
        const range = worker.range;
        if (message.n === -1) {
          this.startError = message.message; // it could not open the stores, and exits
          return;
        }
        if (range?.n !== message.n) return;
        worker.range = undefined;
        this.retry(range, message.code === undefined ? message.message : `${message.message} (${message.code})`);
        break;
      }
    }
    this.fill();
  }

  private onExit(worker: Worker): void {
    this.workers.delete(worker);
    const range = worker.range;
    worker.range = undefined;
    if (!this.stopping) {
      if (range !== undefined)
        this.retry(range, `its worker process ${worker.child.pid} died (${describeExit(worker.child)})`);
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

  /** Counts an attempt of `range` that did not finish it; queues it again first, or ends the backfill after the last. */
  private retry(range: BackfillRange, message: string): void {
    const attempt = (this.attempts.get(range.n) ?? 0) + 1;
    this.attempts.set(range.n, attempt);
    this.events.onRangeFailed(range.n, attempt, message);
    if (attempt >= MAX_RANGE_ATTEMPTS) this.end({ kind: 'failed', n: range.n, attempts: attempt, message });
    else this.queue.unshift(range);
  }

  /**
   * Hands each idle worker the next range, starts workers while ranges wait for one (at most `workerCount`), lets
   * idle workers exit when nothing is queued, and resolves `done` once every worker exited.
   */
  private fill(): void {
    for (const worker of this.workers) {
      if (!worker.ready || worker.leaving || worker.range !== undefined) continue;
      const range = this.stopping ? undefined : this.queue.shift();
      if (range === undefined) {
        worker.leaving = true;
        this.send(worker, { type: 'exit' });
        continue;
      }
      worker.range = range;
      this.events.onProgress(range.n, 0);
      this.send(worker, { type: 'range', range });
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
    if (this.workers.size === 0 && (this.stopping || this.queue.length === 0))
      this.resolveDone(this.result ?? { kind: 'done' });
  }

  private end(result: PoolResult): void {
    if (this.stopping) return;
    this.stopping = true;
    this.result = result;
    for (const worker of this.workers) if (worker.range !== undefined) this.send(worker, { type: 'stop' });
  }
}

function describeExit(child: ChildProcess): string {
  return child.signalCode !== null ? `signal ${child.signalCode}` : `exit code ${child.exitCode}`;
}
