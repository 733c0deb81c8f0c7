/**
 * The private feed (`import … from 'catalog-sync/feed'`): the packages of the mirror's included ids, downloaded from
 * the source's flat container, checked against their leaves' hash and size and stored under `{prefix}feed/`, with the
 * static NuGet V3 documents that make it a feed `dotnet restore` uses (service index, flat container, registration,
 * vulnerability info), kept exact by the built-in consumer `feed` as the mirror and its latest view move. Importing it
 * loads the AWS SDK.
 */
export {
  keepFeed,
  rebuildFeed,
  DEFAULT_FEED_BATCH,
  type FeedRebuildResult,
  type FeedRunResult,
} from './feed-consumer.js';
export {
  Feed,
  DEFAULT_FEED_CONCURRENCY,
  DEFAULT_FEED_DOWNLOADS,
  type FeedTarget,
} from './feed.js';
export { DEFAULT_MAX_PACKAGE_BYTES, zeroCounts, type FeedCounts } from './feed-context.js';
export { FeedKeys, FeedUrls, checkBaseUrl, VULNERABILITY_PAGES } from './feed-keys.js';
export { CONTENT_TYPES, type FeedObjectKind, type FeedStorage, type StoredDocument } from './feed-storage.js';
export {
  S3FeedStorage,
  DEFAULT_PART_BYTES,
  DEFAULT_PARTS_AT_ONCE,
  type S3FeedStorageOptions,
} from './s3-feed-storage.js';
export { LocalFeedStorage, FEED_LOCK_FILE } from './local-feed-storage.js';
export { awsFeedStores } from './open.js';
export { folderFeedStores, type FeedStores } from './open-folder.js';
export { FEED_RESOURCE_TYPES, serviceIndexOf, type FeedSettings } from './feed-setup.js';
export { PackageSource, PACKAGE_BASE_ADDRESS_TYPE } from './package-source.js';
export {
  DEFAULT_DOWNLOAD_MEMORY,
  DEFAULT_WAIT_POLICY,
  HELD_PER_DOWNLOAD,
  MemoryBudget,
  type WaitPolicy,
} from './package-fetch.js';
export {
  parseState,
  type PackageState,
  type HeldVersion,
  type WaitingVersion,
  type QuarantinedVersion,
} from './package-state.js';
export { digestOf, catalogEntryOf } from './leaf-package.js';
export { verifiedBody } from './verified-body.js';
export { MOST_INLINE_VERSIONS, PAGE_VERSIONS } from './registration.js';
export { severityOf, vulnerabilityPageOf, type VulnerabilityEntry } from './vulnerabilities.js';
export { FeedError, PackageMismatchError, type PackageDigest } from './errors.js';
export { FEED_CONSUMER, FEED_KEYS } from '../contract/feed.js';
