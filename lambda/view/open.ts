import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import { awsConsumerParts } from '../consumer/open.js';
import { checkedS3ViewDocuments } from './checked-documents.js';
import { DynamoStore } from '../stores/dynamo-store.js';
import { S3SnapshotStore } from '../stores/s3-store.js';
import type { BackfillStore } from '../stores/types.js';
import { ViewError } from './errors.js';
import { FolderRecordStore, SnapshotRecordStore } from './rebuild/record-store.js';
import type { ViewStores } from './open-folder.js';

/**
 * The view in the mirror's S3 bucket; the view consumer's cursor and a rebuild's plans in the sync's table; a
 * rebuild's records in the bucket under `{prefix}view-rebuild/` (or the folder `recordsDir`).
 */
export function awsViewStores(
  options: {
    readonly bucket: string;
    readonly prefix?: string;
    readonly cursorTable?: string;
    readonly clients?: { readonly s3: S3Client; readonly dynamo: DynamoDBClient };
    readonly recordsDir?: string;
  },
  env?: NodeJS.ProcessEnv,
): ViewStores {
  const { stores, clients } = awsConsumerParts(options, env);
  const prefix = options.prefix ?? '';
  return {
    ...stores,
    documents: checkedS3ViewDocuments(options.bucket, clients.s3, prefix),
    prefix,
    plans: options.cursorTable === undefined ? noPlans : new DynamoStore(options.cursorTable, clients.dynamo),
    records:
      options.recordsDir === undefined
        ? new SnapshotRecordStore(
            new S3SnapshotStore(options.bucket, clients.s3),
            prefix,
            `s3://${options.bucket}/${prefix}view-rebuild/`,
          )
        : new FolderRecordStore(options.recordsDir),
  };
}

/** The plan store of stores without a table: a rebuild is told what is missing. */
const noPlans = new Proxy({} as BackfillStore, {
  get: () => () =>
    Promise.reject(
      new ViewError(
        "no cursorTable was given: a view rebuild keeps its plan in the sync's DynamoDB table (awsViewStores({ bucket, cursorTable }))",
      ),
    ),
});
