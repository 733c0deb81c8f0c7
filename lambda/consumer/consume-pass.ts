/**
 * One active stretch of a named consumer (consume.ts runs one per lease it holds): its cursor read (or adopted, or
 * moved by a seek), the commits after it read and handed to the handler in batches, and checkpoints as the
 * {@link CursorKeeper} decides, until the read ends, the signal aborts, the handler fails or the lease is lost.
 */
import { BUILT_IN_CONSUMERS } from '../contract/consumer-keys.js';
import { commitKey as commitKeyOfTicks } from '../contract/keys.js';
import { UNIX_EPOCH_TICKS, type Ticks } from '../contract/time.js';
import type { CursorState, CursorStore } from '../stores/types.js';
import type { Watermark } from './documents.js';
import { openConsumerCursor, readConsumerCursor } from './consumer-cursors.js';
import { ConsumeStop, policyOf, type BatchHandler, type BatchSize, type ConsumeOptions } from './consume-types.js';
import { CursorKeeper } from './cursor-keeper.js';
import { ConsumerHandlerError } from './errors.js';
import type { ConsumerLease } from './lease.js';
import type { Mirror, MirrorCommit } from './mirror.js';
import { readCommits } from './reader.js';
import { seekCursor, seekTarget, type SeekTo } from './seek.js';

/** What one pass did. */
export interface PassResult {
  readonly cursorBefore: string | null;
  readonly cursorAfter: string | null;
  readonly commits: number;
  readonly checkpoints: number;
  readonly stoppedBy: ConsumeStop;
}

/** What the pass is given besides the options. */
export interface PassContext {
  readonly runId: string;
  readonly dependsOn: readonly string[];
  readonly lease?: ConsumerLease;
  readonly seek?: SeekTo;
  /** The watermark read by the place's check: the read's first bound (see {@link ReaderHooks.watermark}). */
  readonly watermark?: Promise<(Watermark & { readonly ticks: Ticks }) | undefined>;
}

/** Runs the consumer from its stored cursor (after a seek, if asked) while it may. */
export async function runPass(
  name: string,
  key: string,
  handler: BatchHandler,
  options: ConsumeOptions & { readonly batchSize: BatchSize },
  pass: PassContext,
): Promise<PassResult> {
  const { cursors, mirror, acknowledgements: acks } = options;
  const { runId, lease } = pass;
  let state = await openConsumerCursor(cursors, mirror, name, runId);
  const cursorBefore = state?.stored ?? null;
  if (pass.seek !== undefined)
    state = await seekCursor(cursors, key, state, { ...(await seekTarget(mirror, pass.seek)), runId });
  const start = state === undefined ? (options.start ?? {}) : { after: keyOrUndefined(state.value) };
  const stop = new AbortController();
  const signal = AbortSignal.any([
    stop.signal,
    ...(options.signal ? [options.signal] : []),
    ...(lease ? [lease.lost] : []),
  ]);
  const keeper = new CursorKeeper(cursors, key, state, runId, policyOf(options), {
    mayWrite: () => lease === undefined || lease.held,
    leased: lease !== undefined,
    stop: () => stop.abort(),
  });
  acks?.attach((commit, count) => keeper.handled(commit, count));
  const context = { consumer: name, runId };
  let commits = 0;
  let batch: MirrorCommit[] = [];
  const runBatch = async (): Promise<void> => {
    if (batch.length === 0) return;
    const batchCommits = batch;
    batch = [];
    const last = batchCommits[batchCommits.length - 1]!;
    try {
      if (acks !== undefined) await acks.room(signal);
      await handler(batchCommits, { ...context, idempotencyKey: last.commitKey });
    } catch (cause) {
      await keeper.flush();
      throw new ConsumerHandlerError(name, batchCommits[0]!.commitKey, { cause });
    }
    commits += batchCommits.length;
    if (acks === undefined) await keeper.handled(last, batchCommits.length);
    else for (const commit of batchCommits) acks.delivered(commit);
  };
  const batches = batchesOf(options.batchSize, runBatch, () => batch.length, stop);
  const hooks = {
    ...(pass.watermark === undefined ? {} : { watermark: pass.watermark }),
    ...(pass.dependsOn.length > 0
      ? {
          bound: () => dependencyBound(cursors, mirror, pass.dependsOn),
          boundIsStored: pass.dependsOn.every((name) => BUILT_IN_CONSUMERS.includes(name)),
        }
      : {}),
    ...(typeof options.batchSize === 'object' && options.batchSize.onFetched !== undefined
      ? { onFetched: options.batchSize.onFetched }
      : {}),
    onIdle: async () => {
      await batches.drain();
      await keeper.flush();
      await options.onIdle?.();
    },
  };
  try {
    for await (const commit of readCommits(mirror, { ...options, ...start, signal }, hooks)) {
      batch.push(commit);
      if (await batches.read(commit)) break;
    }
    await batches.drain();
    // At the end of the read, what the reader has not acknowledged yet is waited for (a stop does not wait).
    if (acks !== undefined && !signal.aborted) await acks.settled(signal);
  } finally {
    await batches.close();
    if (lease?.lost.aborted) keeper.drop();
    else await keeper.flush().catch(() => undefined);
  }
  await keeper.settle();
  return {
    cursorBefore,
    cursorAfter: keeper.state?.stored ?? null,
    commits,
    checkpoints: keeper.checkpoints,
    stoppedBy: keeper.lostRace
      ? ConsumeStop.lostRace
      : lease?.lost.aborted
        ? ConsumeStop.lostLease
        : options.signal?.aborted
          ? ConsumeStop.aborted
          : ConsumeStop.caughtUp,
  };
}

