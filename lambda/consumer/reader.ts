import { commitKey as commitKeyOfTicks, decodeCommitKey, manifestKey } from '../contract/keys.js';
import { parseTimeInput, ticksFromEpochMs, UNIX_EPOCH_TICKS, type Ticks } from '../contract/time.js';
import { commitKeyOfManifestKey, parseManifest } from './documents.js';
import { ConsumerError, MirrorDocumentError } from './errors.js';
import { MirrorLeaf, type Mirror, type MirrorCommit } from './mirror.js';
import { holdsMirrorKeys, noMirrorError } from './mirror-place.js';
import { bufferAhead, mapInOrder } from './read-ahead.js';
import { readBound, type ReaderHooks } from './read-bound.js';
import { DEFAULT_POLL, nextInterval, WakeUp, type PollOptions } from './wake.js';

/** Manifests fetched ahead of the one being delivered, by default: ≥ 2,000 commits/s at 20 ms a GET (bench/). */
export const DEFAULT_READ_AHEAD = 64;

/** Manifest keys listed ahead of the GETs: two pages of ListObjectsV2. */
const LISTED_AHEAD = 2_000;

/** Where to start, and whether to stop at the watermark or follow it. */
export interface ReadOptions {
  /** Start after this commit key (exclusive): where an earlier read stopped. Not with `since`. */
  readonly after?: string;
  /** Start at this time (inclusive): `Date`, a timestamp with a zone, or a date alone (midnight UTC). Not with `after`. */
  readonly since?: Date | string;
  /** Keep going: wait for the watermark to move, then read on. Ends only when `signal` aborts. */
  readonly follow?: boolean;
  /** Follow mode's poll of `watermark.json` ({@link DEFAULT_POLL}). */
  readonly poll?: PollOptions;
  /** Cuts follow mode's wait short (an event source calls `wake()`). */
  readonly wake?: WakeUp;
  /** Stops the read: no commit is delivered after it aborts, and a waiting follower returns. */
  readonly signal?: AbortSignal;
  /** Manifests fetched concurrently ahead of the one delivered (default {@link DEFAULT_READ_AHEAD}). */
  readonly readAhead?: number;
  /**
   * Take a place that holds no mirror yet as an empty mirror instead of an error: for a reader deployed with its
   * follower, whose place is right by construction but may not have been written to yet (the consumer Lambdas).
   * Default false: a place with no `watermark.json`, no manifest and no leaf throws {@link NoMirrorError}.
   */
  readonly awaitMirror?: boolean;
}

export type { ReaderHooks } from './read-bound.js';

/**
 * The mirror's commits in commit order, after `options.after` (or from `options.since`), up to its
 * `watermark.json` and never past it: the watermark is read first, then `commits/` is listed from the start up
 * to the watermark's `commitKey`, so no commit at or before it can be missing however the manifests were
 * written (out of order, by a backfill's parallel ranges); a bound that proves its manifests stored by itself (a
 * built-in consumer's cursor, {@link ReaderHooks.boundIsStored}) is listed beside the watermark's read instead of
 * after it (read-bound.ts). Manifests are fetched `readAhead` at a time and
 * delivered in key order; leaves' bodies are read only when asked for ({@link MirrorLeaf.body}).
 *
 * Without `follow` it ends at the watermark read when it started; with `follow` it then waits for the watermark
 * to move (polling with backoff, or woken) until `signal` aborts.
 *
 * A place that holds no mirror (no `watermark.json`, no manifest, no leaf: a wrong folder, bucket or prefix) is an
 * error on the first read, unless `awaitMirror`; a mirror with no commit yet reads as empty, and is waited on in
 * follow mode (`checkMirror` tells the two apart beforehand).
 *
 * @throws {@link ConsumerError} for a bad start; {@link NoMirrorError} for a place that holds no mirror;
 * {@link MirrorDocumentError} for a watermark or manifest that breaks the contract; the store's errors as they are.
 */
export async function* readCommits(
  mirror: Mirror,
  options: ReadOptions = {},
  hooks: ReaderHooks = {},
): AsyncGenerator<MirrorCommit> {
  const readAhead = options.readAhead ?? DEFAULT_READ_AHEAD;
  if (!Number.isInteger(readAhead) || readAhead < 1)
    throw new ConsumerError(`readAhead ${readAhead} must be a whole number >= 1`);
  const poll = { minMs: options.poll?.minMs ?? DEFAULT_POLL.minMs, maxMs: options.poll?.maxMs ?? DEFAULT_POLL.maxMs };
  if (!(poll.minMs > 0) || !(poll.maxMs >= poll.minMs))
    throw new ConsumerError(`poll ${JSON.stringify(poll)}: minMs must be > 0 and maxMs >= minMs`);
  const wake = options.wake ?? new WakeUp();
  const { signal } = options;
  let startAfter = startAfterOf(mirror.prefix, options);
  let interval = poll.minMs;
  let lastBound: string | null = null;
  let first = true;
  // Manifests read ahead may still arrive once the read has ended (returned, failed, aborted): none is told of then,
  // since the work it would start outlives the read.
  let reading = true;
  const told = hooks.onFetched;
  const fetched =
    told &&
    ((commit: MirrorCommit) => {
      if (reading && !signal?.aborted) told(commit);
    });
  try {
    for (;;) {
      if (signal?.aborted) return;
      const after = startAfter;
      // Commits of a listing begun beside the watermark's read are told of once its bound is known to be the one.
      let keep: (kept: boolean) => void = () => undefined;
      const kept = new Promise<boolean>((resolve) => (keep = resolve));
      const { bound, watermark, early } = await readBound(
        mirror,
        hooks,
        first ? hooks.watermark : undefined,
        after,
        (to) =>
          commitsUpTo(
            mirror,
            after,
            to,
            readAhead,
            fetched && ((commit) => void kept.then((yes) => yes && fetched(commit))),
          ),
      );
      keep(early !== undefined);
      if (first && !watermark && !options.awaitMirror && !(await holdsMirrorKeys(mirror)))
        throw await noMirrorError(mirror);
      first = false;
      if (bound !== null && (startAfter === undefined || manifestKey(mirror.prefix, bound) > startAfter)) {
        for await (const commit of early?.commits ?? commitsUpTo(mirror, startAfter, bound, readAhead, fetched)) {
          if (signal?.aborted) return;
          yield commit;
        }
        startAfter = manifestKey(mirror.prefix, bound);
      }
      if (!options.follow || signal?.aborted) return;
      await hooks.onIdle?.();
      interval = nextInterval(interval, bound !== lastBound, poll);
      lastBound = bound;
      await wake.wait(interval, signal);
    }
  } finally {
    reading = false;
  }
}

