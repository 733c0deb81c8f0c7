import { describe, expect, it } from 'vitest';
import { CatalogSyncError, ErrorCode, hasErrorCode } from '../../lambda/contract/errors.js';
import { TimestampError } from '../../lambda/contract/time.js';
import { Base62Error } from '../../lambda/contract/base62.js';
import { CommitKeyError } from '../../lambda/contract/keys.js';
import { KeySegmentError } from '../../lambda/contract/identity.js';
import { SettingsError } from '../../lambda/contract/settings.js';
import { KuuidError } from '../../lambda/ids/kuuid.js';
import { InvalidDocumentError } from '../../lambda/catalog/errors.js';
import { UnsafeCatalogUrlError } from '../../lambda/catalog/catalog-url-safety.js';
import {
  BodyDeferredError,
  BodyTooLargeError,
  FetchAbortedError,
  FetchError,
  ForbiddenOriginError,
  LeafMemoryError,
} from '../../lambda/catalog/http-errors.js';
import { CursorItemError } from '../../lambda/stores/dynamo-store.js';
import { LocalStateError } from '../../lambda/stores/local-state-error.js';
import { FileNameError } from '../../lambda/stores/local-paths.js';
import { FileNameModeError } from '../../lambda/stores/file-name-mode.js';
import { TimeBudgetReached } from '../../lambda/sync/run-budget.js';
import { SyncError } from '../../lambda/sync/engine.js';
import { BackfillIncompleteError, BackfillPlanError, BackfillRangeError } from '../../lambda/backfill/errors.js';
import { S3PutError } from '../../lambda/stores/s3-put-error.js';
import type { RunSummary } from '../../lambda/contract/run-summary.js';
import {
  AcknowledgementError,
  ConsumerError,
  ConsumerHandlerError,
  MirrorDocumentError,
  NoMirrorError,
  StoredLeafError,
} from '../../lambda/consumer/errors.js';
import { S3ListError } from '../../lambda/stores/s3-list-error.js';
import { ConditionalPutError } from '../../lambda/view/errors.js';
import { ContextError } from '../../infra/config.js';
import { CatalogSyncPropsError } from '../../infra/catalog-sync-props.js';

const cause = new Error('underneath');
const errors: readonly [CatalogSyncError, ErrorCode][] = [
  [new TimestampError('x', 'bad', { cause }), ErrorCode.timestamp],
  [new Base62Error('x', 'bad', { cause }), ErrorCode.base62],
  [new KuuidError('x', 'bad', { cause }), ErrorCode.kuuid],
  [new CommitKeyError('x', 'bad', { cause }), ErrorCode.commitKey],
  [new KeySegmentError('x', 'bad', { cause }), ErrorCode.keySegment],
  [new SettingsError('S', 'bad', { cause }), ErrorCode.settings],
  [new InvalidDocumentError('https://x/', 'bad', { cause }), ErrorCode.invalidDocument],
  [new UnsafeCatalogUrlError('https://x/', 'http://y/', 'bad', { cause }), ErrorCode.unsafeCatalogUrl],
  [new FetchError('https://x/', 'bad', false, { cause }), ErrorCode.fetch],
  [new ForbiddenOriginError('https://x/', []), ErrorCode.forbiddenOrigin],
  [new BodyTooLargeError('https://x/', 1, 'body'), ErrorCode.bodyTooLarge],
  [new LeafMemoryError('https://x/', 2, { bytes: 1, from: 'a test' }), ErrorCode.leafMemory],
  [new BodyDeferredError('https://x/', 1), ErrorCode.bodyDeferred],
  [new FetchAbortedError('https://x/', 'in flight', { cause }), ErrorCode.fetchAborted],
  [new CursorItemError('t', 'c', 'bad', { cause }), ErrorCode.cursorItem],
  [new LocalStateError('bad', { cause }), ErrorCode.localState],
  [new FileNameError('bad', { cause }), ErrorCode.fileName],
  [new FileNameModeError('bad', { cause }), ErrorCode.fileNameMode],
  [new TimeBudgetReached(0, { cause }), ErrorCode.timeBudget],
  [new SyncError({ runId: 'r', cursorAfter: '0001-01-01T00:00:00.0000000Z' } as RunSummary, cause), ErrorCode.sync],
  [new ContextError('bad', { cause }), ErrorCode.context],
  [new CatalogSyncPropsError('bad', { cause }), ErrorCode.props],
  [
    new S3PutError(
      { bucket: 'b', key: 'k', status: 503, s3Code: 'SlowDown', s3Message: 'slow', attempts: 5 },
      { cause },
    ),
    ErrorCode.s3Put,
  ],
  [new BackfillRangeError('id', 1, 'https://x/', cause), ErrorCode.backfillRange],
  [new BackfillIncompleteError('id', [1], 1), ErrorCode.backfillIncomplete],
  [new BackfillPlanError('bad', { cause }), ErrorCode.backfillPlan],
  [new MirrorDocumentError('b watermark.json', 'bad', { cause }), ErrorCode.mirrorDocument],
  [new ConsumerError('bad', { cause }), ErrorCode.consumer],
  [new ConsumerHandlerError('indexer', '001e9fzMHc3F', { cause }), ErrorCode.consumerHandler],
  [
    new StoredLeafError('s3://b/', 'leaves/001e9fzMHc3F/a/1.0.0.json', '001e9fzMHc3F', 'bad', { cause }),
    ErrorCode.storedLeaf,
  ],
  [new NoMirrorError('s3://b/', '', 'the bucket does not exist', { cause }), ErrorCode.noMirror],
  [new AcknowledgementError('bad', { cause }), ErrorCode.consumer],
  [new S3ListError('b', 'p/', undefined, { cause }), ErrorCode.s3List],
  [new ConditionalPutError('s3://b/k', 'If-None-Match: *', 'was stored', { cause }), ErrorCode.conditionalPut],
];

describe('CatalogSyncError', () => {
  it.each(errors.map(([error, code]) => [error.name, error, code] as const))(
    '%s has its stable code, and its cause',
    (_, error, code) => {
      expect(error).toBeInstanceOf(CatalogSyncError);
      expect(error).toBeInstanceOf(Error);
      expect(error.code).toBe(code);
      expect(hasErrorCode(error, code)).toBe(true);
      if (
        !(
          error instanceof ForbiddenOriginError ||
          error instanceof BodyTooLargeError ||
          error instanceof LeafMemoryError ||
          error instanceof BodyDeferredError ||
          error instanceof BackfillIncompleteError
        )
      )
        expect(error.cause).toBe(cause);
      // The code is the class's, on its prototype: an error's own fields stay those of its class.
      expect(Object.keys(error)).not.toContain('code');
    },
  );

  it('gives no two kinds of error one code', () => {
    const codes = Object.values(ErrorCode);
    expect(new Set(codes).size).toBe(codes.length);
    for (const code of codes) expect(code).toMatch(/^CS_ERR_[A-Z0-9_]+$/);
  });
});
