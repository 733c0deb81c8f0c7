/**
 * The latest view as a Lambda function (`import { viewHandler } from 'catalog-sync/view/lambda'`): the named
 * consumer `view-latest` run by {@link batchConsumerHandler}, applying batches as deep as the stream (up to 1,024
 * commits, the next batch's leaf bodies read meanwhile, 256 requests in flight) to `packages/{id}/index.json` with
 * the stale-writer guard (S3 conditional writes, checked once per container: checked-documents.ts). `CatalogSync`'s
 * `view: true` deploys it through `CatalogConsumer`; settings are the consumer's (`CONSUMER_NAME`, `CURSOR_TABLE`,
 * `SNAPSHOT_BUCKET`, `SNAPSHOT_PREFIX`, …). Each invocation also looks at the mirror's id filter history and emits
 * `ViewStale`, the number of widening `--refilter` changes the view lacks leaves for (0: whole), which the
 * `LatestView` construct's alarm watches.
 *
 * While a rebuild of the view holds its live lease (the rebuild state machine, or `view --rebuild` on the mirror),
 * an invocation does nothing and returns `stoppedBy: "rebuild-running"` (neither a failure nor a commit): the rebuild
 * moves the cursor to its bound when it finishes, and the next invocation goes on from there.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { batchConsumerHandler, type ConsumerRun } from '../consumer/lambda.js';
import { consumerLambdaSettings } from '../runtime/lambda-settings.js';
import { awsClients, DynamoStore, S3SnapshotStore } from '../stores/index.js';
import { checkedS3ViewDocuments } from './checked-documents.js';
import { staleLine } from '../contract/view.js';
import { rebuildRunning, type RunningRebuild } from './rebuild/held-off.js';
import { rebuildPlanName } from './rebuild/stores.js';
import { checkStaleness, hasReadOf } from './staleness.js';
import {
  applyBatchToView,
  DEFAULT_VIEW_CONCURRENCY,
  upkeepBatches,
  upkeepRun,
  type ViewTarget,
} from './view-consumer.js';

/** What one invocation did: the consumer's run, or nothing while a rebuild runs. */
export type ViewRun =
  | ConsumerRun
  | {
      readonly consumer: string;
      readonly stoppedBy: 'rebuild-running';
      readonly commits: 0;
      readonly rebuild: RunningRebuild;
    };

/** The view consumer's handler, its S3 client built on the first invocation from `env`. */
export function viewHandler(
  env: NodeJS.ProcessEnv = process.env,
): (event: unknown, context: Pick<Context, 'getRemainingTimeInMillis'>) => Promise<ViewRun> {
  let target: ViewTarget | undefined;
  const targetOf = (): ViewTarget => {
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
    return target;
  };
  // One per warm container: its request budget, and the reads ahead of the batch being formed.
  const run = upkeepRun();
  const consume = batchConsumerHandler(
    (commits) => applyBatchToView(targetOf(), commits, undefined, run).then(() => undefined),
    upkeepBatches(run),
    env,
    {
      builtIn: true,
      beforeRun: async ({ settings, mirror, cursors, metrics, logger }) => {
        const { documents, prefix } = targetOf();
        const { stale } = await checkStaleness({
          documents,
          prefix,
          mirror,
          hasRead: hasReadOf(cursors, mirror, settings.consumerName),
        });
        metrics.addMetric('ViewStale', MetricUnit.Count, stale.length);
        if (stale.length > 0)
          logger.warn('the latest view is stale', {
            stale: stale.map((change) => staleLine(settings.consumerName, change)),
          });
      },
    },
  );
  let heldOff: (() => Promise<RunningRebuild | undefined>) | undefined;
  return async (event, context) => {
    const settings = consumerLambdaSettings(env);
    if (heldOff === undefined) {
      const clients = awsClients(env, 2);
      const plans = new DynamoStore(settings.table, clients.dynamo);
      const mirror = {
        store: new S3SnapshotStore(settings.bucket, clients.s3),
        prefix: settings.prefix,
        where: `s3://${settings.bucket}/${settings.prefix}`,
      };
      const planName = rebuildPlanName(mirror, settings.consumerName);
      heldOff = () => rebuildRunning(plans, planName);
    }
    const rebuild = await heldOff();
    if (rebuild !== undefined)
      return { consumer: settings.consumerName, stoppedBy: 'rebuild-running', commits: 0, rebuild };
    return consume(event, context);
  };
}

/** The deployed handler. */
export const handler = viewHandler();