/**
 * The manifests with commit keys in (`afterKey`, `throughKey`], parsed, in key order (`afterKey` null: from the
 * first), `readAhead` fetched at once: a range of the mirror's history as it stands, whatever the watermark (the
 * caller bounds it). A manifest listed but gone, or one that breaks the contract, throws {@link MirrorDocumentError}.
 */
export function readCommitRange(
  mirror: Mirror,
  afterKey: string | null,
  throughKey: string,
  readAhead: number,
): AsyncGenerator<MirrorCommit> {
  return commitsUpTo(
    mirror,
    afterKey === null ? undefined : manifestKey(mirror.prefix, afterKey),
    throughKey,
    readAhead,
  );
}

/**
 * The manifests after `startAfter` up to and including `bound`'s, parsed, in key order; `fetched` told of each as soon
 * as it is read.
 */
function commitsUpTo(
  mirror: Mirror,
  startAfter: string | undefined,
  bound: string,
  readAhead: number,
  fetched?: (commit: MirrorCommit) => void,
): AsyncGenerator<MirrorCommit> {
  // Keys are listed up to two pages ahead, so the GETs never wait on the next page of the listing.
  return mapInOrder(bufferAhead(manifestKeysUpTo(mirror, startAfter, bound), LISTED_AHEAD), readAhead, async (key) => {
    const commit = await readManifest(mirror, key);
    fetched?.(commit);
    return commit;
  });
}

async function* manifestKeysUpTo(
  mirror: Mirror,
  startAfter: string | undefined,
  bound: string,
): AsyncGenerator<{ key: string; commitKey: string }> {
  for await (const key of mirror.store.listKeys(`${mirror.prefix}commits/`, startAfter)) {
    const commitKey = commitKeyOfManifestKey(mirror.prefix, key);
    // Only manifests are read: any other object under commits/ is not catalog-sync's.
    if (commitKey === undefined) continue;
    if (commitKey > bound) return;
    yield { key, commitKey };
  }
}

async function readManifest(
  mirror: Mirror,
  { key, commitKey }: { key: string; commitKey: string },
): Promise<MirrorCommit> {
  const where = `${mirror.where} ${key}`;
  const bytes = await mirror.store.getBytes(key);
  if (bytes === undefined)
    throw new MirrorDocumentError(where, 'listed but gone when read (manifests are never deleted)');
  const manifest = parseManifest(bytes, commitKey, where);
  return {
    commitKey: manifest.commitKey,
    commitId: manifest.commitId,
    commitTimeStamp: manifest.commitTimeStamp,
    ...(manifest.filtered === undefined ? {} : { filtered: manifest.filtered }),
    leaves: manifest.leaves.map((leaf) => new MirrorLeaf(leaf, mirror, manifest.commitKey)),
  };
}

/** The listing's `StartAfter` of a start: after a key (exclusive), at a time (inclusive), or from the beginning. */
export function startAfterOf(
  prefix: string,
  start: { readonly after?: string; readonly since?: Date | string },
): string | undefined {
  if (start.after !== undefined && start.since !== undefined)
    throw new ConsumerError('give "after" (a commit key) or "since" (a time), not both');
  if (start.after !== undefined) {
    try {
      decodeCommitKey(start.after);
    } catch (cause) {
      throw new ConsumerError(`after ${JSON.stringify(start.after)} is not a commit key: ${(cause as Error).message}`, {
        cause,
      });
    }
    return manifestKey(prefix, start.after);
  }
  if (start.since === undefined) return undefined;
  const ticks = ticksOfTime(start.since);
  if (ticks < UNIX_EPOCH_TICKS) return undefined;
  // A proper prefix of the manifest key at `since` sorts before it: the commit at exactly `since` is included.
  return `${prefix}commits/${commitKeyOfTicks(ticks)}`;
}

/** A start time as ticks: a `Date`, a timestamp with a zone, or a date alone (midnight UTC). */
export function ticksOfTime(since: Date | string): Ticks {
  try {
    if (since instanceof Date) {
      if (Number.isNaN(since.getTime())) throw new Error('invalid Date');
      return ticksFromEpochMs(since.getTime());
    }
    return parseTimeInput(since);
  } catch (cause) {
    throw new ConsumerError(
      `since ${JSON.stringify(since)} is not a time: give a timestamp with Z or an offset, or a date: ${(cause as Error).message}`,
      { cause },
    );
  }
}
