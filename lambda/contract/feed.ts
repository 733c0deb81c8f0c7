/**
 * The private feed's fixed names (contract.md, "Serving the feed"), shared by the feed wing, `serve` and the CDK
 * constructs (what CloudFront exposes, what the feed's function may write).
 */

/** The built-in feed consumer's cursor name: it never passes the latest view's (`view-latest`). */
export const FEED_CONSUMER = 'feed';

/** Everything a NuGet client reads lives under `{prefix}feed/`, and nothing else is served. */
export const FEED_FOLDER = 'feed/';

/** The feed's own bookkeeping (per-package state, quarantine, settings) under `{prefix}feed-state/`: never served. */
export const FEED_STATE_FOLDER = 'feed-state/';

/** The key patterns of the feed under the sync's prefix (for IAM grants): the served documents and the state. */
export const FEED_KEYS = ['feed/*', 'feed-state/*'] as const;

/**
 * The metrics the feed's Lambda emits at each invocation (EMF: namespace `CatalogSync`, dimension `service` =
 * `catalog-sync-consumer-feed`, one datapoint each, 0 included), by the field of the feed's counts they carry; a
 * package is one version's `.nupkg`. The feed writer's `QuarantinedAlarm` (infra/constructs/feed-writer.ts) watches
 * `quarantined`.
 */
export const FEED_METRICS = {
  /** `FeedPackagesStored` (Count): packages downloaded, checked against their leaf and stored. */
  stored: 'FeedPackagesStored',
  /** `FeedBytesStored` (Bytes): their bytes. */
  storedBytes: 'FeedBytesStored',
  /** `FeedPackagesRemoved` (Count): packages deleted from the feed (a delete leaf, an id the filter left out). */
  removed: 'FeedPackagesRemoved',
  /** `FeedPackagesWaiting` (Count): downloads the source did not serve (yet), each version then waits for a retry. */
  waiting: 'FeedPackagesWaiting',
  /** `FeedPackagesQuarantined` (Count): versions newly set aside under `feed-state/quarantine/`, never stored. */
  quarantined: 'FeedPackagesQuarantined',
} as const;
