/**
 * The latest view as a Lambda function (`import { viewHandler } from 'catalog-sync/view/lambda'`): the named
 * consumer `view-latest` run by {@link consumerHandler}, applying each commit to `packages/{id}/index.json` with
 * the stale-writer guard (S3 conditional writes). `CatalogSync`'s `view: true` deploys it through `CatalogConsumer`;
 * settings are the consumer's (`CONSUMER_NAME`, `CURSOR_TABLE`, `SNAPSHOT_BUCKET`, `SNAPSHOT_PREFIX`, …).
 */
import type { Context } from 'aws-lambda';
import { consumerHandler, consumerLambdaSettings, type ConsumerRun } from './consumer-lambda.js';
import { awsClients } from './stores/index.js';
import { S3ViewDocuments } from './view/s3-view-documents.js';
import { applyToView, DEFAULT_VIEW_CONCURRENCY, type ViewTarget } from './view/view-consumer.js';

/** The view consumer's handler, its S3 client built on the first commit from `env`. */
export function viewHandler(env: NodeJS.ProcessEnv = process.env): (event: unknown, context: Pick<Context, 'getRemainingTimeInMillis'>) => Promise<ConsumerRun> {
  let target: ViewTarget | undefined;
  return consumerHandler(async (commit) => {
    if (target === undefined) {
      const settings = consumerLambdaSettings(env);
      target = { documents: new S3ViewDocuments(settings.bucket, awsClients(env, DEFAULT_VIEW_CONCURRENCY).s3), prefix: settings.prefix };
    }
    await applyToView(target, commit);
  }, env);
}

/** The deployed handler. */
export const handler = viewHandler();