/** When the pass hands its batch over: at a fixed size, or, with {@link AdaptiveBatchSize}, whenever the handler is free. */
interface Batches {
  /** After each commit read: hands the batch over if it is time, waits if the next one is full; true to stop reading. */
  read(commit: MirrorCommit): Promise<boolean>;
  /** Hands over what is read and waits until it is handled; throws the handler's failure. */
  drain(): Promise<void>;
  /** Starts no other batch, and waits for the one in flight (the pass is ending). */
  close(): Promise<void>;
}

function batchesOf(
  size: BatchSize,
  runBatch: () => Promise<void>,
  pending: () => number,
  stop: AbortController,
): Batches {
  if (typeof size === 'number')
    return {
      read: async () => {
        if (pending() >= size) await runBatch();
        return false;
      },
      drain: runBatch,
      close: async () => undefined,
    };
  // One batch in flight while the read goes on; when it ends, everything read meanwhile is the next one.
  let inFlight: Promise<void> | undefined;
  let failure: { error: unknown } | undefined;
  let closed = false;
  const handOver = (): void => {
    if (inFlight !== undefined || failure !== undefined || closed || pending() === 0) return;
    inFlight = runBatch().then(
      () => {
        inFlight = undefined;
        handOver();
      },
      (error: unknown) => {
        inFlight = undefined;
        failure = { error };
        // The read stops at once (a follower waiting for the watermark too); the failure is thrown by drain.
        stop.abort();
      },
    );
  };
  const settle = async (): Promise<void> => {
    while (inFlight !== undefined) await inFlight;
  };
  return {
    read: async (commit) => {
      size.onRead?.(commit);
      handOver();
      while (pending() >= size.max && inFlight !== undefined) await inFlight;
      return failure !== undefined;
    },
    drain: async () => {
      handOver();
      await settle();
      if (failure !== undefined) throw failure.error;
    },
    close: async () => {
      closed = true;
      await settle();
    },
  };
}

/** The commit key of the lowest dependency cursor, or null while one of them has none (nothing may be read). */
async function dependencyBound(cursors: CursorStore, mirror: Mirror, names: readonly string[]): Promise<string | null> {
  const states = await Promise.all(names.map((dependency) => readConsumerCursor(cursors, mirror, dependency)));
  let lowest: CursorState | undefined;
  for (const dependency of states) {
    if (dependency === undefined) return null;
    if (lowest === undefined || dependency.value < lowest.value) lowest = dependency;
  }
  return lowest === undefined ? null : (keyOrUndefined(lowest.value) ?? null);
}

/** The commit key of a cursor value; undefined for a cursor before 1970 (no commit can be at or before it). */
export function keyOrUndefined(value: Ticks): string | undefined {
  return value < UNIX_EPOCH_TICKS ? undefined : commitKeyOfTicks(value);
}
