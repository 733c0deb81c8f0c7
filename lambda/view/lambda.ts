/**
 * The latest view as a Lambda function (`import { viewHandler } from 'catalog-sync/view/lambda'`): the named
 * consumer `view-latest` run by {@link batchConsumerHandler}, applying batches as deep as the stream (up to 1,024 commits,
 * the next batch's leaf bodies read meanwhile, 256 requests in flight) to `packages/{id}/index.json` with
 * the stale-writer guard (S3 conditional writes). `CatalogSync`'s `view: true` deploys it through `CatalogConsumer`;
 * settings are the consumer's (`CONSUMER_NAME`, `CURSOR_TABLE`, `SNAPSHOT_BUCKET`, `SNAPSHOT_PREFIX`, …).
 */
import type { Context } from 'aws-lambda';
import { batchConsumerHandler, type ConsumerRun } from '../consumer/lambda.js';
import { consumerLambdaSettings } from '../runtime/lambda-settings.js';
import { awsClients } from '../stores/index.js';
import { S3ViewDocuments } from './s3-view-documents.js';
import {
  applyBatchToView,
  DEFAULT_VIEW_CONCURRENCY,
  upkeepBatches,
  upkeepRun,
  type ViewTarget,
} from './view-consumer.js';

/** The view consumer's handler, its S3 client built on the first commit from `env`. */
export function viewHandler(
  env: NodeJS.ProcessEnv = process.env,
): (event: unknown, context: Pick<Context, 'getRemainingTimeInMillis'>) => Promise<ConsumerRun> {
  let target: ViewTarget | undefined;
  // One per warm container: its request budget, and the reads ahead of the batch being formed.
  const run = upkeepRun();
  return batchConsumerHandler(
    async (commits) => {
      if (target === undefined) {
        const settings = consumerLambdaSettings(env);
        target = {
          documents: new S3ViewDocuments(settings.bucket, awsClients(env, DEFAULT_VIEW_CONCURRENCY).s3),
          prefix: settings.prefix,
        };
      }
      await applyBatchToView(target, commits, undefined, run);
    },
    upkeepBatches(run),
    env,
    { builtIn: true },
  );
}

/** The deployed handler. */
export const handler = viewHandler();
