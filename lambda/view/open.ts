import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import { DEFAULT_READ_AHEAD } from '../consumer/reader.js';
import { awsConsumerStores } from '../consumer/open.js';
import { awsClients } from '../stores/aws-clients.js';
import { checkedS3ViewDocuments } from './checked-documents.js';
import type { ViewStores } from './open-folder.js';

/** The view in the mirror's S3 bucket; the view consumer's cursor in the sync's table. */
export function awsViewStores(
  options: {
    readonly bucket: string;
    readonly prefix?: string;
    readonly cursorTable?: string;
    readonly clients?: { readonly s3: S3Client; readonly dynamo: DynamoDBClient };
  },
  env?: NodeJS.ProcessEnv,
): ViewStores {
  const owned = options.clients === undefined;
  const clients = options.clients ?? awsClients(env, DEFAULT_READ_AHEAD);
  const stores = awsConsumerStores({ ...options, clients }, env);
  return {
    ...stores,
    documents: checkedS3ViewDocuments(options.bucket, clients.s3, options.prefix ?? ''),
    prefix: options.prefix ?? '',
    close: () => {
      if (!owned) return;
      clients.s3.destroy();
      clients.dynamo.destroy();
    },
  };
}
