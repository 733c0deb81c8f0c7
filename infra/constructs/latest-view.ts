/**
 * The latest view on AWS (`CatalogSync`'s `view: true`): a {@link CatalogConsumer} named `view-latest` running the
 * view's handler (lambda/view/lambda.ts), which may also PUT the view's documents, `{prefix}packages/*` (conditional
 * writes need nothing more than `s3:PutObject`). It reads each package's index before writing it, missing at first:
 * the consumer's unconditioned `s3:ListBucket` makes that GET answer 404 rather than 403.
 */
import { Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { consumerCursorKey, mirrorKeyOf, VIEW_CONSUMER, VIEW_KEYS } from '../../lambda/contract/index.js';
import type { ConsumableSync } from './consumable-sync.js';
import { CatalogConsumer } from './catalog-consumer.js';
import { grantBucketKey } from './mirror-grants.js';
import { handlerCode } from './handler-entry.js';
import { nagResource } from './nag.js';

/** Adds the view consumer to `sync` (construct id `LatestView`). */
export function addLatestView(sync: ConsumableSync, alarmTopic?: sns.ITopic): CatalogConsumer {
  const view = new CatalogConsumer(sync, 'LatestView', {
    sync,
    consumerName: VIEW_CONSUMER,
    entry: handlerCode('view/lambda').entry,
    ...(alarmTopic ? { alarmTopic } : {}),
  });
  const objects = sync.bucket.arnForObjects(`${sync.prefix}${VIEW_KEYS}`);
  view.function.addToRolePolicy(
    new iam.PolicyStatement({ sid: 'WriteView', actions: ['s3:PutObject'], resources: [objects] }),
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
  return view;
}
