/**
 * The latest view as a Lambda function (`import { viewHandler } from 'catalog-sync/view/lambda'`): the named
 * consumer `view-latest` run by {@link batchConsumerHandler}, applying 64 commits at a time to `packages/{id}/index.json` with
 * the stale-writer guard (S3 conditional writes). `CatalogSync`'s `view: true` deploys it through `CatalogConsumer`;
 * settings are the consumer's (`CONSUMER_NAME`, `CURSOR_TABLE`, `SNAPSHOT_BUCKET`, `SNAPSHOT_PREFIX`, …).
 */
import type { Context } from 'aws-lambda';
import { batchConsumerHandler, type ConsumerRun } from '../consumer/lambda.js';
import { consumerLambdaSettings } from '../runtime/lambda-settings.js';
import { awsClients } from '../stores/index.js';
import { checkedS3ViewDocuments } from './checked-documents.js';
import { applyBatchToView, DEFAULT_VIEW_BATCH, DEFAULT_VIEW_CONCURRENCY, type ViewTarget } from './view-consumer.js';

/** The view consumer's handler, its S3 client built on the first commit from `env`. */
export function viewHandler(
  env: NodeJS.ProcessEnv = process.env,
): (event: unknown, context: Pick<Context, 'getRemainingTimeInMillis'>) => Promise<ConsumerRun> {
  let target: ViewTarget | undefined;
  return batchConsumerHandler(
    async (commits) => {
      if (target === undefined) {
        const settings = consumerLambdaSettings(env);
        target = {
          documents: checkedS3ViewDocuments(
            settings.bucket,
            awsClients(env, DEFAULT_VIEW_CONCURRENCY).s3,
            settings.prefix,
          ),
          prefix: settings.prefix,
        };
      }
      await applyBatchToView(target, commits);
    },
    DEFAULT_VIEW_BATCH,
    env,
    { builtIn: true },
  );
}

/** The deployed handler. */
export const handler = viewHandler();
