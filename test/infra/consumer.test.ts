/**
 * `CatalogConsumer` (infra/constructs/catalog-consumer.ts) next to a `CatalogSync`: wiring (its own wake-up queue on
 * the sync's commit rule, the SQS event source, the backstop schedule, reserved concurrency 1, the dead-letter
 * queue), least-privilege IAM, the stuck and dead-letter alarms, the lag on the dashboard, cdk-nag, and its props'
 * errors.
 */
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { App, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { CatalogConsumer, CatalogSync, type CatalogConsumerProps } from '../../infra/index.js';
import {
  acknowledgements,
  NO_BUNDLING,
  normalized,
  only,
  outdir,
  rawFindings,
  roleStatements,
  wildcardProblems,
  type Resources,
} from './synth-kit.js';

const ENTRY = fileURLToPath(new URL('./fixtures/consumer-entry.ts', import.meta.url));

function build(props: Partial<CatalogConsumerProps> = {}, withFunction = false) {
  const app = new App({ context: NO_BUNDLING, outdir: outdir() });
  const stack = new Stack(app, 'Consumers');
  const sync = new CatalogSync(stack, 'Sync', { prefix: 'nuget/' });
  const fn = withFunction
    ? new lambda.Function(stack, 'Mine', {
        runtime: lambda.Runtime.NODEJS_22_X,
        handler: 'index.handler',
        code: lambda.Code.fromInline('export const handler = () => {}'),
      })
    : undefined;
  const consumer = new CatalogConsumer(stack, 'Indexer', {
    sync,
    consumerName: 'search-indexer',
    dependsOn: ['vulnerability-scan'],
    ...(fn ? { function: fn } : { entry: ENTRY }),
    ...props,
  });
  const template = Template.fromStack(stack);
  return { app, stack, sync, consumer, template, resources: template.toJSON().Resources as Resources };
}

describe('CatalogConsumer', () => {
  const built = build();
  const { resources, template, stack } = built;
  const functionId = stack.getLogicalId(built.consumer.function.node.defaultChild as lambda.CfnFunction);

  it("runs one at a time with the consumer's settings, woken by its own queue on the sync's commit rule and by a schedule", () => {
    const fn = resources[functionId]!.Properties;
    expect(fn.ReservedConcurrentExecutions).toBe(1);
    expect(fn.Environment.Variables).toMatchObject({
      CONSUMER_NAME: 'search-indexer',
      SNAPSHOT_PREFIX: 'nuget/',
      CURSOR_NAME: 'catalog-to-s3',
      DEPENDS_ON: 'vulnerability-scan',
      CHECKPOINT_EVERY: '1',
      POWERTOOLS_SERVICE_NAME: 'catalog-sync-consumer-search-indexer',
    });
    const wakeId = stack.getLogicalId(built.consumer.wakeQueue.node.defaultChild as never);
    const [, mapping] = only(resources, 'AWS::Lambda::EventSourceMapping');
    expect(mapping).toMatchObject({
      FunctionName: { Ref: functionId },
      EventSourceArn: { 'Fn::GetAtt': [wakeId, 'Arn'] },
      BatchSize: 1000,
      MaximumBatchingWindowInSeconds: 20,
      ScalingConfig: { MaximumConcurrency: 2 },
    });
    // The sync's commit rule feeds its own queue and this consumer's: every consumer sees every event.
    const commitRule = stack.getLogicalId(built.sync.commitRule!.node.defaultChild as never);
    const queues = (resources[commitRule]!.Properties.Targets as { Arn: unknown }[]).map((target) => target.Arn);
    expect(queues).toContainEqual({ 'Fn::GetAtt': [wakeId, 'Arn'] });
    expect(queues).toHaveLength(2);
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(5 minutes)',
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [functionId, 'Arn'] },
          RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 3600 },
        }),
      ],
    });
    const dlqId = stack.getLogicalId(built.consumer.deadLetterQueue.node.defaultChild as never);
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: functionId },
      MaximumRetryAttempts: 0,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [dlqId, 'Arn'] } } },
    });
  });

  it("holds exactly its calls: its cursor and its dependency's, ListBucket of the bucket, GetObject under the prefix, its logs", () => {
    const roleId = resources[functionId]!.Properties.Role['Fn::GetAtt'][0];
    const table = stack.getLogicalId(built.sync.table.node.defaultChild as never);
    const bucket = stack.getLogicalId(built.sync.bucket.node.defaultChild as never);
    const wakeId = stack.getLogicalId(built.consumer.wakeQueue.node.defaultChild as never);
    const dlqId = stack.getLogicalId(built.consumer.deadLetterQueue.node.defaultChild as never);
    const got = roleStatements(resources, roleId).map(normalized);
    const keyed = (name: string): unknown => ({
      'Fn::Join': ['', ['consumer#s3://', { Ref: bucket }, `/nuget/#${name}`]],
    });
    const expected = [
      // Its cursor and its dependency's, keyed by the mirror (`consumer#s3://{bucket}/{prefix}#{name}`), and the items under
      // their names alone (an earlier version's cursors: read, and its own marked adopted).
      {
        Effect: 'Allow',
        Action: ['dynamodb:GetItem'],
        Resource: { 'Fn::GetAtt': [table, 'Arn'] },
        Condition: {
          'ForAllValues:StringEquals': {
            'dynamodb:LeadingKeys': [
              keyed('search-indexer'),
              keyed('vulnerability-scan'),
              'search-indexer',
              'vulnerability-scan',
            ],
          },
        },
      },
      {
        Effect: 'Allow',
        Action: ['dynamodb:UpdateItem'],
        Resource: { 'Fn::GetAtt': [table, 'Arn'] },
        Condition: {
          'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [keyed('search-indexer'), 'search-indexer'] },
        },
      },
      // Unconditioned: it lists commits/ and GETs keys that may be missing (the watermark before the first run), and S3
      // answers such a GET 404 only to a role that may list the bucket, 403 otherwise (a GetObject has no s3:prefix).
      { Effect: 'Allow', Action: ['s3:ListBucket'], Resource: { 'Fn::GetAtt': [bucket, 'Arn'] } },
      {
        Effect: 'Allow',
        Action: ['s3:GetObject'],
        Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucket, 'Arn'] }, '/nuget/*']] },
      },
      { Effect: 'Allow', Action: ['sqs:SendMessage'], Resource: { 'Fn::GetAtt': [dlqId, 'Arn'] } },
      {
        Effect: 'Allow',
        Action: [
          'sqs:ChangeMessageVisibility',
          'sqs:DeleteMessage',
          'sqs:GetQueueAttributes',
          'sqs:GetQueueUrl',
          'sqs:ReceiveMessage',
        ],
        Resource: { 'Fn::GetAtt': [wakeId, 'Arn'] },
      },
    ];
    for (const statement of expected) expect(got).toContainEqual(normalized(statement));
    // Besides those: only the writes to its own log group.
    const others = got.filter((statement) => !expected.some((e) => isDeepStrictEqual(normalized(e), statement)));
    expect(others.flatMap((statement) => statement.Action).sort()).toEqual([
      'logs:CreateLogStream',
      'logs:PutLogEvents',
    ]);
    expect(wildcardProblems(resources)).toEqual([]);
  });

  it('alarms when stuck on one commit (failures in 3 consecutive periods) and on a failed scheduled run; lag on the dashboard', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ConsumerFailures',
      Namespace: 'CatalogSync',
      Dimensions: [{ Name: 'service', Value: 'catalog-sync-consumer-search-indexer' }],
      Statistic: 'Sum',
      Threshold: 1,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    const dlqId = stack.getLogicalId(built.consumer.deadLetterQueue.node.defaultChild as never);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [dlqId, 'QueueName'] } }],
    });
    const [, dashboard] = only(resources, 'AWS::CloudWatch::Dashboard');
    const body = JSON.stringify(dashboard.DashboardBody);
    expect(body).toContain('ConsumerLagSeconds');
    expect(body).toContain('catalog-sync-consumer-search-indexer');
    expect(body).toContain('Consumer search-indexer: lag behind the watermark');
  });

  it('cdk-nag: clean; every acknowledgement answers a finding', () => {
    expect(new AwsSolutionsChecks().validateScope(stack).violations.map((violation) => violation.ruleName)).toEqual([]);
    const findings = new Set(rawFindings(built.consumer));
    for (const id of acknowledgements(built.consumer).keys()) expect(findings, id).toContain(id);
  });

  it('drives a function you built the same way', () => {
    const mine = build({}, true);
    const fn = only(mine.resources, 'AWS::Lambda::Function', (p) => p.Code?.ZipFile !== undefined)[1];
    expect(fn.ReservedConcurrentExecutions).toBe(1);
    expect(fn.Environment.Variables).toMatchObject({ CONSUMER_NAME: 'search-indexer' });
    expect(Object.values(mine.resources).filter((r) => r.Type === 'AWS::Lambda::EventSourceMapping')).toHaveLength(1);
  });

  it('warns when the sync has no commit events: only the schedule wakes it', () => {
    const app = new App({ context: NO_BUNDLING, outdir: outdir() });
    const stack = new Stack(app, 'Quiet');
    const sync = new CatalogSync(stack, 'Sync', { commitEvents: false });
    new CatalogConsumer(stack, 'Indexer', { sync, consumerName: 'indexer', entry: ENTRY });
    Annotations.fromStack(stack).hasWarning('/Quiet/Indexer', Match.stringLikeRegexp('no commit events'));
  });

  it('refuses bad props with a message naming them', () => {
    expect(() => build({ consumerName: 'catalog-to-s3' })).toThrow(/sync's own cursor name/);
    expect(() => build({ consumerName: 'bad name' })).toThrow(/consumerName must be/);
    expect(() => build({ dependsOn: ['search-indexer'] })).toThrow(/dependsOn "search-indexer"/);
    expect(() => build({ checkpointEvery: 0 })).toThrow(/checkpointEvery 0/);
    expect(() => build({ entry: undefined })).toThrow(/exactly one of "entry"/);
  });
});
