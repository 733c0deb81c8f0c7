/**
 * The consumer face of the package (`import … from 'catalog-sync/consumer'`): read a mirror back in commit order,
 * up to its `watermark.json` and never past it, from S3 or a local folder; follow it as it grows; keep a named
 * consumer's place with a conditional write after each commit is handled. Importing it loads the AWS SDK.
 */
export { readCommits, DEFAULT_READ_AHEAD, type ReadOptions } from './reader.js';
export { consume, consumeBatches, ConsumeStop, type BatchHandler, type CommitHandler, type ConsumeContext, type ConsumeOptions, type ConsumeResult } from './consume.js';
export { MirrorLeaf, readWatermark, type Mirror, type MirrorCommit } from './mirror.js';
export { checkMirror, MirrorState } from './mirror-place.js';
export { WakeUp, DEFAULT_POLL, type PollOptions } from './wake.js';
export { consumerLag, type ConsumerLag } from './lag.js';
export { awsConsumerStores, folderConsumerStores, type AwsConsumerOptions, type ConsumerStores } from './open.js';
export { parseStoredLeaf, type StoredLeafPlace } from './stored-leaf.js';
export { ConsumerError, ConsumerHandlerError, MirrorDocumentError, NoMirrorError, StoredLeafError } from './errors.js';
export type { Manifest, ManifestLeaf, Watermark } from './documents.js';
export type { CursorStore, SnapshotReader } from '../stores/types.js';
