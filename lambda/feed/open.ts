import { resolve } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import { awsConsumerStores, type ConsumerStores } from '../consumer/open.js';
import { DEFAULT_READ_AHEAD } from '../consumer/reader.js';
import { awsClients } from '../stores/aws-clients.js';
import { openLocalStores } from '../stores/local-store.js';
import type { FeedStorage } from './feed-storage.js';
import { LocalFeedStorage } from './local-feed-storage.js';
import { S3FeedStorage, type S3FeedStorageOptions } from './s3-feed-storage.js';

/** The mirror, the consumer cursors and the feed's storage of one store. */
export interface FeedStores extends ConsumerStores {
  readonly storage: FeedStorage;
}

/** The feed in a local folder (the CLI's `--data-dir`), beside the mirror, its view and its cursors. */
export function folderFeedStores(dataDir: string, options: { readonly prefix?: string } = {}): FeedStores {
  const root = resolve(dataDir);
  const { cursors, snapshots } = openLocalStores(root);
  return {
    mirror: { store: snapshots, prefix: options.prefix ?? '', where: root, folder: root },
    cursors,
    storage: new LocalFeedStorage(root, snapshots),
    close: () => undefined,
  };
}

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
