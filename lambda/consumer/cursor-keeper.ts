/**
 * When a named consumer's cursor moves (issue 29): after `every` handled commits or `intervalMs` after the first one
 * not yet checkpointed, whichever comes first, and whenever asked (the read caught up, the consumer stops), one
 * conditional write at a time. At least once holds: a checkpoint only ever names a handled commit.
 */
import { parseTimestamp, type Ticks } from '../contract/time.js';
import type { CursorState, CursorStore } from '../stores/types.js';
import { checkpoint } from './checkpoint.js';

/** Commits handled between two checkpoints, by default. */
export const DEFAULT_CHECKPOINT_EVERY = 64;
/** The longest a handled commit waits for its checkpoint, by default (ms). */
export const DEFAULT_CHECKPOINT_INTERVAL_MS = 1_000;

/** When a consumer checkpoints: after this many handled commits, or this long after the first not yet checkpointed. */
export interface CheckpointPolicy {
  readonly every: number;
  readonly intervalMs: number;
}

/** What the keeper is told of the instance it keeps the cursor for. */
export interface KeeperHooks {
  /** True while this instance may write the cursor (it holds the consumer's lease, or runs without one). */
  readonly mayWrite: () => boolean;
  /** True when the instance holds a lease: a cursor found past its target was written by a stale holder, not a rival. */
  readonly leased: boolean;
  /** Called once when the keeper stops the instance: a lost race, or a checkpoint that failed off the read's path. */
  readonly stop: () => void;
}

/** One instance's view of its consumer's cursor: what is stored, what is handled and not yet checkpointed. */
export class CursorKeeper {
  /** Conditional writes that moved the cursor. */
  checkpoints = 0;
  /** Another instance moved the cursor past this one's (without a lease): it stopped. */
  lostRace = false;
  /** A checkpoint that failed on the timer, thrown again by {@link settle}. */
  private failure: { error: unknown } | undefined;
  private pending: { value: Ticks; commitId: string } | undefined;
  private count = 0;
  private firstPendingAt: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly cursors: CursorStore,
    private readonly key: string,
    public state: CursorState | undefined,
    private readonly runId: string,
    private readonly policy: CheckpointPolicy,
    private readonly hooks: KeeperHooks,
  ) {}

  /** `n` more commits are handled, the last of them `commit`: checkpoints when the policy says so. */
  async handled(commit: { readonly commitTimeStamp: string; readonly commitId: string }, n: number): Promise<void> {
    if (this.lostRace) return;
    this.pending = { value: parseTimestamp(commit.commitTimeStamp), commitId: commit.commitId };
    this.count += n;
    const now = Date.now();
    if (this.firstPendingAt === undefined) {
      this.firstPendingAt = now;
      this.timer = setTimeout(() => void this.flush().catch((error: unknown) => this.fail(error)), this.policy.intervalMs);
      this.timer.unref();
    }
    if (this.count >= this.policy.every || now - this.firstPendingAt >= this.policy.intervalMs) await this.flush();
  }

  /** Checkpoints every handled commit now (after any checkpoint in flight). */
  flush(): Promise<void> {
    this.chain = this.chain.then(() => this.write());
    return this.chain;
  }

  /** Forgets the handled commits not yet checkpointed (the lease was lost: the next holder delivers them again). */
  drop(): void {
    this.clear();
    this.pending = undefined;
  }

  /** Waits for the writes in flight; throws the error of one that failed off the read's path. */
  async settle(): Promise<void> {
    this.clear();
    await this.chain;
    if (this.failure !== undefined) throw this.failure.error;
  }

  private async write(): Promise<void> {
    const target = this.pending;
    if (target === undefined || this.lostRace || !this.hooks.mayWrite()) return;
    this.clear();
    this.pending = undefined;
    const outcome = await checkpoint(this.cursors, this.key, this.state, { ...target, runId: this.runId });
    this.state = outcome.state;
    if (outcome.outcome === 'written') this.checkpoints++;
    else if (!this.hooks.leased) {
      this.lostRace = true;
      this.hooks.stop();
    }
  }

  private clear(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.firstPendingAt = undefined;
    this.count = 0;
  }

  private fail(error: unknown): void {
    this.failure ??= { error };
    this.hooks.stop();
  }
}
