/**
 * When a named consumer's cursor moves (issue 29): after `every` handled commits or `intervalMs` after the first one
 * not yet checkpointed, whichever comes first, and whenever asked (the read caught up, the consumer stops), one
 * conditional write at a time. At least once holds: a checkpoint only ever names a handled commit.
 *
 * A checkpoint the policy calls for is written beside the handling, not in its way: the next commits are handled
 * while it is in flight (one write at a time; what they add goes in the next one), until {@link CHECKPOINT_BACKLOG}
 * × `every` handled commits are not yet checkpointed; then handling waits for the write. So a crash redelivers fewer
 * than `every` commits (or `intervalMs` of them) while the store keeps up, and never more than that backlog. With
 * `every` 1 each checkpoint is written before the next commit is handled (a crash redelivers the commit in hand at
 * most). The checkpoints asked for (caught up, stopping, a failed handler) are awaited.
 */
import { parseTimestamp, type Ticks } from '../contract/time.js';
import type { CursorState, CursorStore } from '../stores/types.js';
import { checkpoint } from './checkpoint.js';

/** Commits handled between two checkpoints, by default. */
export const DEFAULT_CHECKPOINT_EVERY = 64;
/** The longest a handled commit waits for its checkpoint, by default (ms). */
export const DEFAULT_CHECKPOINT_INTERVAL_MS = 1_000;

/**
 * Checkpoints' worth of handled commits (`every` each) that may be not yet checkpointed, the write in flight's
 * included, before handling waits for that write: what a crash redelivers at most.
 */
export const CHECKPOINT_BACKLOG = 4;

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
  /** A checkpoint the policy called for is being written. */
  private writing: Promise<void> | undefined;
  /** Handled commits the write in flight covers. */
  private inFlight = 0;

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
    if (this.firstPendingAt === undefined) {
      this.firstPendingAt = Date.now();
      this.timer = setTimeout(() => this.background(), this.policy.intervalMs);
      this.timer.unref();
    }
    if (!this.due()) return;
    // A checkpoint after every commit is asked for the fewest redeliveries: each is written before the next commit.
    if (this.policy.every === 1) return this.flush();
    // Handling goes on while a checkpoint is in flight, up to a backlog; then it waits for it.
    if (this.writing !== undefined && this.count + this.inFlight >= this.policy.every * CHECKPOINT_BACKLOG)
      await this.writing;
    this.background();
  }

  /** True when the policy calls for a checkpoint of what is handled. */
  private due(): boolean {
    return (
      this.pending !== undefined &&
      (this.count >= this.policy.every ||
        (this.firstPendingAt !== undefined && Date.now() - this.firstPendingAt >= this.policy.intervalMs))
    );
  }

  /** Writes a checkpoint beside the handling, unless one is in flight (then the next one, once it is done). */
  private background(): void {
    if (this.writing !== undefined) return;
    this.writing = this.flush()
      .catch((error: unknown) => this.fail(error))
      .finally(() => {
        this.writing = undefined;
        if (this.due() && this.failure === undefined) this.background();
      });
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
    await this.writing;
    await this.chain;
    if (this.failure !== undefined) throw this.failure.error;
  }

  private async write(): Promise<void> {
    const target = this.pending;
    if (target === undefined || this.lostRace || !this.hooks.mayWrite()) return;
    this.inFlight = this.count;
    this.clear();
    this.pending = undefined;
    const outcome = await checkpoint(this.cursors, this.key, this.state, { ...target, runId: this.runId }).finally(
      () => (this.inFlight = 0),
    );
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
