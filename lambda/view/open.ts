import { resolve } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import { DEFAULT_READ_AHEAD } from '../consumer/reader.js';
import { awsConsumerStores, type ConsumerStores } from '../consumer/open.js';
import { awsClients } from '../stores/aws-clients.js';
import { openLocalStores } from '../stores/local-store.js';
import { LocalViewDocuments } from './local-view-documents.js';
import { S3ViewDocuments } from './s3-view-documents.js';
import type { ViewDocuments } from './view-documents.js';

/** The mirror, the consumer cursors and the view's documents of one store. */
export interface ViewStores extends ConsumerStores {
  readonly documents: ViewDocuments;
  readonly prefix: string;
}

/** The view in a local folder (the CLI's `--data-dir`), beside the mirror and its cursors. */
export function folderViewStores(dataDir: string, options: { readonly prefix?: string } = {}): ViewStores {
  const root = resolve(dataDir);
  const { cursors, snapshots } = openLocalStores(root);
  const prefix = options.prefix ?? '';
  return { mirror: { store: snapshots, prefix, where: root }, cursors, documents: new LocalViewDocuments(root, snapshots), prefix, close: () => undefined };
}

/** The view in the mirror's S3 bucket; the view consumer's cursor in the sync's table. */
export function awsViewStores(
  options: { readonly bucket: string; readonly prefix?: string; readonly cursorTable?: string; readonly clients?: { readonly s3: S3Client; readonly dynamo: DynamoDBClient } },
  env: NodeJS.ProcessEnv = process.env,
): ViewStores {
  const owned = options.clients === undefined;
  const clients = options.clients ?? awsClients(env, DEFAULT_READ_AHEAD);
  const stores = awsConsumerStores({ ...options, clients }, env);
  return {
    ...stores,
    documents: new S3ViewDocuments(options.bucket, clients.s3),
    prefix: options.prefix ?? '',
    close: () => {
      if (!owned) return;
      clients.s3.destroy();
      clients.dynamo.destroy();
    },
  };
}
