/**
 * The consumer face of the package (`import … from 'catalog-sync/consumer'`): read a mirror back in commit order,
 * up to its `watermark.json` and never past it, from S3 or a local folder; follow it as it grows; keep a named
 * consumer's place with conditional writes as commits are handled, one active instance per name; list a mirror's
 * consumers and their lag. Importing it loads the AWS SDK.
 */
export { readCommits, DEFAULT_READ_AHEAD, type ReadOptions } from './reader.js';
export {
  consume,
  consumeBatches,
  ConsumeStop,
  type AdaptiveBatchSize,
  type BatchHandler,
  type BatchSize,
  type CommitHandler,
  type ConsumeContext,
  type ConsumeOptions,
  type ConsumeResult,
} from './consume.js';
export { DEFAULT_CHECKPOINT_EVERY, DEFAULT_CHECKPOINT_INTERVAL_MS } from './cursor-keeper.js';
export { DEFAULT_LEASE_MS, DEFAULT_STANDBY_POLL_MS, type LeaseOptions } from './lease.js';
export { Acknowledgements, DEFAULT_ACK_WINDOW } from './acknowledgements.js';
export type { SeekTo } from './seek.js';
export { consumerKey, mirrorKey } from './consumer-cursors.js';
export { describeConsumers, LAG_COUNT_LIMIT, type ConsumersView, type ConsumerStatus } from './consumers.js';
export { MirrorLeaf, readWatermark, type Mirror, type MirrorCommit } from './mirror.js';
export { checkMirror, MirrorState } from './mirror-place.js';
export { WakeUp, DEFAULT_POLL, type PollOptions } from './wake.js';
export { consumerLag, type ConsumerLag } from './lag.js';
export { awsConsumerStores, folderConsumerStores, type AwsConsumerOptions, type ConsumerStores } from './open.js';
export { parseStoredLeaf, type StoredLeafPlace } from './stored-leaf.js';
export {
  AcknowledgementError,
  ConsumerError,
  ConsumerHandlerError,
  MirrorDocumentError,
  NoMirrorError,
  StoredLeafError,
} from './errors.js';
export type { Manifest, ManifestLeaf, Watermark } from './documents.js';
export type { CursorStore, LeaseRecord, SnapshotReader } from '../stores/types.js';
