/**
 * The feed as the built-in named consumer `feed`: in commit order, a batch at a time, never past the latest view's
 * cursor (`view-latest`, which it reads), checkpointed after each batch is in the feed; packages whose retry is due
 * are made again between batches and whenever the read is caught up.
 */
import { consumeAs, type ConsumeOptions, type ConsumeResult } from '../consumer/consume.js';
import type { AdaptiveBatchSize } from '../consumer/consume-types.js';
import { consumerKey, readConsumerCursor } from '../consumer/consumer-cursors.js';
import { FEED_CONSUMER } from '../contract/feed.js';
import { VIEW_CONSUMER } from '../contract/view.js';
import { id as kuuidId } from '../ids/kuuid.js';
import type { CursorStore } from '../stores/types.js';
import type { FeedCounts } from './feed-context.js';
import { Feed, type FeedTarget } from './feed.js';

/** Commits applied together: each package they touch is made once for all of them. */
export const DEFAULT_FEED_BATCH = 64;

/**
 * Batches as deep as the stream (up to `max` commits), each commit's packages started as soon as its manifest is read
 * (in whatever order the reads end), ahead of its batch ({@link Feed.readAhead}): the first batch is the first commit read, and while a batch is made the next
 * one's packages are already under way, so no batch waits for the one before to end before its requests begin.
 */
export function readAheadBatches(feed: () => Promise<Feed>, max = DEFAULT_FEED_BATCH): AdaptiveBatchSize {
  return {
    max,
    onFetched: (commit) => {
      // A feed that failed to open fails the batch, which awaits it too.
      feed().then(
        (opened) => opened.readAhead(commit),
        () => undefined,
      );
    },
  };
}

/** What {@link keepFeed} did. */
export interface FeedRunResult extends ConsumeResult, FeedCounts {}

/**
 * Keeps the feed up to the latest view as the named consumer `name` (default `feed`), `batchSize` commits at a time
 * (default: as deep as the stream, up to 64, each commit's packages started as it is read: {@link readAheadBatches}; a
 * number: batches of that many, started when handed over), with the consumer's guarantees (in order, at least once, one active instance per name by its lease).
 * The latest view's consumer is always among those it never passes.
 */
export async function keepFeed(
  target: FeedTarget,
  options: Omit<ConsumeOptions, 'mirror'> & { readonly name?: string; readonly batchSize?: number },
): Promise<FeedRunResult> {
  // The feed opens (its setup documents, the source's service index) while the consumer finds its place and reads
  // the first batch: neither waits on the other. A failed open is thrown as it is, not as the first batch's failure.
  const opening = Feed.open(target);
  opening.catch(() => undefined);
  const onIdle = options.onIdle;
  let result: ConsumeResult;
  try {
    result = await consumeAs(options.name ?? FEED_CONSUMER, async (commits) => (await opening).applyBatch(commits), {
      ...options,
      mirror: target.mirror,
      batchSize: options.batchSize ?? readAheadBatches(() => opening),
      dependsOn: [...new Set([VIEW_CONSUMER, ...(options.dependsOn ?? [])])],
      onIdle: async () => {
        await (await opening).retryDue();
        await onIdle?.();
      },
    });
  } catch (error) {
    const feed = await opening;
    feed.abandonReadAhead();
    await feed.idle();
    throw error;
  }
  const feed = await opening;
  // A read stopped early (a signal, a limit) leaves commits no batch took: their packages not begun are not made.
  feed.abandonReadAhead();
  await feed.idle();
  if (!options.follow && !options.signal?.aborted) await feed.retryDueUnlessChecked();
  await feed.ready();
  return { ...result, ...feed.counts };
}

/** What {@link rebuildFeed} did. */
export interface FeedRebuildResult extends FeedCounts {
  /** The latest view's cursor the rebuild started from (7 fractional digits), or null when the view has none. */
  readonly viewCursor: string | null;
  /** Whether the feed consumer's cursor was moved up to it. */
  readonly cursorMoved: boolean;
}

/**
 * Makes every package of the feed again from the latest view (for a new base URL or id filter: `target.rebase`),
 * then moves the feed consumer's cursor up to the view's cursor as it was when the rebuild began, if it was behind
 * (what the view held then is in the feed now).
 */
export async function rebuildFeed(
  target: FeedTarget,
  cursors: CursorStore,
  options: { readonly name?: string } = {},
): Promise<FeedRebuildResult> {
  const view = await readConsumerCursor(cursors, target.mirror, VIEW_CONSUMER);
  const feed = await Feed.open(target);
  await feed.rebuild();
  let cursorMoved = false;
  if (view !== undefined && !target.signal?.aborted) {
    const key = consumerKey(target.mirror, options.name ?? FEED_CONSUMER);
    const runId = kuuidId();
    for (let state = await cursors.read(key); state === undefined || state.value < view.value; ) {
      const outcome = await cursors.compareAndSet(key, state, {
        value: view.value,
        commitId: view.commitId ?? '',
        runId,
      });
      if (outcome.outcome === 'written') {
        cursorMoved = true;
        break;
      }
      state = outcome.current;
    }
  }
  return { ...feed.counts, viewCursor: view?.stored ?? null, cursorMoved };
}
