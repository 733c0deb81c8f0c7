import { Annotations, Match } from 'aws-cdk-lib/assertions';
import type * as iam from 'aws-cdk-lib/aws-iam';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../infra/app.js';
import type { CatalogSync } from '../../infra/index.js';
import {
  acknowledgements,
  CDK_JSON,
  getAtt,
  NO_BUNDLING,
  normalized,
  ofType,
  only,
  outdir,
  rawFindings,
  ref,
  roleStatements,
  synth,
  wildcardProblems,
  type Json,
  type Synthesized,
} from './synth-kit.js';

describe("two syncs in one app: the second follows the first one's cursor, in its table and bucket", () => {
  let s: Synthesized;
  let first: CatalogSync;
  let second: CatalogSync;
  const id = (construct: IConstruct) => s.stack.getLogicalId(construct.node.defaultChild as any);

  beforeAll(() => {
    s = synth({
      'catalog-sync:prefix': 'nuget/',
      'catalog-sync:source': 'https://feed.example/v3/index.json',
      'catalog-sync:second:cursorName': 'mirror',
      'catalog-sync:second:concurrency': '8',
    });
    first = s.stack.sync;
    second = s.stack.second!;
  });

  it('shares one table and one bucket, with two functions, schedules, DLQs and consumer queues', () => {
    s.template.resourceCountIs('AWS::DynamoDB::Table', 1);
    s.template.resourceCountIs('AWS::S3::Bucket', 2); // snapshots + access logs
    s.template.resourceCountIs('AWS::Lambda::Function', 2);
    s.template.resourceCountIs('AWS::IAM::Role', 2);
    s.template.resourceCountIs('AWS::Events::Rule', 4);
    s.template.resourceCountIs('AWS::SQS::Queue', 6);
    s.template.resourceCountIs('AWS::CloudWatch::Alarm', 10);
    expect(second.table).toBe(first.table);
    expect(second.bucket).toBe(first.bucket);
  });

  it('the second depends on the first cursor, under its own prefix, with its own metrics service', () => {
    const env = (sync: CatalogSync) => s.resources[id(sync.function)]!.Properties.Environment.Variables as Json;
    const table = ref(id(first.table));
    const bucket = ref(id(first.bucket));
    expect(env(first)).toMatchObject({
      CURSOR_NAME: 'catalog-to-s3',
      DEPENDS_ON: '',
      SNAPSHOT_PREFIX: 'nuget/',
      CURSOR_TABLE: table,
      SNAPSHOT_BUCKET: bucket,
      POWERTOOLS_SERVICE_NAME: 'catalog-sync-catalog-to-s3',
    });
    expect(env(first).CATALOG_SOURCE).toBe('https://feed.example/v3/index.json');
    expect(env(second).CATALOG_SOURCE).toBe('https://feed.example/v3/index.json'); // the same catalog by default
    expect(env(second)).toMatchObject({
      CURSOR_NAME: 'mirror',
      DEPENDS_ON: 'catalog-to-s3',
      SNAPSHOT_PREFIX: 'mirror/',
      CURSOR_TABLE: table,
      SNAPSHOT_BUCKET: bucket,
      POWERTOOLS_SERVICE_NAME: 'catalog-sync-mirror',
      CONCURRENCY: '8',
    });
  });

  it("IAM: each reads its own and its dependencies' cursors, writes only its own items, puts only under its prefix", () => {
    const roleId = (sync: CatalogSync) => id(sync.function.role as iam.Role);
    const keys = (names: string[]) => ({ 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': names } });
    const tableArn = getAtt(id(first.table));
    // The layout's folders and the two state keys under the prefix: nothing else of the bucket.
    const objects = (prefix: string) =>
      ['commits/*', 'filter.json', 'leaves/*', 'quarantine/*', 'watermark.json'].map((key) => ({
        'Fn::Join': ['', [getAtt(id(first.bucket)), `/${prefix}${key}`]],
      }));
    const of = (sync: CatalogSync) => roleStatements(s.resources, roleId(sync)).map(normalized);
    expect(of(second)).toEqual(
      expect.arrayContaining([
        {
          Effect: 'Allow',
          Action: ['dynamodb:GetItem'],
          Resource: tableArn,
          Condition: keys(['mirror', 'catalog-to-s3']),
        },
        {
          Effect: 'Allow',
          Action: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
          Resource: tableArn,
          Condition: keys(['mirror']),
        },
        { Effect: 'Allow', Action: ['s3:PutObject'], Resource: objects('mirror/') },
      ]),
    );
    expect(of(first)).toEqual(
      expect.arrayContaining([
        { Effect: 'Allow', Action: ['dynamodb:GetItem'], Resource: tableArn, Condition: keys(['catalog-to-s3']) },
        {
          Effect: 'Allow',
          Action: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
          Resource: tableArn,
          Condition: keys(['catalog-to-s3']),
        },
        { Effect: 'Allow', Action: ['s3:PutObject'], Resource: objects('nuget/') },
      ]),
    );
    expect(wildcardProblems(s.resources)).toEqual([]);
  });

  it('alarms and consumer rules are per sync', () => {
    const services = ofType(s.resources, 'AWS::CloudWatch::Alarm')
      .map(([, alarm]) => alarm.Properties)
      .filter((alarm) => alarm.Namespace === 'CatalogSync')
      .map((alarm) => `${alarm.MetricName}@${alarm.Dimensions[0].Value}`)
      .sort();
    expect(services).toEqual([
      'CursorLagSeconds@catalog-sync-catalog-to-s3',
      'CursorLagSeconds@catalog-sync-mirror',
      'RunSucceeded@catalog-sync-catalog-to-s3',
      'RunSucceeded@catalog-sync-mirror',
    ]);
    const prefixes = ofType(s.resources, 'AWS::Events::Rule')
      .map(([, rule]) => rule.Properties.EventPattern?.detail?.object?.key?.[0]?.prefix)
      .filter(Boolean)
      .sort();
    expect(prefixes).toEqual(['mirror/commits/', 'nuget/commits/']);
  });

  it('refuses overlapping prefixes in one bucket, and says how to fix it', () => {
    expect(() => synth({ 'catalog-sync:second:cursorName': 'mirror' })).toThrow(
      /prefix "mirror\/" overlaps prefix "" of .*own prefix/,
    );
  });

  it('takes its own bucket when asked, then any prefixes do', () => {
    const own = synth({
      'catalog-sync:second:cursorName': 'mirror',
      'catalog-sync:second:ownBucket': 'true',
      'catalog-sync:second:prefix': '',
    });
    own.template.resourceCountIs('AWS::DynamoDB::Table', 1);
    own.template.resourceCountIs('AWS::S3::Bucket', 4);
  });

  it('refuses two syncs on one cursor name in one table', () => {
    expect(() =>
      synth({
        'catalog-sync:prefix': 'a/',
        'catalog-sync:second:cursorName': 'catalog-to-s3',
        'catalog-sync:second:dependsOn': 'x',
      }),
    ).toThrow(/cursor "catalog-to-s3" is already followed by/);
  });
});

describe('alarm notifications', () => {
  let s: Synthesized;
  beforeAll(() => {
    s = synth({ 'catalog-sync:alarmEmails': 'ops@example.com,oncall@example.com', 'catalog-sync:enabled': 'false' });
  });

  it('an SNS topic (TLS only) with the e-mail subscriptions, on alarm and on OK of every alarm', () => {
    const [topicId] = only(s.resources, 'AWS::SNS::Topic');
    s.template.resourceCountIs('AWS::SNS::Subscription', 2);
    s.template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
      TopicArn: ref(topicId),
    });
    s.template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
    const alarms = ofType(s.resources, 'AWS::CloudWatch::Alarm').map(([, alarm]) => alarm.Properties);
    expect(alarms).toHaveLength(5); // the commit-events DLQ alarm included
    for (const alarm of alarms) {
      expect(alarm.AlarmActions).toEqual([ref(topicId)]);
      expect(alarm.OKActions).toEqual([ref(topicId)]);
    }
  });

  it('a disabled schedule does not page for missed runs', () => {
    only(s.resources, 'AWS::Events::Rule', (p) => p.State === 'DISABLED' && p.ScheduleExpression !== undefined);
    const [, missed] = only(s.resources, 'AWS::CloudWatch::Alarm', (p) => p.MetricName === 'RunSucceeded');
    expect(missed.ActionsEnabled).toBe(false);
  });

  it('or an existing topic by ARN', () => {
    const existing = synth({ 'catalog-sync:alarmTopicArn': 'arn:aws:sns:eu-west-1:123456789012:ops' });
    existing.template.resourceCountIs('AWS::SNS::Topic', 0);
    existing.template.allResourcesProperties('AWS::CloudWatch::Alarm', {
      AlarmActions: ['arn:aws:sns:eu-west-1:123456789012:ops'],
    });
  });
});

