/**
 * Deliver now, checkpoint later (issue 29, the pipe form): a consumer whose handler only hands a commit over (writes
 * its line into a pipe) checkpoints a commit only once the program on the other side acknowledges it, by commit key.
 * An acknowledgement of a key covers every commit delivered up to and including it (as a Kafka offset commit does);
 * at most `window` commits are delivered and not acknowledged at once.
 */
import { AcknowledgementError, ConsumerError } from './errors.js';
import type { MirrorCommit } from './mirror.js';

/** Commits delivered and not yet acknowledged, at most, by default: delivery waits beyond it. */
export const DEFAULT_ACK_WINDOW = 10_000;

type Delivered = Pick<MirrorCommit, 'commitKey' | 'commitId' | 'commitTimeStamp'>;

/**
 * The acknowledgements of one consumer's reader: `consume` records each commit its handler delivered
 * ({@link delivered}), the reader's channel calls {@link ack} with the commit keys it finished, and the cursor moves
 * only to acknowledged commits.
 */
export class Acknowledgements {
  private readonly outstanding: Delivered[] = [];
  private lastAcked: string | undefined;
  private onAcked: ((commit: Delivered, count: number) => Promise<void>) | undefined;
  private waiters: (() => void)[] = [];
  private ended: string | undefined;
  private failure: Error | undefined;

  /**
   * @param window - commits delivered and not acknowledged at most (default {@link DEFAULT_ACK_WINDOW}).
   * @param hooks.onSettling - told when the read has ended and the last acknowledgements are awaited: the moment to
   * close the reader's input, so a reader that acknowledges at its end of file can.
   */
  constructor(
    readonly window: number = DEFAULT_ACK_WINDOW,
    private readonly hooks: { readonly onSettling?: () => void } = {},
  ) {
    if (!Number.isInteger(window) || window < 1)
      throw new ConsumerError(`window ${window} must be a whole number >= 1`);
  }

  /** Commits delivered and not yet acknowledged. */
  get waiting(): number {
    return this.outstanding.length;
  }

  /** Why the reader's channel ended (its end of file, an error), or undefined while it is open. */
  get closed(): string | undefined {
    return this.ended;
  }

  /**
   * The reader finished every commit delivered up to and including `commitKey`. A key already acknowledged (or before
   * this run's first delivery) is ignored; one never delivered is an {@link AcknowledgementError}.
   */
  ack(commitKey: string): Promise<void> {
    if (this.lastAcked !== undefined && commitKey <= this.lastAcked) return Promise.resolve();
    const first = this.outstanding[0];
    if (first !== undefined && commitKey < first.commitKey) return Promise.resolve();
    const at = this.outstanding.findIndex((commit) => commit.commitKey === commitKey);
    if (at < 0) {
      const error = new AcknowledgementError(
        `acknowledgement ${JSON.stringify(commitKey)} names no commit delivered and not yet acknowledged` +
          (this.outstanding.length === 0
            ? ' (none is waiting)'
            : ` (waiting: ${first!.commitKey} to ${this.outstanding.at(-1)!.commitKey})`),
      );
      this.fail(error);
      return Promise.reject(error);
    }
    const acked = this.outstanding.splice(0, at + 1);
    this.lastAcked = commitKey;
    this.wakeAll();
    return this.onAcked?.(acked.at(-1)!, acked.length) ?? Promise.resolve();
  }

  /** The reader's channel ended: nothing more will be acknowledged, and waits end. */
  close(reason: string): void {
    this.ended ??= reason;
    this.wakeAll();
  }

  /** Fails every wait with `error` (an acknowledgement that named nothing delivered). */
  fail(error: Error): void {
    this.failure ??= error;
    this.close(error.message);
  }

  /** @internal `consume` wires the checkpoints: called with the last commit of each acknowledged run. */
  attach(onAcked: (commit: Delivered, count: number) => Promise<void>): void {
    this.onAcked = onAcked;
  }

  /** @internal A commit was handed over to the reader. */
  delivered(commit: Delivered): void {
    this.outstanding.push({
      commitKey: commit.commitKey,
      commitId: commit.commitId,
      commitTimeStamp: commit.commitTimeStamp,
    });
  }

  /** @internal Resolves once fewer than `window` commits wait (or the channel ended, or `signal` aborted). */
  async room(signal?: AbortSignal, onFull?: () => void): Promise<void> {
    if (this.outstanding.length < this.window || this.ended !== undefined) return this.check();
    onFull?.();
    while (this.outstanding.length >= this.window && this.ended === undefined && !signal?.aborted)
      await this.next(signal);
    return this.check();
  }

  /** @internal Resolves once every delivered commit is acknowledged (or the channel ended, or `signal` aborted). */
  async settled(signal?: AbortSignal): Promise<void> {
    this.hooks.onSettling?.();
    while (this.outstanding.length > 0 && this.ended === undefined && !signal?.aborted) await this.next(signal);
    return this.check();
  }

  private check(): Promise<void> {
    return this.failure === undefined ? Promise.resolve() : Promise.reject(this.failure);
  }

  private next(signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        signal?.removeEventListener('abort', done);
        resolve();
      };
      this.waiters.push(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  private wakeAll(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
