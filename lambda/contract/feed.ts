/**
 * The private feed's fixed names (contract.md, "The private feed"), shared by the feed wing, `serve` and the CDK
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
