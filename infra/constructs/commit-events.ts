/**
 * The reference consumer path: an EventBridge rule on a sync's `commits/` object-created events into an SQS
 * queue with its own dead-letter queue.
 *
 * An alarm fires while the dead-letter queue holds a message (a consumer failed one 5 times, or EventBridge
 * could not deliver an event), notifying the alarm topic like the sync's other alarms.
 *
 * A resource group of {@link CatalogSync}: its resources are created in the `scope` it is given (see
 * snapshot-storage.ts for why), with construct ids `CommitEventsDeadLetters`, `CommitEvents`, `CommitCreated`
 * and `CommitDeadLettersAlarm`.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

/** Properties of {@link CommitEvents}. */
export interface CommitEventsProps {
  /** Name of the sync's cursor, named in the rule's description. */
  readonly cursorName: string;

  /** The snapshot bucket. It must send its events to EventBridge: buckets created by a CatalogSync do. */
  readonly bucket: s3.IBucket;

  /** The sync's key prefix: the rule matches objects created under `<prefix>commits/`. */
  readonly prefix: string;

  /**
   * SNS topic notified when the dead-letter alarm fires and when it clears (the sync's `alarmTopic`).
   * @default - the alarm only changes state; no notification
   */
  readonly alarmTopic?: sns.ITopic;
}

/** `commits/` object-created events → rule → queue (with its own DLQ). */
export class CommitEvents {
  /** `commits/` object-created events for downstream consumers. */
  readonly queue: sqs.Queue;
  /** Dead-letter queue of `queue` (messages received too often, events EventBridge could not deliver). */
  readonly deadLetterQueue: sqs.Queue;
  /** The EventBridge rule feeding `queue`. */
  readonly rule: events.Rule;
  /** The dead-letter queue holds a message. */
  readonly deadLetterAlarm: cloudwatch.Alarm;

  constructor(scope: Construct, props: CommitEventsProps) {
    this.deadLetterQueue = new sqs.Queue(scope, 'CommitEventsDeadLetters', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.queue = new sqs.Queue(scope, 'CommitEvents', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      visibilityTimeout: Duration.minutes(5),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: 5 },
    });
    this.rule = new events.Rule(scope, 'CommitCreated', {
      description: `catalog-sync ${props.cursorName}: a commit manifest was written under ${props.prefix}commits/`,
      eventPattern: {
        source: ['aws.s3'],
        detailType: ['Object Created'],
        detail: {
          bucket: { name: [props.bucket.bucketName] },
          object: { key: events.Match.prefix(`${props.prefix}commits/`) },
        },
      },
      targets: [new targets.SqsQueue(this.queue, { deadLetterQueue: this.deadLetterQueue })],
    });
    this.deadLetterAlarm = new cloudwatch.Alarm(scope, 'CommitDeadLettersAlarm', {
      alarmDescription:
        `catalog-sync ${props.cursorName}: the commit-events dead-letter queue holds messages: a consumer failed one 5 times, ` +
        'or EventBridge could not deliver an event. Read them, fix the consumer, then move them back (SQS redrive) or purge the queue.',
      metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(5),
        statistic: cloudwatch.Stats.MAXIMUM,
      }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    if (props.alarmTopic) {
      this.deadLetterAlarm.addAlarmAction(new cloudwatchActions.SnsAction(props.alarmTopic));
      this.deadLetterAlarm.addOkAction(new cloudwatchActions.SnsAction(props.alarmTopic));
    }
  }
}
