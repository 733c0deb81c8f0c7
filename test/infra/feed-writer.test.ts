/**
 * The feed's writer on AWS (`CatalogSync`'s `feed`): a `CatalogConsumer` named `feed` after the latest view (which
 * the feed turns on), running the feed's handler with its own memory, timeout, reserved concurrency and alarms,
 * FEED_BASE_URL the distribution's URL (or `writer.baseUrl`), the sync's source and filters; its role, read by a
 * small IAM evaluator that shares nothing with infra/, may write and delete under feed/ and feed-state/ only, read
 * the leaves and the view, and move its own cursor, not the view's; its quarantine alarm watches exactly the metric
 * the function emits (name, namespace and service from its environment), to the alarm topic; cdk-nag clean. One
 * synthesis.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { CatalogSync, CatalogSyncPropsError, type CatalogSyncProps } from '../../infra/index.js';
import { consumerCursorKey, mirrorKeyOf } from '../../lambda/contract/index.js';
import type { RecordedCall } from '../../testkit/aws-request-recorder.js';
import { uncovered, type TemplateNames } from '../../testkit/iam-evaluator.js';
import {
  acknowledgements,
  getAtt,
  NO_BUNDLING,
  outdir,
  rawFindings,
  roleStatements,
  syncStack,
  wildcardProblems,
  type Resources,
} from './synth-kit.js';

const build = (props: CatalogSyncProps) => syncStack(props, 'Feeds');
const stack = new Stack(new App({ context: NO_BUNDLING, outdir: outdir() }), 'Feeds');
const topic = new sns.Topic(stack, 'Pager', { enforceSSL: true });
const sync = new CatalogSync(stack, 'Sync', {
  prefix: 'nuget/',
  feed: {},
  includeIds: ['Contoso.*'],
  alarmTopic: topic,
});
const resources = Template.fromStack(stack).toJSON().Resources as Resources;
const writer = sync.feed!.writer!;
const fnId = stack.getLogicalId(writer.function.node.defaultChild as lambda.CfnFunction);
const properties = resources[fnId]!.Properties;
const statements = roleStatements(resources, stack.getLogicalId(writer.function.role!.node.defaultChild as never));
const tableId = stack.getLogicalId(sync.table.node.defaultChild as never);
const bucketId = stack.getLogicalId(sync.bucket.node.defaultChild as never);
const names: TemplateNames = {
  region: 'us-east-1',
  account: '123456789012',
  tables: { [tableId]: 'cursors' },
  buckets: { [bucketId]: 'mirror' },
};
const s3 = (method: string, key: string, status = 200): RecordedCall => ({
  service: 's3',
  method,
  bucket: 'mirror',
  key: `nuget/${key}`,
  status,
});
const cursor = (operation: string, name: string): RecordedCall => ({
  service: 'dynamodb',
  operation,
  table: 'cursors',
  partitionKeys: [consumerCursorKey(mirrorKeyOf('s3://mirror', 'nuget/'), name)],
  status: 200,
});

describe('the feed writer', () => {
  it('is the consumer feed after the latest view, with its handler, memory, timeout, concurrency and base URL', () => {
    expect(sync.view).toBeDefined();
    const distribution = stack.getLogicalId(sync.feed!.distribution!.distribution.node.defaultChild as never);
    expect(properties.Environment.Variables).toMatchObject({
      CONSUMER_NAME: 'feed',
      DEPENDS_ON: 'view-latest',
      SNAPSHOT_PREFIX: 'nuget/',
      FEED_BASE_URL: { 'Fn::Join': ['', ['https://', getAtt(distribution, 'DomainName'), '/']] },
      CATALOG_SOURCE: 'https://api.nuget.org/v3/index.json',
      INCLUDE_IDS: 'Contoso.*',
    });
    expect(properties).toMatchObject({ ReservedConcurrentExecutions: 1, MemorySize: 1024, Timeout: 900 });
    expect(properties.Description).toBe('catalog-sync consumer feed');
    const alarms = Object.values(resources).filter((resource) => resource.Type === 'AWS::CloudWatch::Alarm');
    const own = alarms.filter((alarm) =>
      String(alarm.Properties.AlarmDescription).startsWith('catalog-sync consumer feed:'),
    );
    expect(own).toHaveLength(2);
    const dashboard = Object.values(resources).find((resource) => resource.Type === 'AWS::CloudWatch::Dashboard')!;
    expect(JSON.stringify(dashboard.Properties.DashboardBody)).toContain('catalog-sync-consumer-feed');
  });

  it('alarms on FeedPackagesQuarantined as the function emits it: its namespace and service, SUM over 5 minutes >= 1, to the topic', () => {
    const variables = properties.Environment.Variables;
    expect(variables).toMatchObject({
      POWERTOOLS_METRICS_NAMESPACE: 'CatalogSync',
      POWERTOOLS_SERVICE_NAME: 'catalog-sync-consumer-feed',
    });
    const alarmId = stack.getLogicalId(sync.feed!.quarantinedAlarm!.node.defaultChild as never);
    expect(alarmId).toMatch(/^SyncFeedWriterQuarantinedAlarm/);
    const alarm = resources[alarmId]!;
    expect(alarm.Type).toBe('AWS::CloudWatch::Alarm');
    const pager = { Ref: stack.getLogicalId(topic.node.defaultChild as never) };
    expect(alarm.Properties).toMatchObject({
      Namespace: variables.POWERTOOLS_METRICS_NAMESPACE,
      MetricName: 'FeedPackagesQuarantined',
      Dimensions: [{ Name: 'service', Value: variables.POWERTOOLS_SERVICE_NAME }],
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      EvaluationPeriods: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      AlarmActions: [pager],
      OKActions: [pager],
    });
    // It tells where the records are and what lists them.
    const description = JSON.stringify(alarm.Properties.AlarmDescription);
    expect(description).toContain('nuget/feed-state/quarantine/{lowerid}/{lowerversion}.json');
    expect(description).toContain('catalog-sync verify --feed');
    // On the dashboard, against its alarm.
    const dashboard = Object.values(resources).find((resource) => resource.Type === 'AWS::CloudWatch::Dashboard')!;
    const body = JSON.stringify(dashboard.Properties.DashboardBody);
    expect(body).toContain('Feed writer: packages quarantined (FeedPackagesQuarantined)');
    expect(body).toContain(alarmId);
  });

  it('may write and delete under feed/ and feed-state/, read the leaves and the view, and move its own cursor only', () => {
    const allowed = [
      s3('PUT', 'feed/flat/contoso.a/1.0.0/contoso.a.1.0.0.nupkg'),
      s3('PUT', 'feed/registration/contoso.a/index.json'),
      s3('DELETE', 'feed/flat/contoso.a/1.0.0/contoso.a.1.0.0.nupkg'),
      s3('PUT', 'feed-state/packages/contoso.a.json'),
      s3('DELETE', 'feed-state/waiting/contoso.a.json'),
      s3('GET', 'leaves/001e9fzMHc3F/contoso.a/1.0.0.json'),
      s3('GET', 'packages/contoso.a/index.json'),
      s3('GET', 'feed-state/packages/contoso.b.json', 404),
      cursor('GetItem', 'feed'),
      cursor('GetItem', 'view-latest'),
      cursor('UpdateItem', 'feed'),
    ];
    expect(uncovered(statements, allowed, names)).toEqual([]);
    const refused = [
      s3('PUT', 'leaves/001e9fzMHc3F/contoso.a/1.0.0.json'),
      s3('DELETE', 'leaves/001e9fzMHc3F/contoso.a/1.0.0.json'),
      s3('PUT', 'packages/contoso.a/index.json'),
      s3('DELETE', 'packages/contoso.a/index.json'),
      s3('PUT', 'commits/001e9fzMHc3F.json'),
      s3('PUT', 'watermark.json'),
      s3('PUT', 'feedx/index.json'),
      { ...s3('PUT', ''), key: 'feed/index.json' },
      cursor('UpdateItem', 'view-latest'),
    ];
    for (const call of refused) expect(uncovered(statements, [call], names), JSON.stringify(call)).toHaveLength(1);
    const aborts = statements.filter((statement) => JSON.stringify(statement.Action).includes('AbortMultipartUpload'));
    expect(aborts).toHaveLength(1);
    expect(wildcardProblems(resources)).toEqual([]);
  });

  it('is cdk-nag clean, each acknowledgement one that fires', () => {
    expect(new AwsSolutionsChecks().validateScope(stack).violations.map((violation) => violation.ruleName)).toEqual([]);
    const findings = new Set(rawFindings(writer));
    for (const id of acknowledgements(writer).keys()) expect(findings, id).toContain(id);
  });

  it("takes a base URL of its own; without a distribution it needs one; it needs the view; a private source's secret; writer: false makes none", () => {
    const own = build({
      feed: { distribution: false, writer: { baseUrl: 'https://nuget.example.com/', downloads: 4 } },
    });
    const ownFn = own.stack.getLogicalId(own.sync.feed!.writer!.function.node.defaultChild as lambda.CfnFunction);
    const ownResources = own.resources();
    expect(ownResources[ownFn]!.Properties.Environment.Variables).toMatchObject({
      FEED_BASE_URL: 'https://nuget.example.com/',
      FEED_DOWNLOADS: '4',
    });
    // No alarm topic: the alarm changes state and tells no one.
    const ownAlarm = ownResources[own.stack.getLogicalId(own.sync.feed!.quarantinedAlarm!.node.defaultChild as never)]!;
    expect(ownAlarm.Properties.AlarmActions).toBeUndefined();
    expect(() => build({ feed: { distribution: false } })).toThrow(
      new CatalogSyncPropsError(
        'feed.writer needs the URL at which the feed is served: give feed.writer.baseUrl, or keep feed.distribution',
      ),
    );
    expect(() => build({ view: false, feed: {} })).toThrow('leave view on, or feed.writer false');
    expect(() => build({ feed: { writer: { downloads: 0 } } })).toThrow('feed.writer.downloads 0');
    const secret = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:catalog-sync/feed-AbCdEf';
    const privateFeed = build({ source: 'https://feed.example/v3/index.json', sourceSecret: secret, feed: {} });
    const privateWriter = privateFeed.sync.feed!.writer!.function;
    const privateResources = privateFeed.resources();
    const fnProps = privateResources[privateFeed.stack.getLogicalId(privateWriter.node.defaultChild as never)]!;
    expect(fnProps.Properties.Environment.Variables).toMatchObject({
      CATALOG_SOURCE: 'https://feed.example/v3/index.json',
      SOURCE_SECRET_ARN: secret,
    });
    const reads = roleStatements(
      privateResources,
      privateFeed.stack.getLogicalId(privateWriter.role!.node.defaultChild as never),
    ).filter((statement) => JSON.stringify(statement.Action).includes('secretsmanager:GetSecretValue'));
    expect(reads.map((statement) => statement.Resource)).toEqual([secret]);
    const none = build({ feed: { writer: false } });
    expect(none.sync.feed!.writer).toBeUndefined();
    expect(none.sync.feed!.quarantinedAlarm).toBeUndefined();
    expect(none.sync.view).toBeUndefined();
  });
});
