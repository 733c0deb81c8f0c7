import { BUILT_IN_CONSUMERS } from '../contract/consumer-keys.js';
import { CURSOR_NAME_PATTERN, DEFAULT_CURSOR_NAME } from '../contract/settings.js';
import { id as kuuidId } from '../ids/kuuid.js';
import type { LeaseRecord } from '../stores/types.js';
import { consumerKey, consumerStateOf } from './consumer-cursors.js';
import { runPass } from './consume-pass.js';
import {
  ConsumeStop,
  type BatchHandler,
  type BatchSize,
  type CommitHandler,
  type ConsumeOptions,
  type ConsumeResult,
} from './consume-types.js';
import { ConsumerError } from './errors.js';
import { ConsumerLease } from './lease.js';
import { readMirrorPlace } from './mirror-place.js';

export {
  ConsumeStop,
  type AdaptiveBatchSize,
  type BatchHandler,
  type BatchSize,
  type CommitHandler,
  type ConsumeContext,
  type ConsumeOptions,
  type ConsumeResult,
} from './consume-types.js';

/**
 * Runs `handler` on every commit of the mirror after the consumer `name`'s stored cursor, in commit order, and
 * moves that cursor with a conditional write after the handler succeeds (every `checkpointEvery` commits or
 * `checkpointIntervalMs` after the first one not checkpointed, whichever comes first, whenever caught up, and when
 * it stops).
 *
 * The guarantee: every commit up to the watermark (and never past it, nor past a consumer in `dependsOn`) is
 * delivered in order, at least once, with the commit key as its idempotency key. One instance of a name is active at
 * a time (its lease); others stand by with `follow` and take over when it stops or dies. A crash redelivers at most
 * the commits after the last checkpoint.
 *
 * @throws {@link ConsumerHandlerError} when the handler throws (after checkpointing every commit it finished
 * before); {@link ConsumerError} for a bad name, start or option; the reader's and the store's errors as they are.
 */
export function consume(name: string, handler: CommitHandler, options: ConsumeOptions): Promise<ConsumeResult> {
  return consumeBatches(name, (commits, context) => handler(commits[0]!, context), { ...options, batchSize: 1 });
}

/**
 * {@link consume} a batch at a time: `handler` gets up to `batchSize` consecutive commits at once (fewer when the
 * read reaches its bound), with the last one's key as the idempotency key, and the cursor moves past a batch only
 * after it resolves. The guarantee is {@link consume}'s, with a batch in place of a commit: a failing batch is
 * delivered again whole (`ConsumerHandlerError` names its first commit). For handlers whose cost is per round trip,
 * not per commit (the latest view writes each package once per batch). With `batchSize: { max }` the batches follow
 * the stream's depth ({@link AdaptiveBatchSize}).
 */
export async function consumeBatches(
  name: string,
  handler: BatchHandler,
  options: ConsumeOptions & { readonly batchSize: BatchSize },
): Promise<ConsumeResult> {
  checkName(name, options);
  return consumeAs(name, handler, options);
}

/**
 * {@link consumeBatches} under any name, a built-in one included: for catalog-sync's own consumers (the latest
 * view). Not part of the package's face.
 * @internal
 */
