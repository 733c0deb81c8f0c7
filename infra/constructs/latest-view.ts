/**
 * The latest view on AWS (`CatalogSync`'s `view: true`): a {@link CatalogConsumer} named `view-latest` running the
 * view's handler (lambda/view/lambda.ts), which may also PUT the view's documents, `{prefix}packages/*`, its state
 * `{prefix}view.json` and the conditional-PUT probe `{prefix}view-conditional-put-check` (conditional writes need
 * nothing more than `s3:PutObject`). It reads each package's index before writing it, missing at first: the
 * consumer's unconditioned `s3:ListBucket` makes that GET answer 404 rather than 403. Its `ViewStale` metric (the id
 * filter changes it lacks leaves for) has an alarm, on the dashboard.
 */
import { Duration, Stack, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as sns from 'aws-cdk-lib/aws-sns';
import {
  consumerCursorKey,
  mirrorKeyOf,
  VIEW_CONSUMER,
  VIEW_KEYS,
  VIEW_PROBE_KEY,
  VIEW_STATE_KEY,
} from '../../lambda/contract/index.js';
import type { ConsumableSync } from './consumable-sync.js';
import { CatalogConsumer } from './catalog-consumer.js';
import { grantBucketKey } from './mirror-grants.js';
import { handlerCode } from './handler-entry.js';
import { nagResource } from './nag.js';
import { atLeastOnceAlarm, syncMetric } from './sync-alarms.js';

/** The view Lambda's memory, MB: one full vCPU (Lambda gives CPU in proportion to memory). */
export const VIEW_MEMORY_MB = 1_769;

/** Adds the view consumer to `sync` (construct id `LatestView`), with its stale alarm (`LatestView/StaleAlarm`). */
export function addLatestView(sync: ConsumableSync, alarmTopic?: sns.ITopic): CatalogConsumer {
  const view = new CatalogConsumer(sync, 'LatestView', {
    sync,
    consumerName: VIEW_CONSUMER,
    entry: handlerCode('view/lambda').entry,
    // One vCPU: upkeep's S3 requests (the SDK's, about 1.4 ms CPU each, 1.4-1.6 a leaf) bind it near 140 leaves/s at
    // 512 MB (0.29 of a vCPU) and near 480 at 1,769 MB, about the follower's (docs/performance.md, "The latest view").
    memorySize: VIEW_MEMORY_MB,
    ...(alarmTopic ? { alarmTopic } : {}),
  });
  const objects = sync.bucket.arnForObjects(`${sync.prefix}${VIEW_KEYS}`);
  view.function.addToRolePolicy(
    new iam.PolicyStatement({
      sid: 'WriteView',
      actions: ['s3:PutObject'],
      resources: [
        objects,
        sync.bucket.arnForObjects(`${sync.prefix}${VIEW_STATE_KEY}`),
        sync.bucket.arnForObjects(`${sync.prefix}${VIEW_PROBE_KEY}`),
      ],
    }),
  );
  Validations.of(view.function.role ?? view.function).acknowledge({
    id: `AwsSolutions-IAM5[Resource::${nagResource(Stack.of(sync).resolve(objects))}]`,
    reason: `The latest view writes one index per package, ids unknown in advance: PutObject (only) under "${sync.prefix}packages/".`,
  });
  // Before each run it looks for a rebuild holding the view (its plan is kept under the view consumer's key: the
  // newest plan is a Query, then a GetItem the consumer may already make).
  view.function.addToRolePolicy(
    new iam.PolicyStatement({
      sid: 'SeeViewRebuild',
      actions: ['dynamodb:Query'],
      resources: [sync.table.tableArn],
      conditions: {
        'ForAllValues:StringEquals': {
          'dynamodb:LeadingKeys': [
            consumerCursorKey(mirrorKeyOf(`s3://${sync.bucket.bucketName}`, sync.prefix), VIEW_CONSUMER),
          ],
        },
      },
    }),
  );
  // It writes through the bucket's customer key too (the consumer's grant is Decrypt only).
  grantBucketKey(view.function, sync.bucket, ['kms:GenerateDataKey']);
  const stale = atLeastOnceAlarm(
    view,
    'StaleAlarm',
    `catalog-sync latest view ${VIEW_CONSUMER}: it lacks the versions, before a widening --refilter, of the packages that change added (ViewStale >= 1; ` +
      'its log names the change: "the latest view is stale"). Run the refill backfill --refilter printed, then `catalog-sync view --rebuild --added` with the stack\'s --cursor-table and --bucket; the alarm clears at the next run.',
    syncMetric(view.serviceName, 'ViewStale', { period: Duration.minutes(5), statistic: cloudwatch.Stats.MAXIMUM }),
    alarmTopic,
  );
  sync.dashboard?.addLatestView(stale);
  return view;
}