describe('configuration from context (-c values arrive as text)', () => {
  it('reads numbers, booleans, lists and durations from text', () => {
    const s = synth({
      'catalog-sync:scheduleMinutes': '15',
      'catalog-sync:timeoutSeconds': '600',
      'catalog-sync:memoryMb': '2048',
      'catalog-sync:quarantine': 'true',
      'catalog-sync:allowedOrigins': 'https://a.example, https://b.example',
      'catalog-sync:dependsOn': 'upstream',
      'catalog-sync:reservedConcurrency': '2',
      'catalog-sync:logRetentionDays': '90',
      'catalog-sync:commitEvents': 'false',
    });
    const [, fn] = only(s.resources, 'AWS::Lambda::Function');
    expect(fn).toMatchObject({ Timeout: 600, MemorySize: 2048, ReservedConcurrentExecutions: 2 });
    expect(fn.Environment.Variables).toMatchObject({
      QUARANTINE: 'true',
      ALLOWED_ORIGINS: 'https://a.example,https://b.example',
      DEPENDS_ON: 'upstream',
    });
    s.template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(15 minutes)' });
    s.template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 90 });
    s.template.resourceCountIs('AWS::SQS::Queue', 1); // no consumer path
    s.template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'RunSucceeded', Period: 900 });
  });

  it.each([
    [{ 'catalog-sync:scheduleMinutes': 2 }, /schedule \(2 minutes\) must be at least the timeout \(5 minutes\)/],
    [{ 'catalog-sync:cursorName': 'no spaces' }, /CURSOR_NAME: "no spaces" must be/],
    [{ 'catalog-sync:source': 'ftp://example.com/index.json' }, /CATALOG_SOURCE: .* must be an http or https URL/],
    [{ 'catalog-sync:startCursor': 'yesterday' }, /START_CURSOR/],
    [{ 'catalog-sync:prefix': 'a*/' }, /must not hold \*, \? or \$/],
    [{ 'catalog-sync:maxEventAgeSeconds': 30 }, /maxEventAge must be from 1 minute/],
    [{ 'catalog-sync:concurrency': 'many' }, /catalog-sync:concurrency: "many" must be a whole number/],
    [{ 'catalog-sync:logRetentionDays': 31 }, /catalog-sync:logRetentionDays: 31 must be one of/],
    [{ 'catalog-sync:quarantine': 'maybe' }, /catalog-sync:quarantine: "maybe" must be true or false/],
    // A misspelt key is refused, not ignored with the default deployed.
    [
      { 'catalog-sync:memorySize': '1769' },
      /catalog-sync:memorySize: not a setting of this app; did you mean catalog-sync:memoryMb\?/,
    ],
    [
      { 'catalog-sync:second:concurency': '4', 'catalog-sync:second:cursorName': 'search' },
      /did you mean catalog-sync:second:concurrency\?/,
    ],
    [
      { 'catalog-sync:second:concurrency': '4' },
      /catalog-sync:second:concurrency: there is no second sync; set catalog-sync:second:cursorName/,
    ],
    [{ 'catalog-sync:zzzzzzzzzzzz': 'x' }, /catalog-sync:zzzzzzzzzzzz: not a setting of this app \(see README/],
  ])('refuses %j at synth time, naming the setting', (overrides, message) => {
    expect(() => synth(overrides)).toThrow(message);
  });
});

