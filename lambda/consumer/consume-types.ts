/** The types of a named consumer: its handler, options and result (consume.ts runs it). */
import type { CursorStore, LeaseRecord } from '../stores/types.js';
import type { Acknowledgements } from './acknowledgements.js';
import { DEFAULT_CHECKPOINT_EVERY, DEFAULT_CHECKPOINT_INTERVAL_MS, type CheckpointPolicy } from './cursor-keeper.js';
import type { LeaseOptions } from './lease.js';
import type { Mirror, MirrorCommit } from './mirror.js';
import type { ReadOptions } from './reader.js';
import type { SeekTo } from './seek.js';

/** What a handler is told besides the commit. */
export interface ConsumeContext {
  /** The consumer's name. */
  readonly consumer: string;
  /** The commit key: the same for every delivery of this commit, to every instance. */
  readonly idempotencyKey: string;
  /** This `consume` call's id (a kuuid id), as stored with the cursor's checkpoints. */
  readonly runId: string;
}

/** Handles one commit; the cursor moves past it only after this resolves. Throwing stops the consumer. */
export type CommitHandler = (commit: MirrorCommit, context: ConsumeContext) => unknown;

/** Where a named consumer reads, where its cursor lives, and how often it checkpoints. */
export interface ConsumeOptions extends Omit<ReadOptions, 'after' | 'since'> {
  readonly mirror: Mirror;
  /**
   * The cursor table (the sync's own) or the local folder's cursors. The consumer's cursor is the item of its mirror
   * and name (`consumer#{mirror}#{name}`); a store that keeps consumer state (DynamoStore, the folder's) also keeps
   * its lease and adopts a cursor stored under the name alone by an earlier version.
   */
  readonly cursors: CursorStore;
  /** Consumers of the same mirror this one never passes (by name), besides the watermark. */
  readonly dependsOn?: readonly string[];
  /** Where a consumer with no stored cursor begins: after a commit key, or at a time. Default: the first commit. */
  readonly start?: Pick<ReadOptions, 'after' | 'since'>;
  /** Moves the cursor before reading (holding the lease): to the watermark, the beginning, after a key or to a time. */
  readonly seek?: SeekTo;
  /** Commits handled between two checkpoints (default 64); a checkpoint is also written whenever the read is caught up, and on a clean stop. */
  readonly checkpointEvery?: number;
  /** The longest a handled commit waits for its checkpoint, in ms (default 1,000). */
  readonly checkpointIntervalMs?: number;
  /**
   * One active instance per name: the lease's settings, or `false` for none (a Lambda with a reserved concurrency of 1
   * needs none). Default: a lease when the cursor store keeps one; instances stand by with `follow`.
   */
  readonly lease?: LeaseOptions | false;
  /** Checkpoint only commits acknowledged through this (a handler that only hands commits over, as `changes` into a pipe). */
  readonly acknowledgements?: Acknowledgements;
  /** Called in follow mode each time the read caught up, after its checkpoint, before it waits (a heartbeat). */
  readonly onIdle?: () => Promise<void> | void;
  /** The follower's cursor name, which a consumer must not take (default `catalog-to-s3`). */
  readonly followerCursor?: string;
  /** Id of this call, stored as the cursor's `runId` and in its lease: unique per instance. A new kuuid id by default. */
  readonly runId?: string;
}

/** Why a {@link consume} call returned. */
export const ConsumeStop = {
  /** Every commit up to the bound was handled and checkpointed (not in follow mode). */
  caughtUp: 'caught-up',
  /** The signal aborted; everything handled was checkpointed. */
  aborted: 'aborted',
  /** Another instance of the same consumer moved the cursor at or past this one's (without a lease): this one stopped. */
  lostRace: 'lost-race',
  /** Another instance holds the consumer's lease, and this one does not stand by: nothing was delivered. */
  held: 'held',
  /** Another instance took the lease over (this one could not renew it in time), and this one does not stand by. */
  lostLease: 'lost-lease',
} as const;
/** One of {@link ConsumeStop}'s values. */
export type ConsumeStop = (typeof ConsumeStop)[keyof typeof ConsumeStop];

/** What a {@link consume} call did. */
export interface ConsumeResult {
  readonly consumer: string;
  readonly runId: string;
  /** The stored cursor when the call began (7 fractional digits), or null when it had none. */
  readonly cursorBefore: string | null;
  /** The stored cursor when it returned, as this call last saw it. */
  readonly cursorAfter: string | null;
  /** Commits the handler finished. */
  readonly commits: number;
  /** Conditional writes that moved the cursor. */
  readonly checkpoints: number;
  readonly stoppedBy: ConsumeStop;
  /** With `stoppedBy: held`: the lease that holds the name. */
  readonly heldBy?: LeaseRecord;
}

/**
 * Batches that follow the stream's depth (`consumeBatches`' `batchSize: { max }`): the handler works on one batch
 * while the next commits are read, and when it is free again gets every commit read meanwhile (at least one, at most
 * `max`). A deep stream (a burst, a backlog after a backfill) gives batches of `max`; a caught-up one, small batches
 * with no wait. Still one batch at a time, in order: the cursor moves past a batch only after it resolves.
 */
export interface AdaptiveBatchSize {
  readonly max: number;
  /** Told of each commit as it is read, in order, before its batch is handed over. */
  readonly onRead?: (commit: MirrorCommit) => void;
  /**
   * Told of each commit as soon as its manifest is read, in whatever order the reads end (before {@link onRead}): work
   * that needs no order (reading leaf bodies ahead, starting a package's feed) may start, and a slow read of one
   * manifest holds it up for none of the commits after it. Only commits the read delivers if it goes on; none once
   * the read has stopped (a limit, a signal, a failure), even if its manifest arrives later.
   */
  readonly onFetched?: (commit: MirrorCommit) => void;
}

/** Commits a batch handler gets at once: a fixed count, or {@link AdaptiveBatchSize}. */
export type BatchSize = number | AdaptiveBatchSize;

/** Handles a run of consecutive commits; the cursor moves past the last of them only after this resolves. */
export type BatchHandler = (commits: readonly MirrorCommit[], context: ConsumeContext) => unknown;

/** The checkpoint policy of `options`, with the defaults. */
export function policyOf(options: Pick<ConsumeOptions, 'checkpointEvery' | 'checkpointIntervalMs'>): CheckpointPolicy {
  return {
    every: options.checkpointEvery ?? DEFAULT_CHECKPOINT_EVERY,
    intervalMs: options.checkpointIntervalMs ?? DEFAULT_CHECKPOINT_INTERVAL_MS,
  };
}
