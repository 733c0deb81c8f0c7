/**
 * The CDK app as `cdk synth` builds it from cdk.json, one sync (its template item by item: stack.test.ts): the alarms
 * (errors, dead letters, cursor lag, no successful run) on the sync's service dimension, and the consumers' path
 * (commits/ object-created events into a queue with its own dead-letter queue). Read from the default app's template,
 * test/infra/fixtures/default-template.json, which backfill.test.ts holds byte for byte to the synthesized one: this
 * file synthesizes nothing.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { getAtt, ofType, only, ref, type Json, type Resources } from './synth-kit.js';

describe('the app from cdk.json: alarms and commit events', () => {
  const template = JSON.parse(readFileSync(new URL('./fixtures/default-template.json', import.meta.url), 'utf8')) as {
    Resources: Resources;
  };
  const s = { resources: template.Resources };
  const [fn] = only(s.resources, 'AWS::Lambda::Function');
  const [bucket] = only(s.resources, 'AWS::S3::Bucket', (p) => p.VersioningConfiguration !== undefined);
  const dlq = ofType(s.resources, 'AWS::Lambda::EventInvokeConfig')[0]![1].Properties.DestinationConfig.OnFailure
    .Destination['Fn::GetAtt'][0] as string;
  const ids = { bucket, fn, dlq };

  it("alarms: errors, dead letters, cursor lag (EMF), no successful run; on the sync's service dimension", () => {
    const alarms = ofType(s.resources, 'AWS::CloudWatch::Alarm').map(([, alarm]) => alarm.Properties);
    const service = [{ Name: 'service', Value: 'catalog-sync-catalog-to-s3' }];
    expect(alarms).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          Namespace: 'AWS/Lambda',
          MetricName: 'Errors',
          Dimensions: [{ Name: 'FunctionName', Value: ref(ids.fn) }],
          Statistic: 'Sum',
          Threshold: 1,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          TreatMissingData: 'notBreaching',
        }),
        expect.objectContaining({
          Namespace: 'AWS/SQS',
          MetricName: 'ApproximateNumberOfMessagesVisible',
          Dimensions: [{ Name: 'QueueName', Value: getAtt(ids.dlq, 'QueueName') }],
          Threshold: 1,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        }),
        expect.objectContaining({
          Namespace: 'CatalogSync',
          MetricName: 'CursorLagSeconds',
          Dimensions: service,
          Threshold: 3600,
          EvaluationPeriods: 3,
          Period: 300,
          ComparisonOperator: 'GreaterThanThreshold',
        }),
        expect.objectContaining({
          Namespace: 'CatalogSync',
          MetricName: 'RunSucceeded',
          Dimensions: service,
          Statistic: 'Sum',
          Threshold: 1,
          EvaluationPeriods: 3,
          DatapointsToAlarm: 3,
          Period: 300,
          ComparisonOperator: 'LessThanThreshold',
          TreatMissingData: 'breaching',
        }),
      ]),
    );
    for (const alarm of alarms) expect(alarm.AlarmActions).toBeUndefined(); // no topic configured
  });

  it('consumer path: commits/ object-created events into a queue with its own DLQ', () => {
    const [ruleId, rule] = only(s.resources, 'AWS::Events::Rule', (p) => p.EventPattern !== undefined);
    expect(rule.EventPattern).toEqual({
      source: ['aws.s3'],
      'detail-type': ['Object Created'],
      detail: { bucket: { name: [ref(ids.bucket)] }, object: { key: [{ prefix: 'commits/' }] } },
    });
    const [queueId, queue] = only(s.resources, 'AWS::SQS::Queue', (p) => p.RedrivePolicy !== undefined);
    const commitDlq = queue.RedrivePolicy.deadLetterTargetArn['Fn::GetAtt'][0] as string;
    expect(queue).toMatchObject({ SqsManagedSseEnabled: true, RedrivePolicy: { maxReceiveCount: 5 } });
    expect(commitDlq).not.toBe(ids.dlq);
    expect(s.resources[commitDlq]!.Properties).toMatchObject({ SqsManagedSseEnabled: true });
    expect(rule.Targets).toEqual([
      expect.objectContaining({ Arn: getAtt(queueId), DeadLetterConfig: { Arn: getAtt(commitDlq) } }),
    ]);
    const [, policy] = only(s.resources, 'AWS::SQS::QueuePolicy', (p) => p.Queues.some((q: Json) => q.Ref === queueId));
    expect(policy.PolicyDocument.Statement).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        expect.objectContaining({
          Effect: 'Allow',
          Action: expect.arrayContaining(['sqs:SendMessage']), // CDK's SqsQueue target adds GetQueueAttributes/GetQueueUrl
          Principal: { Service: 'events.amazonaws.com' },
          Condition: { ArnEquals: { 'aws:SourceArn': getAtt(ruleId) } },
        }),
      ]),
    );
  });
});
