import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import { awsConsumerStores } from '../consumer/open.js';
import { DEFAULT_READ_AHEAD } from '../consumer/reader.js';
import { awsClients } from '../stores/aws-clients.js';
import type { FeedStores } from './open-folder.js';
import { S3FeedStorage, type S3FeedStorageOptions } from './s3-feed-storage.js';

export type { FeedStores } from './open-folder.js';

/** The feed in the mirror's S3 bucket; the feed consumer's cursor in the sync's table. */
export function awsFeedStores(
  options: {
    readonly bucket: string;
    readonly prefix?: string;
    readonly cursorTable?: string;
    readonly clients?: { readonly s3: S3Client; readonly dynamo: DynamoDBClient };
    readonly upload?: S3FeedStorageOptions;
  },
  env?: NodeJS.ProcessEnv,
): FeedStores {
  const owned = options.clients === undefined;
  const clients = options.clients ?? awsClients(env, DEFAULT_READ_AHEAD);
  const stores = awsConsumerStores({ ...options, clients }, env);
  return {
    ...stores,
    storage: new S3FeedStorage(options.bucket, clients.s3, options.upload),
    close: () => {
      if (!owned) return;
      clients.s3.destroy();
      clients.dynamo.destroy();
    },
  };
}
