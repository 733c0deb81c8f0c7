/**
 * What tells an operator that a sync is unwell: four alarms (errors, dead letters, cursor lag, no successful
 * run), each notifying an SNS topic on alarm and on OK when one is given.
 *
 * A resource group of {@link CatalogSync}: its alarms are created in the `scope` it is given (see
 * snapshot-storage.ts for why), with construct ids `ErrorsAlarm`, `DeadLettersAlarm`, `LagAlarm` and
 * `MissedRunsAlarm`.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { DEFAULT_METRICS_NAMESPACE } from '../../lambda/contract/index.js';
import { DEFAULT_LAG_THRESHOLD } from '../defaults.js';

/** Properties of {@link SyncAlarms}. */
export interface SyncAlarmsProps {
  /** Name of the sync's cursor, named in every alarm's description. */
  readonly cursorName: string;

  /** Powertools service name: the `service` dimension of the sync's EMF metrics. */
  readonly serviceName: string;

  /** The sync's function, whose errors the errors alarm counts. */
  readonly function: lambda.IFunction;

  /** The sync's dead-letter queue, watched by the dead-letter alarm. */
  readonly deadLetterQueue: sqs.IQueue;

  /** Time between two runs: the period of the errors, lag and missed-run alarms. */
  readonly schedule: Duration;

  /** Whether the schedule runs: the missed-run alarm has its actions off while it does not. */
  readonly enabled: boolean;

  /**
   * The lag alarm fires when the cursor lags the catalog head by more than this in `lagAlarmPeriods` periods.
   * @default Duration.hours(1)
   */
  readonly lagThreshold?: Duration;

  /**
   * Periods in a row the lag must stay above `lagThreshold` for the lag alarm to fire.
   * @default 3
   */
  readonly lagAlarmPeriods?: number;

  /**
   * The missed-run alarm fires when no run succeeded in this many periods in a row.
   * @default 3
   */
  readonly missedRunPeriods?: number;

  /**
   * SNS topic notified when an alarm fires and when it clears.
   * @default - alarms only change state; no notification
   */
  readonly alarmTopic?: sns.ITopic;
}

/** A metric of a sync's EMF output (namespace `CatalogSync`, dimension `service`). */
export function syncMetric(
  serviceName: string,
  metricName: string,
  props: cloudwatch.MetricOptions = {},
): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: DEFAULT_METRICS_NAMESPACE,
    metricName,
    dimensionsMap: { service: serviceName },
    ...props,
  });
}

/**
 * An alarm that fires in the first period in which `metric` (its statistic over its period) is 1 or more, missing data
 * not breaching, notifying `alarmTopic`, if any, on alarm and on OK: the latest view's stale alarm, the feed writer's
 * quarantined alarm.
 */
export function atLeastOnceAlarm(
  scope: Construct,
  id: string,
  alarmDescription: string,
  metric: cloudwatch.IMetric,
  alarmTopic?: sns.ITopic,
): cloudwatch.Alarm {
  const alarm = new cloudwatch.Alarm(scope, id, {
    alarmDescription,
    metric,
    threshold: 1,
    evaluationPeriods: 1,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
  });
  if (alarmTopic) {
    alarm.addAlarmAction(new cloudwatchActions.SnsAction(alarmTopic));
    alarm.addOkAction(new cloudwatchActions.SnsAction(alarmTopic));
  }
  return alarm;
}

/** The four alarms of a sync. */
export class SyncAlarms {
  /** The function fails: any error in a period. */
  readonly errorsAlarm: cloudwatch.Alarm;
  /** The dead-letter queue holds a message. */
  readonly deadLetterAlarm: cloudwatch.Alarm;
  /** The cursor lags the catalog head by more than the threshold. */
  readonly lagAlarm: cloudwatch.Alarm;
  /** No run succeeded in `missedRunPeriods` periods. */
  readonly missedRunAlarm: cloudwatch.Alarm;

  constructor(scope: Construct, props: SyncAlarmsProps) {
    const { cursorName, schedule: rate } = props;
    const actions = props.alarmTopic ? [new cloudwatchActions.SnsAction(props.alarmTopic)] : [];
    const alarm = (alarmId: string, alarmProps: cloudwatch.AlarmProps): cloudwatch.Alarm => {
      const created = new cloudwatch.Alarm(scope, alarmId, alarmProps);
      created.addAlarmAction(...actions);
      created.addOkAction(...actions);
      return created;
    };
    this.errorsAlarm = alarm('ErrorsAlarm', {
      alarmDescription: `catalog-sync ${cursorName}: a run failed. Its error is in the logs and in the dead-letter queue.`,
      metric: props.function.metricErrors({ period: rate, statistic: cloudwatch.Stats.SUM }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.deadLetterAlarm = alarm('DeadLettersAlarm', {
      alarmDescription: `catalog-sync ${cursorName}: the dead-letter queue holds failed or undelivered runs. Read them, then purge the queue.`,
      metric: props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(5),
        statistic: cloudwatch.Stats.MAXIMUM,
      }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    const lagThreshold = props.lagThreshold ?? DEFAULT_LAG_THRESHOLD;
    const lagPeriods = props.lagAlarmPeriods ?? 3;
    this.lagAlarm = alarm('LagAlarm', {
      alarmDescription: `catalog-sync ${cursorName}: the cursor has lagged the catalog head by more than ${lagThreshold.toHumanString()} for ${lagPeriods} periods (expected during a backfill).`,
      metric: syncMetric(props.serviceName, 'CursorLagSeconds', { period: rate, statistic: cloudwatch.Stats.MINIMUM }),
      threshold: lagThreshold.toSeconds(),
      evaluationPeriods: lagPeriods,
      datapointsToAlarm: lagPeriods,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      // No data means no run: the missed-run alarm says so.
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    const missedPeriods = props.missedRunPeriods ?? 3;
    this.missedRunAlarm = alarm('MissedRunsAlarm', {
      alarmDescription: `catalog-sync ${cursorName}: no run succeeded in the last ${missedPeriods} periods of ${rate.toHumanString()}.`,
      metric: syncMetric(props.serviceName, 'RunSucceeded', { period: rate, statistic: cloudwatch.Stats.SUM }),
      threshold: 1,
      evaluationPeriods: missedPeriods,
      datapointsToAlarm: missedPeriods,
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.BREACHING,
      actionsEnabled: props.enabled,
    });
  }
}
