/**
 * `verify --feed --repair`: the drifted packages made again by the feed engine itself (`Feed.repair`): the versions
 * whose bytes were missing or not the leaf's downloaded again and checked against the leaf, every document of the
 * package written anew from the view and the leaves, through the engine's writers and its per-package
 * compare-and-swap (a feed consumer running meanwhile is never overwritten with an older state). Opening the feed
 * writes the service index again where it differs.
 */
import { Feed, type FeedTarget } from '../feed/feed.js';
import type { FeedCounts } from '../feed/feed-context.js';

/** Repairs `drift` (lowercased id to the versions to download again); returns what the feed engine did. */
export async function repairFeed(
  target: FeedTarget,
  drift: ReadonlyMap<string, ReadonlySet<string>>,
): Promise<FeedCounts> {
  const feed = await Feed.open(target);
  await feed.repair(drift);
  return feed.takeCounts();
}
