/**
 * The stack `infra/app.ts` deploys: one CatalogSync (and optionally a second one following the first one's
 * cursor), an optional alarm topic, and outputs for operators and downstream consumers.
 */
import { CfnOutput, Stack, Tags, type StackProps } from 'aws-cdk-lib';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';
import { CatalogSync } from './catalog-sync.js';
import { CatalogBackfill } from './constructs/catalog-backfill.js';
import { ContextError, type AppConfig } from './config.js';

/** Props of {@link CatalogSyncStack}. */
export interface CatalogSyncStackProps extends StackProps {
  /** What to deploy (see `appConfigFromContext`). */
  readonly config: AppConfig;
}

/** One or two catalog syncs. Environment-agnostic: no lookups, so it synthesizes offline without credentials. */
export class CatalogSyncStack extends Stack {
  /** The first (or only) sync. */
  readonly sync: CatalogSync;
  /** The second sync, when configured. */
  readonly second?: CatalogSync;
  /** The backfill of the first sync's cursor, when `catalog-sync:backfill` is true. */
  readonly backfill?: CatalogBackfill;
  /** The alarm topic, when e-mail addresses or a topic ARN were given. */
  readonly alarmTopic?: sns.ITopic;

  constructor(scope: Construct, id: string, props: CatalogSyncStackProps) {
    super(scope, id, { description: 'catalog-sync: a NuGet V3 catalog follower (cursor in DynamoDB, leaf snapshots in S3)', ...props });
    const { config } = props;
    Tags.of(this).add('project', 'catalog-sync');

    if (config.alarmEmails.length > 0 && config.alarmTopicArn) {
      throw new ContextError('catalog-sync:alarmEmails and catalog-sync:alarmTopicArn: set one or the other (subscribe the addresses to your topic)');
    }
    if (config.alarmEmails.length > 0) {
      const topic = new sns.Topic(this, 'AlarmTopic', { displayName: 'catalog-sync alarms', enforceSSL: true });
      for (const email of config.alarmEmails) topic.addSubscription(new subscriptions.EmailSubscription(email));
      this.alarmTopic = topic;
    } else if (config.alarmTopicArn) {
      this.alarmTopic = sns.Topic.fromTopicArn(this, 'AlarmTopic', config.alarmTopicArn);
    }
    const alarmTopic = this.alarmTopic ? { alarmTopic: this.alarmTopic } : {};

    this.sync = new CatalogSync(this, 'Sync', { ...config.first, ...alarmTopic });
    this.outputs('', this.sync);
    if (config.second) {
      const { ownBucket, ...second } = config.second;
      this.second = new CatalogSync(this, 'SecondSync', {
        ...second,
        ...alarmTopic,
        table: this.sync.table,
        ...(ownBucket ? {} : { bucket: this.sync.bucket }),
      });
      this.outputs('Second', this.second);
    }
    if (config.backfill) {
      const sync = this.sync;
      this.backfill = new CatalogBackfill(this, 'Backfill', {
        table: sync.table,
        bucket: sync.bucket,
        prefix: sync.prefix,
        cursorName: sync.cursorName,
        settings: sync.settings,
        ...(sync.sourceSecret ? { sourceSecret: sync.sourceSecret } : {}),
        ...alarmTopic,
      });
      sync.dashboard?.addBackfill(this.backfill.stateMachine, this.backfill.failedAlarm, this.backfill.serviceName);
      new CfnOutput(this, 'BackfillStateMachineArn', {
        value: this.backfill.stateMachine.stateMachineArn,
        description: 'Start a backfill: catalog-sync backfill --state-machine <this ARN> (or the console, input {})',
      });
    }
    if (this.alarmTopic) new CfnOutput(this, 'AlarmTopicArn', { value: this.alarmTopic.topicArn, description: 'SNS topic of the alarms' });
  }

  private outputs(prefix: string, sync: CatalogSync): void {
    const out = (name: string, value: string, description: string) => new CfnOutput(this, `${prefix}${name}`, { value, description });
    out('CursorName', sync.cursorName, 'CURSOR_NAME of this sync');
    out('CursorTable', sync.table.tableName, 'DynamoDB table of the cursor and run log (--cursor-table)');
    out('SnapshotBucket', sync.bucket.bucketName, 'S3 bucket of the snapshots (--bucket)');
    out('SnapshotPrefix', sync.prefix === '' ? '(none)' : sync.prefix, 'SNAPSHOT_PREFIX of this sync (--prefix)');
    out('FunctionName', sync.function.functionName, 'The Lambda function (invoke it by hand to run a slice now)');
    out('LogGroup', sync.logGroup.logGroupName, 'Logs and EMF metrics of the runs');
    out('DeadLetterQueueUrl', sync.deadLetterQueue.queueUrl, 'Failed runs, with their error');
    if (sync.dashboard) out('DashboardName', sync.dashboard.dashboard.dashboardName, 'CloudWatch dashboard of this sync (lag, leaves/s, errors, duration, DLQ depths)');
    if (sync.commitQueue) {
      out('CommitQueueUrl', sync.commitQueue.queueUrl, 'commits/ object-created events for consumers');
      out('CommitQueueArn', sync.commitQueue.queueArn, 'commits/ object-created events for consumers');
    }
  }
}
