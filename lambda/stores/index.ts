/**
 * The stores floor: where cursors, the run log and snapshots live. One interface each (`types.ts`), two
 * homes: DynamoDB + S3, and a local folder with the same key layout (cursor store, run log and snapshot store
 * over one {@link LocalFolder}: one lock, one atomic writer).
 *
 * Importing this face loads the AWS SDK. The CLI's local path must not pay that (most of a second), so
 * `lambda/runtime/cli/open-stores.ts` imports `local-store.ts` directly and the AWS stores lazily.
 */
export type { ActivePlanClaim, BackfillStore, RangeProgress, RangeWriteResult } from './types.js';
export type {
  CompareAndSetResult,
  CursorState,
  CursorStore,
  CursorTarget,
  PutRetryEvent,
  RunLogStore,
  RunQuery,
  SnapshotStore,
  WriteOptions,
} from './types.js';
export { awsClients } from './aws-clients.js';
export { DynamoStore } from './dynamo-store.js';
export { S3SnapshotStore } from './s3-store.js';
export { S3PutAbortedError, S3PutError, type S3PutFailure } from './s3-put-error.js';
export { LocalStore, openLocalStores, type LocalStoreOptions, type LocalStores } from './local-store.js';
export { LocalCursorStore } from './local-cursor-store.js';
export { LocalBackfillStore } from './local-backfill-store.js';
export { LocalRunLog } from './local-run-log.js';
export { LocalSnapshotStore } from './local-snapshot-store.js';
export { LocalFolder, STATE_DIR } from './local-folder.js';
export type { LockEvent } from './local-lock.js';
export { LocalStateError } from './local-state-error.js';
