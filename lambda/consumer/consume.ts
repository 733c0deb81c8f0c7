import { commitKey as commitKeyOfTicks } from '../contract/keys.js';
import { CURSOR_NAME_PATTERN, DEFAULT_CURSOR_NAME } from '../contract/settings.js';
import { parseTimestamp, UNIX_EPOCH_TICKS, type Ticks } from '../contract/time.js';
import { id as kuuidId } from '../ids/kuuid.js';
import type { CursorState, CursorStore } from '../stores/types.js';
import { checkpoint } from './checkpoint.js';
import { ConsumerError, ConsumerHandlerError } from './errors.js';
import type { Mirror, MirrorCommit } from './mirror.js';
import { readCommits, type ReadOptions } from './reader.js';

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
  /** The cursor table (the sync's own: `pk` = consumer name, `sk` = `cursor`) or the local folder's cursors. */
  readonly cursors: CursorStore;
  /** Cursors this consumer never passes (other consumers, by name), besides the watermark. */
  readonly dependsOn?: readonly string[];
  /** Where a consumer with no stored cursor begins: after a commit key, or at a time. Default: the first commit. */
  readonly start?: Pick<ReadOptions, 'after' | 'since'>;
  /** Commits handled between two checkpoints (default 1); a checkpoint is also written whenever the read is caught up. */
  readonly checkpointEvery?: number;
  /** The follower's cursor name, which a consumer must not take (default `catalog-to-s3`). */
  readonly followerCursor?: string;
  /** Id of this call, stored as the cursor's `runId`; a new kuuid id by default. */
  readonly runId?: string;
}

/** Why a {@link consume} call returned. */
export const ConsumeStop = {
  /** Every commit up to the bound was handled and checkpointed (not in follow mode). */
  caughtUp: 'caught-up',
  /** The signal aborted; everything handled was checkpointed. */
  aborted: 'aborted',
  /** Another instance of the same consumer moved the cursor at or past this one's: this one stopped. */
  lostRace: 'lost-race',
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
}

/**
 * Runs `handler` on every commit of the mirror after the consumer `name`'s stored cursor, in commit order, and
 * moves that cursor with a conditional write after the handler succeeds (every `checkpointEvery` commits, and
 * whenever caught up).
 *
 * The guarantee: every commit up to the watermark (and never past it, nor past a cursor in `dependsOn`) is
 * delivered in order, at least once, with the commit key as its idempotency key. Two instances of one name at
 * once never both move the cursor past the same commit (each write is conditional on the value it replaces; an
 * instance that finds the cursor at or past its own target stops with `lost-race`). A crash redelivers at most the
 * commits after the last checkpoint.
 *
 * @throws {@link ConsumerHandlerError} when the handler throws (after checkpointing every commit it finished
 * before); {@link ConsumerError} for a bad name or start; the reader's and the store's errors as they are.
 */
export function consume(name: string, handler: CommitHandler, options: ConsumeOptions): Promise<ConsumeResult> {
  return consumeBatches(name, (commits, context) => handler(commits[0]!, context), { ...options, batchSize: 1 });
}

/** Handles a run of consecutive commits; the cursor moves past the last of them only after this resolves. */
export type BatchHandler = (commits: readonly MirrorCommit[], context: ConsumeContext) => unknown;

/**
 * {@link consume} a batch at a time: `handler` gets up to `batchSize` consecutive commits at once (fewer when the
 * read reaches its bound), with the last one's key as the idempotency key, and the cursor moves past a batch only
 * after it resolves. The guarantee is {@link consume}'s, with a batch in place of a commit: a failing batch is
 * delivered again whole (`ConsumerHandlerError` names its first commit). For handlers whose cost is per round trip,
 * not per commit (the latest view writes each package once per batch).
 */
