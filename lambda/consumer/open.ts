import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import { awsClients } from '../stores/aws-clients.js';
import { DynamoStore } from '../stores/dynamo-store.js';
import { S3SnapshotStore } from '../stores/s3-store.js';
import type { CursorStore } from '../stores/types.js';
import { ConsumerError } from './errors.js';
import { DEFAULT_READ_AHEAD } from './reader.js';
import type { ConsumerStores } from './open-folder.js';

export { folderConsumerStores, type ConsumerStores } from './open-folder.js';

/** Where a mirror in S3 is, and the sync's DynamoDB table for named consumers' cursors. */
export interface AwsConsumerOptions {
  readonly bucket: string;
  readonly prefix?: string;
  /** The sync's cursor table (`CURSOR_TABLE`): needed for {@link consume}, not for reading. */
  readonly cursorTable?: string;
  /**
   * Clients to use; by default clients from the environment as the sync builds them (`AWS_ENDPOINT_URL_S3`,
   * `S3_FORCE_PATH_STYLE`), with a socket pool sized for the read-ahead.
   */
  readonly clients?: { readonly s3: S3Client; readonly dynamo: DynamoDBClient };
}

/**
 * The mirror in an S3 bucket, and (with `cursorTable`) the DynamoDB cursor store of named consumers. `env` (default:
 * the process's, read by the stores) configures the clients it makes.
 */
export function awsConsumerStores(options: AwsConsumerOptions, env?: NodeJS.ProcessEnv): ConsumerStores {
  return awsConsumerParts(options, env).stores;
}

/**
 * {@link awsConsumerStores} and the clients they use, for a wing that opens more stores on the same clients (the
 * view's documents, the feed's storage): `stores.close` destroys the clients when it made them, and only then.
 */
export function awsConsumerParts(
  options: AwsConsumerOptions,
  env?: NodeJS.ProcessEnv,
): { readonly stores: ConsumerStores; readonly clients: { readonly s3: S3Client; readonly dynamo: DynamoDBClient } } {
  const owned = options.clients === undefined;
  const clients = options.clients ?? awsClients(env, DEFAULT_READ_AHEAD);
  const prefix = options.prefix ?? '';
  const mirror = {
    store: new S3SnapshotStore(options.bucket, clients.s3),
    prefix,
    where: `s3://${options.bucket}/${prefix}`,
  };
  const cursors: CursorStore =
    options.cursorTable === undefined ? noCursorTable : new DynamoStore(options.cursorTable, clients.dynamo);
  const stores: ConsumerStores = {
    mirror,
    cursors,
    close: () => {
      if (!owned) return;
      clients.s3.destroy();
      clients.dynamo.destroy();
    },
  };
  return { stores, clients };
}

/** The cursor store of mirror-only stores: reading needs none, a named consumer is told what is missing. */
const noCursorTable: CursorStore = {
  read: () => Promise.reject(missingTable()),
  compareAndSet: () => Promise.reject(missingTable()),
};

function missingTable(): ConsumerError {
  return new ConsumerError(
    "no cursorTable was given: a named consumer keeps its cursor in the sync's DynamoDB table (awsConsumerStores({ bucket, cursorTable }))",
  );
}