export async function consumeAs(
  name: string,
  handler: BatchHandler,
  options: ConsumeOptions & { readonly batchSize: BatchSize },
): Promise<ConsumeResult> {
  const dependsOn = checkOptions(name, options);
  const runId = options.runId ?? kuuidId();
  const key = consumerKey(options.mirror, name);
  const state = consumerStateOf(options.cursors);
  if (options.lease !== undefined && options.lease !== false && state === undefined) {
    throw new ConsumerError(
      "this cursor store keeps no leases (DynamoStore and the local folder's stores do): give lease: false to run without one",
    );
  }
  const placeRead = options.awaitMirror === true ? undefined : readMirrorPlace(options.mirror);
  placeRead?.catch(() => undefined);
  const lease =
    options.lease === false || state === undefined
      ? undefined
      : new ConsumerLease(state, key, runId, options.lease ?? {});
  // The place first: a wrong folder, bucket or prefix is an error before the lease or a seek writes anything there.
  // With neither, nothing is written before a batch: the check goes on beside the first reads, and the read throws
  // its error.
  if (placeRead !== undefined && (lease !== undefined || options.seek !== undefined)) await placeRead;
  const standby = (options.lease === false ? undefined : options.lease?.standby) ?? options.follow === true;
  let seek = options.seek;
  // The first pass is bounded by the watermark the place's check just read, unless it may stand by first (then it
  // reads it again when it begins).
  let watermark = standby ? undefined : placeRead?.then((place) => place.watermark);
  watermark?.catch(() => undefined);
  const totals = { commits: 0, checkpoints: 0 };
  let cursorBefore: string | null | undefined;
  let cursorAfter: string | null = null;
  const done = (stoppedBy: ConsumeStop, heldBy?: LeaseRecord): ConsumeResult => ({
    consumer: name,
    runId,
    cursorBefore: cursorBefore ?? null,
    cursorAfter,
    ...totals,
    stoppedBy,
    ...(heldBy === undefined ? {} : { heldBy }),
  });
  for (;;) {
    if (lease !== undefined) {
      // A seek never waits: it moves the cursor of a consumer nobody runs.
      const took = await lease.take(standby && seek === undefined, options.signal);
      if (!took.taken) return done(took.held === undefined ? ConsumeStop.aborted : ConsumeStop.held, took.held);
    }
    let pass;
    try {
      pass = await runPass(name, key, handler, options, {
        runId,
        dependsOn,
        ...(lease === undefined ? {} : { lease }),
        ...(seek === undefined ? {} : { seek }),
        ...(watermark === undefined ? {} : { watermark }),
      });
    } finally {
      await lease?.release();
    }
    seek = undefined;
    watermark = undefined;
    cursorBefore ??= pass.cursorBefore;
    cursorAfter = pass.cursorAfter;
    totals.commits += pass.commits;
    totals.checkpoints += pass.checkpoints;
    // Standing by again after a lost lease: not with acknowledgements, whose reader has seen this pass's commits.
    if (
      pass.stoppedBy === ConsumeStop.lostLease &&
      standby &&
      options.acknowledgements === undefined &&
      !options.signal?.aborted
    )
      continue;
    return done(pass.stoppedBy);
  }
}

/**
 * Refuses a name a user's consumer may not have: not a cursor name, a built-in consumer's (`view-latest`), or the
 * follower's cursor.
 * @throws {@link ConsumerError} naming the rule.
 */
export function checkConsumerName(name: string, followerCursor?: string): void {
  checkPattern(name);
  checkName(name, followerCursor === undefined ? {} : { followerCursor });
}

function checkName(name: string, options: Pick<ConsumeOptions, 'followerCursor'>): void {
  if (typeof name === 'string' && BUILT_IN_CONSUMERS.includes(name)) {
    throw new ConsumerError(
      `consumer name ${JSON.stringify(name)} is a built-in consumer's (${BUILT_IN_CONSUMERS.join(', ')}): a consumer of your own needs a name of its own (it may depend on ${JSON.stringify(name)})`,
    );
  }
  if (name === (options.followerCursor ?? DEFAULT_CURSOR_NAME)) {
    throw new ConsumerError(
      `consumer name ${JSON.stringify(name)} is the follower's cursor: a consumer needs a cursor of its own`,
    );
  }
}

function checkPattern(name: string): void {
  if (typeof name !== 'string' || !CURSOR_NAME_PATTERN.test(name)) {
    throw new ConsumerError(
      `consumer name ${JSON.stringify(name)} must be 1 to 128 characters of A-Z a-z 0-9 . _ - and start with a letter or digit`,
    );
  }
}

function checkOptions(name: string, options: ConsumeOptions & { readonly batchSize: BatchSize }): readonly string[] {
  checkPattern(name);
  const wholeAtLeastOne = (what: string, value: number | undefined): void => {
    if (value !== undefined && (!Number.isInteger(value) || value < 1))
      throw new ConsumerError(`${what} ${value} must be a whole number >= 1`);
  };
  wholeAtLeastOne('checkpointEvery', options.checkpointEvery);
  if (typeof options.batchSize === 'number') wholeAtLeastOne('batchSize', options.batchSize);
  else wholeAtLeastOne('batchSize.max', options.batchSize?.max ?? Number.NaN);
  const interval = options.checkpointIntervalMs;
  if (interval !== undefined && !(Number.isFinite(interval) && interval > 0))
    throw new ConsumerError(`checkpointIntervalMs ${interval} must be a number of ms > 0`);
  const dependsOn = [...new Set(options.dependsOn ?? [])];
  for (const dependency of dependsOn) {
    if (!CURSOR_NAME_PATTERN.test(dependency))
      throw new ConsumerError(`dependency ${JSON.stringify(dependency)} is not a cursor name`);
    if (dependency === name) throw new ConsumerError(`consumer ${JSON.stringify(name)} cannot depend on itself`);
  }
  return dependsOn;
}
