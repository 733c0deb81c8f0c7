import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import { awsConsumerParts } from '../consumer/open.js';
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
  const { stores, clients } = awsConsumerParts(options, env);
  return { ...stores, storage: new S3FeedStorage(options.bucket, clients.s3, options.upload) };
}
