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
    super(scope, id, {
      description: 'catalog-sync: a NuGet V3 catalog follower (cursor in DynamoDB, leaf snapshots in S3)',
      ...props,
    });
    const { config } = props;
    Tags.of(this).add('project', 'catalog-sync');

    if (config.alarmEmails.length > 0 && config.alarmTopicArn) {
      throw new ContextError(
        'catalog-sync:alarmEmails and catalog-sync:alarmTopicArn: set one or the other (subscribe the addresses to your topic)',
      );
    }
    if (config.alarmEmails.length > 0) {
      const topic = new sns.Topic(this, 'AlarmTopic', { displayName: 'catalog-sync alarms', enforceSSL: true });
      for (const email of config.alarmEmails) topic.addSubscription(new subscriptions.EmailSubscription(email));
      this.alarmTopic = topic;
    } else if (config.alarmTopicArn) {
      this.alarmTopic = sns.Topic.fromTopicArn(this, 'AlarmTopic', config.alarmTopicArn);
    }
    const alarmTopic = this.alarmTopic ? { alarmTopic: this.alarmTopic } : {};

    // The outputs keep the ids they had when this stack added them: `CursorTable`, `SecondCursorTable`, …
    this.sync = new CatalogSync(this, 'Sync', {
      ...config.first,
      ...(config.viewRebuild ? { view: true, viewRebuild: true } : {}),
      ...alarmTopic,
      outputPrefix: '',
    });
    if (config.second) {
      const { ownBucket, ...second } = config.second;
      this.second = new CatalogSync(this, 'SecondSync', {
        ...second,
        ...alarmTopic,
        table: this.sync.table,
        ...(ownBucket ? {} : { bucket: this.sync.bucket }),
        outputPrefix: 'Second',
      });
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
    if (this.alarmTopic)
      new CfnOutput(this, 'AlarmTopicArn', { value: this.alarmTopic.topicArn, description: 'SNS topic of the alarms' });
  }
}