export async function consumeBatches(name: string, handler: BatchHandler, options: ConsumeOptions & { readonly batchSize: number }): Promise<ConsumeResult> {
  const dependsOn = checkNames(name, options);
  const every = options.checkpointEvery ?? 1;
  if (!Number.isInteger(every) || every < 1) throw new ConsumerError(`checkpointEvery ${every} must be a whole number >= 1`);
  const { batchSize } = options;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new ConsumerError(`batchSize ${batchSize} must be a whole number >= 1`);
  const { cursors } = options;
  const runId = options.runId ?? kuuidId();
  let state = await cursors.read(name);
  const cursorBefore = state?.stored ?? null;
  const start = state === undefined ? (options.start ?? {}) : { after: keyOrUndefined(state.value) };
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
  let pending: MirrorCommit | undefined;
  let handled = 0;
  let commits = 0;
  let checkpoints = 0;
  let lost = false;

  const flush = async (): Promise<void> => {
    const commit = pending;
    if (commit === undefined || lost) return;
    const outcome = await checkpoint(cursors, name, state, { value: parseTimestamp(commit.commitTimeStamp), commitId: commit.commitId, runId });
    pending = undefined;
    handled = 0;
    state = outcome.state;
    if (outcome.outcome === 'written') checkpoints++;
    else {
      lost = true;
      stop.abort();
    }
  };
  let batch: MirrorCommit[] = [];
  const runBatch = async (): Promise<void> => {
    if (batch.length === 0) return;
    const batchCommits = batch;
    batch = [];
    const last = batchCommits[batchCommits.length - 1]!;
    try {
      await handler(batchCommits, { ...context, idempotencyKey: last.commitKey });
    } catch (cause) {
      await flush();
      throw new ConsumerHandlerError(name, batchCommits[0]!.commitKey, { cause });
    }
    commits += batchCommits.length;
    pending = last;
    handled += batchCommits.length;
    if (handled >= every) await flush();
  };
  const idle = async (): Promise<void> => {
    await runBatch();
    await flush();
  };
  const hooks = { ...(dependsOn.length > 0 ? { bound: () => dependencyBound(cursors, dependsOn) } : {}), onIdle: idle };
  const context = { consumer: name, runId };
  const read = readCommits(options.mirror, { ...options, ...start, signal }, hooks);
  for await (const commit of read) {
    batch.push(commit);
    if (batch.length >= batchSize) await runBatch();
  }
  await runBatch();
  await flush();
  return {
    consumer: name,
    runId,
    cursorBefore,
    cursorAfter: state?.stored ?? null,
    commits,
    checkpoints,
    stoppedBy: lost ? ConsumeStop.lostRace : options.signal?.aborted ? ConsumeStop.aborted : ConsumeStop.caughtUp,
  };
}

/** The commit key of the lowest dependency cursor, or null while one of them has none (nothing may be read). */
async function dependencyBound(cursors: CursorStore, names: readonly string[]): Promise<string | null> {
  const states = await Promise.all(names.map((dependency) => cursors.read(dependency)));
  let lowest: CursorState | undefined;
  for (const dependency of states) {
    if (dependency === undefined) return null;
    if (lowest === undefined || dependency.value < lowest.value) lowest = dependency;
  }
  return lowest === undefined ? null : (keyOrUndefined(lowest.value) ?? null);
}

/** The commit key of a cursor value; undefined for a cursor before 1970 (no commit can be at or before it). */
function keyOrUndefined(value: Ticks): string | undefined {
  return value < UNIX_EPOCH_TICKS ? undefined : commitKeyOfTicks(value);
}

function checkNames(name: string, options: ConsumeOptions): readonly string[] {
  const follower = options.followerCursor ?? DEFAULT_CURSOR_NAME;
  if (typeof name !== 'string' || !CURSOR_NAME_PATTERN.test(name)) {
    throw new ConsumerError(`consumer name ${JSON.stringify(name)} must be 1 to 128 characters of A-Z a-z 0-9 . _ - and start with a letter or digit`);
  }
  if (name === follower) throw new ConsumerError(`consumer name ${JSON.stringify(name)} is the follower's cursor: a consumer needs a cursor of its own`);
  const dependsOn = [...new Set(options.dependsOn ?? [])];
  for (const dependency of dependsOn) {
    if (!CURSOR_NAME_PATTERN.test(dependency)) throw new ConsumerError(`dependency ${JSON.stringify(dependency)} is not a cursor name`);
    if (dependency === name) throw new ConsumerError(`consumer ${JSON.stringify(name)} cannot depend on itself`);
  }
  return dependsOn;
}