describe('cdk-nag (AwsSolutions)', () => {
  let apps: Synthesized[];
  beforeAll(() => {
    apps = [
      synth(),
      synth({
        'catalog-sync:prefix': 'nuget/',
        'catalog-sync:second:cursorName': 'mirror',
        'catalog-sync:alarmEmails': 'ops@example.com',
      }),
    ];
  });

  it('reports no finding that is not acknowledged', () => {
    for (const { app } of apps) {
      const report = new AwsSolutionsChecks().validateScope(app);
      expect(
        report.violations.map((v) => `${v.ruleName} at ${v.violatingResources.map((r) => r.constructPath).join(', ')}`),
      ).toEqual([]);
      expect(report.success).toBe(true);
    }
  });

  it('each acknowledgement answers a real finding, and says why', () => {
    for (const { app } of apps) {
      const acknowledged = acknowledgements(app);
      const found = new Set(rawFindings(app));
      expect([...found].sort()).toEqual([...acknowledged.keys()].filter((id) => id.startsWith('AwsSolutions-')).sort());
      for (const [, reason] of acknowledged) expect(reason.length).toBeGreaterThan(60);
    }
  });

  it('leaves no CDK error or warning annotation', () => {
    for (const { stack } of apps) {
      expect(Annotations.fromStack(stack).findError('*', Match.anyValue())).toEqual([]);
      expect(Annotations.fromStack(stack).findWarning('*', Match.anyValue())).toEqual([]);
    }
  });

  it('runs in the app itself, so `cdk synth` fails on a new finding', () => {
    const { app, stack } = buildApp({ context: { ...CDK_JSON.context, ...NO_BUNDLING }, outdir: outdir() });
    new sqs.Queue(stack, 'Careless'); // no enforceSSL, no DLQ
    expect(() => app.synth()).toThrow(/AwsSolutions-SQS4/);
  });
});
