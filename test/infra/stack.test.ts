/**
 * The CDK app, as `cdk synth` builds it from cdk.json: template assertions for every item of issue 5, the
 * least-privilege IAM walk, two syncs in one app, and cdk-nag (AwsSolutions) with every acknowledgement used.
 * Each describe synthesizes its app once.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { App, Duration, Stack, type AppProps } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../infra/app.js';
import { CatalogSync, type CatalogSyncStack } from '../../infra/index.js';

const ROOT = new URL('../../', import.meta.url);
const CDK_JSON = JSON.parse(readFileSync(new URL('cdk.json', ROOT), 'utf8')) as { app: string; context: Record<string, unknown> };
/** Where this file's apps synthesize: without an outdir, each App leaves a cdk.outXXXX folder in the system's temp. */
const OUT = mkdtempSync(join(tmpdir(), 'catalog-sync-stack-test-'));
afterAll(() => rmSync(OUT, { recursive: true, force: true }));
const outdir = (): string => mkdtempSync(join(OUT, 'app-'));

/** Skips asset bundling (esbuild) for apps whose bundle is not under test. */
const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

type Json = Record<string, any>;
type Resources = Record<string, { Type: string; Properties: Json; DeletionPolicy?: string; UpdateReplacePolicy?: string }>;

interface Synthesized {
  app: App;
  stack: CatalogSyncStack;
  template: Template;
  resources: Resources;
}

/** The app exactly as `cdk synth` builds it: cdk.json's context, plus `-c`-style overrides. */
function synth(overrides: Record<string, unknown> = {}, { bundle = false }: { bundle?: boolean } = {}): Synthesized {
  const context = { ...CDK_JSON.context, ...(bundle ? {} : NO_BUNDLING), ...overrides };
  const { app, stack } = buildApp({ context, outdir: outdir() } satisfies AppProps);
  const template = Template.fromStack(stack);
  return { app, stack, template, resources: template.toJSON().Resources as Resources };
}

function ofType(resources: Resources, type: string): Array<[string, Resources[string]]> {
  return Object.entries(resources).filter(([, resource]) => resource.Type === type);
}

function only(resources: Resources, type: string, where: (properties: Json) => boolean = () => true): [string, Json] {
  const found = ofType(resources, type).filter(([, resource]) => where(resource.Properties));
  expect(found, `exactly one ${type}`).toHaveLength(1);
  return [found[0]![0], found[0]![1].Properties];
}

const getAtt = (id: string, attribute = 'Arn') => ({ 'Fn::GetAtt': [id, attribute] });
const ref = (id: string) => ({ Ref: id });
const asArray = <T>(value: T | T[] | undefined): T[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/** Every statement of every policy in the template: identity policies and resource policies alike. */
function statements(resources: Resources): Array<{ where: string; statement: Json }> {
  const all: Array<{ where: string; statement: Json }> = [];
  const add = (where: string, document: Json | undefined) => {
    for (const statement of asArray(document?.Statement)) all.push({ where, statement });
  };
  for (const [id, resource] of Object.entries(resources)) {
    const p = resource.Properties ?? {};
    switch (resource.Type) {
      case 'AWS::IAM::Policy':
      case 'AWS::IAM::ManagedPolicy':
      case 'AWS::S3::BucketPolicy':
      case 'AWS::SQS::QueuePolicy':
      case 'AWS::SNS::TopicPolicy':
        add(id, p.PolicyDocument);
        break;
      case 'AWS::IAM::Role':
        add(`${id} (trust)`, p.AssumeRolePolicyDocument);
        for (const inline of asArray(p.Policies as Json[])) add(`${id} (inline)`, inline.PolicyDocument);
        break;
    }
  }
  return all;
}

/** The identity-policy statements attached to a role. */
function roleStatements(resources: Resources, roleId: string): Json[] {
  return ofType(resources, 'AWS::IAM::Policy')
    .filter(([, policy]) => asArray(policy.Properties.Roles).some((role: Json) => role.Ref === roleId))
    .flatMap(([, policy]) => asArray(policy.Properties.PolicyDocument.Statement));
}

/** A statement without its Sid, actions as a sorted list: compare statements as sets. */
function normalized(statement: Json): Json {
  const { Sid: _sid, ...rest } = statement;
  return { ...rest, Action: asArray(rest.Action).sort() };
}

const DATA_SERVICES = ['dynamodb', 's3', 'sqs', 'sns', 'logs', 'kms'];

/** The no-wildcard rule: no Allow grants `*` actions or service-wide wildcards, nor data actions on `*`. */
function wildcardProblems(resources: Resources): string[] {
  const problems: string[] = [];
  for (const { where, statement } of statements(resources)) {
    if (statement.Effect !== 'Allow') continue; // the TLS-only Deny statements use s3:* / sqs:* on purpose
    const actions = asArray<string>(statement.Action);
    if (statement.NotAction || statement.NotResource) problems.push(`${where}: NotAction/NotResource`);
    for (const action of actions) {
      if (action === '*' || /^[a-z0-9-]+:\*$/i.test(action)) problems.push(`${where}: grants ${action}`);
      else if (action.includes('*')) problems.push(`${where}: wildcard action ${action}`);
    }
    if (where.endsWith('(trust)')) continue;
    const dataActions = actions.filter((action) => DATA_SERVICES.includes(action.split(':')[0]!));
    for (const resource of asArray(statement.Resource)) {
      if (resource === '*' && dataActions.length > 0) problems.push(`${where}: ${dataActions.join(', ')} on *`);
      if (typeof resource === 'string' && resource.includes('*') && resource !== '*') problems.push(`${where}: literal wildcard resource ${resource}`);
    }
  }
  return problems;
}

/** The acknowledgements (rule id → reason) recorded anywhere under `scope`. */
function acknowledgements(scope: IConstruct): Map<string, string> {
  const found = new Map<string, string>();
  for (const construct of scope.node.findAll()) {
    for (const entry of construct.node.metadata) {
      if (entry.type !== 'aws:cdk:acknowledged-rules') continue;
      for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) found.set(id.replace(/^annotation::/i, ''), reason);
    }
  }
  return found;
}

/** cdk-nag's findings ignoring every acknowledgement: what the acknowledgements must answer, one for one. */
function rawFindings(scope: IConstruct): string[] {
  const pack = new AwsSolutionsChecks();
  (pack as unknown as { isAcknowledged: () => boolean }).isAcknowledged = () => false;
  return pack.validateScope(scope).violations.map((violation) => violation.ruleName);
}

describe('the app from cdk.json (one sync, bundled)', () => {
  let s: Synthesized;
  let ids: { table: string; bucket: string; logsBucket: string; fn: string; role: string; dlq: string; logGroup: string; schedule: string };

  beforeAll(() => {
    s = synth({}, { bundle: true });
    const r = s.resources;
    const [fn, fnProps] = only(r, 'AWS::Lambda::Function');
    const [bucket] = only(r, 'AWS::S3::Bucket', (p) => p.VersioningConfiguration !== undefined);
    const [logsBucket] = only(r, 'AWS::S3::Bucket', (p) => p.VersioningConfiguration === undefined);
    const [schedule] = only(r, 'AWS::Events::Rule', (p) => p.ScheduleExpression !== undefined);
    const dlq = (fnProps.Environment && ofType(r, 'AWS::Lambda::EventInvokeConfig')[0]![1].Properties.DestinationConfig.OnFailure.Destination['Fn::GetAtt'][0]) as string;
    ids = {
      table: only(r, 'AWS::DynamoDB::Table')[0],
      bucket,
      logsBucket,
      fn,
      role: fnProps.Role['Fn::GetAtt'][0],
      dlq,
      logGroup: fnProps.LoggingConfig.LogGroup.Ref,
      schedule,
    };
  });

  it('has exactly the expected resources: no custom resource, no helper function, one role', () => {
    const types = Object.values(s.resources).map((resource) => resource.Type);
    expect(types.filter((type) => type.startsWith('Custom::') || type === 'AWS::CloudFormation::CustomResource')).toEqual([]);
    s.template.resourceCountIs('AWS::Lambda::Function', 1);
    s.template.resourceCountIs('AWS::IAM::Role', 1);
    s.template.resourceCountIs('AWS::DynamoDB::Table', 1);
    s.template.resourceCountIs('AWS::S3::Bucket', 2); // snapshots and their access logs
    s.template.resourceCountIs('AWS::SQS::Queue', 3); // run DLQ, commit queue, commit DLQ
    s.template.resourceCountIs('AWS::CloudWatch::Alarm', 4);
    s.template.resourceCountIs('AWS::SNS::Topic', 0); // no topic unless asked for
  });

  it('DynamoDB table: pk/sk strings, on-demand, point-in-time recovery, TTL on expiresAt, retained', () => {
    s.template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: {
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        AttributeDefinitions: Match.arrayWith([
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
        ]),
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
        DeletionProtectionEnabled: true,
      },
    });
    const table = s.resources[ids.table]!.Properties;
    expect(table.GlobalSecondaryIndexes).toBeUndefined(); // recent runs are one Query, no index
    expect(table.ProvisionedThroughput).toBeUndefined();
  });

  it('S3 bucket: public access blocked, encrypted, versioned, retained, logged, EventBridge on', () => {
    const bucket = s.resources[ids.bucket]!;
    expect(bucket.DeletionPolicy).toBe('Retain');
    expect(bucket.UpdateReplacePolicy).toBe('Retain');
    expect(bucket.Properties).toMatchObject({
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      VersioningConfiguration: { Status: 'Enabled' },
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
      NotificationConfiguration: { EventBridgeConfiguration: { EventBridgeEnabled: true } },
      LoggingConfiguration: { DestinationBucketName: ref(ids.logsBucket), LogFilePrefix: 'snapshots/' },
    });
    expect(bucket.Properties.LifecycleConfiguration.Rules).toEqual(
      expect.arrayContaining([expect.objectContaining({ NoncurrentVersionExpiration: { NoncurrentDays: 30 }, Status: 'Enabled' })]),
    );
  });

  it('S3 bucket policy: TLS only (aws:SecureTransport and TLS 1.2), on the bucket and its objects', () => {
    const [, policy] = only(s.resources, 'AWS::S3::BucketPolicy', (p) => p.Bucket.Ref === ids.bucket);
    const denies = asArray<Json>(policy.PolicyDocument.Statement).filter((statement) => statement.Effect === 'Deny');
    const bucketAndObjects = [getAtt(ids.bucket), { 'Fn::Join': ['', [getAtt(ids.bucket), '/*']] }];
    expect(denies).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Action: 's3:*', Principal: { AWS: '*' }, Condition: { Bool: { 'aws:SecureTransport': 'false' } }, Resource: bucketAndObjects }),
        expect.objectContaining({ Action: 's3:*', Principal: { AWS: '*' }, Condition: { NumericLessThan: { 's3:TlsVersion': 1.2 } }, Resource: bucketAndObjects }),
      ]),
    );
    expect(asArray<Json>(policy.PolicyDocument.Statement).filter((statement) => statement.Effect === 'Allow')).toEqual([]);
  });

  it('access-logs bucket: private, TLS only, expiring, written by the logging service through a bucket policy (no ACL)', () => {
    const logs = s.resources[ids.logsBucket]!;
    expect(logs.DeletionPolicy).toBe('Retain');
    expect(logs.Properties.AccessControl).toBeUndefined();
    expect(logs.Properties).toMatchObject({
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
      LifecycleConfiguration: { Rules: [expect.objectContaining({ ExpirationInDays: 90 })] },
    });
    const [, policy] = only(s.resources, 'AWS::S3::BucketPolicy', (p) => p.Bucket.Ref === ids.logsBucket);
    expect(policy.PolicyDocument.Statement).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Effect: 'Allow', Principal: { Service: 'logging.s3.amazonaws.com' }, Action: 's3:PutObject' }),
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      ]),
    );
  });

  it('function: NodejsFunction on Node.js 22+, arm64, 1024 MB, 5 minutes, ESM handler, own log group with retention', () => {
    const fn = s.resources[ids.fn]!.Properties;
    expect(Number(/^nodejs(\d+)\.x$/.exec(fn.Runtime)?.[1])).toBeGreaterThanOrEqual(22);
    expect(fn).toMatchObject({ Architectures: ['arm64'], MemorySize: 1024, Timeout: 300, Handler: 'index.handler' });
    expect(fn.ReservedConcurrentExecutions).toBeUndefined();
    s.template.hasResource('AWS::Logs::LogGroup', { Properties: { RetentionInDays: 30 }, DeletionPolicy: 'Retain' });
    expect(fn.LoggingConfig.LogGroup).toEqual(ref(ids.logGroup));
  });

  it('function environment: exactly the contract settings, the table, the bucket, Powertools and source maps', () => {
    expect(s.resources[ids.fn]!.Properties.Environment.Variables).toEqual({
      CATALOG_SOURCE: 'https://api.nuget.org/v3/index.json',
      CURSOR_NAME: 'catalog-to-s3',
      DEPENDS_ON: '',
      CURSOR_TABLE: ref(ids.table),
      SNAPSHOT_BUCKET: ref(ids.bucket),
      SNAPSHOT_PREFIX: '',
      START_CURSOR: '0001-01-01T00:00:00Z',
      MAX_COMMITS: '5000',
      MAX_LEAVES: '20000',
      CONCURRENCY: '32',
      QUARANTINE: 'false',
      ALLOWED_ORIGINS: '',
      RUN_LOG_DAYS: '30',
      POWERTOOLS_SERVICE_NAME: 'catalog-sync-catalog-to-s3',
      POWERTOOLS_METRICS_NAMESPACE: 'CatalogSync',
      NODE_OPTIONS: '--enable-source-maps',
    });
  });

  it('bundle: an ESM file made by the local esbuild, SDK inside, that loads on Node and names a missing setting', async () => {
    const assembly = s.app.synth();
    const manifest = JSON.parse(readFileSync(join(assembly.directory, `${s.stack.artifactId}.assets.json`), 'utf8')) as {
      files: Record<string, { source: { path: string; packaging?: string } }>;
    };
    const zips = Object.values(manifest.files).filter((file) => file.source.packaging === 'zip');
    expect(zips).toHaveLength(1);
    const dir = join(assembly.directory, zips[0]!.source.path);
    const code = readFileSync(join(dir, 'index.mjs'), 'utf8');
    expect(code.startsWith("import { createRequire as __catalogSyncRequire } from 'node:module'; const require = __catalogSyncRequire(import.meta.url);")).toBe(true);
    expect(code).not.toMatch(/from\s*["']@aws-sdk\//); // bundled, not taken from the runtime
    expect(readFileSync(join(dir, 'index.mjs.map'), 'utf8')).toContain('"mappings"');
    const probe = `import(${JSON.stringify(join(dir, 'index.mjs'))}).then((m) => m.handler({}, { getRemainingTimeInMillis: () => 60000 })).then(() => console.log('RESOLVED'), (e) => console.log('REJECTED', e.name, e.message))`;
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', probe], { env, timeout: 30_000 });
    expect(stdout).toContain('REJECTED SettingsError CURSOR_TABLE');
  });

  it('schedule: every 5 minutes, no retry, short event age, undeliverable ticks to the DLQ', () => {
    const rule = s.resources[ids.schedule]!.Properties;
    expect(rule.ScheduleExpression).toBe('rate(5 minutes)');
    expect(rule.State).toBe('ENABLED');
    expect(rule.Targets).toEqual([
      expect.objectContaining({
        Arn: getAtt(ids.fn),
        RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 120 },
        DeadLetterConfig: { Arn: getAtt(ids.dlq) },
      }),
    ]);
    s.template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      Principal: 'events.amazonaws.com',
      FunctionName: getAtt(ids.fn),
      SourceArn: getAtt(ids.schedule),
    });
  });

  it('failed runs: no async retry, the same short age, on-failure destination to the encrypted TLS-only DLQ', () => {
    s.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: ref(ids.fn),
      Qualifier: '$LATEST',
      MaximumRetryAttempts: 0,
      MaximumEventAgeInSeconds: 120,
      DestinationConfig: { OnFailure: { Destination: getAtt(ids.dlq) } },
    });
    expect(s.resources[ids.dlq]!.Properties).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 86_400 });
    const [, policy] = only(s.resources, 'AWS::SQS::QueuePolicy', (p) => p.Queues.some((q: Json) => q.Ref === ids.dlq));
    expect(policy.PolicyDocument.Statement).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Effect: 'Deny', Action: 'sqs:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        expect.objectContaining({
          Effect: 'Allow',
          Action: 'sqs:SendMessage',
          Principal: { Service: 'events.amazonaws.com' },
          Condition: { ArnEquals: { 'aws:SourceArn': getAtt(ids.schedule) } },
        }),
      ]),
    );
  });

  it('IAM: the function role holds exactly the calls the code makes, on exactly its resources', () => {
    const role = s.resources[ids.role]!.Properties;
    expect(role.ManagedPolicyArns).toBeUndefined();
    expect(role.Policies).toBeUndefined();
    expect(role.AssumeRolePolicyDocument.Statement).toEqual([
      { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } },
    ]);
    const own = { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['catalog-to-s3'] } };
    expect(roleStatements(s.resources, ids.role).map(normalized)).toEqual(
      expect.arrayContaining(
        [
          { Effect: 'Allow', Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Resource: getAtt(ids.logGroup) },
          { Effect: 'Allow', Action: ['dynamodb:GetItem'], Resource: getAtt(ids.table), Condition: own },
          { Effect: 'Allow', Action: ['dynamodb:PutItem', 'dynamodb:UpdateItem'], Resource: getAtt(ids.table), Condition: own },
          { Effect: 'Allow', Action: ['s3:PutObject'], Resource: { 'Fn::Join': ['', [getAtt(ids.bucket), '/*']] } },
          { Effect: 'Allow', Action: ['sqs:SendMessage'], Resource: getAtt(ids.dlq) },
        ].map(normalized),
      ),
    );
    expect(roleStatements(s.resources, ids.role)).toHaveLength(5);
  });

  it('IAM: no statement anywhere grants dynamodb:*, s3:* or any wildcard action, nor data actions on *', () => {
    expect(statements(s.resources).length).toBeGreaterThan(10);
    expect(wildcardProblems(s.resources)).toEqual([]);
  });

  it('the IAM walk does catch what it forbids', () => {
    const bad: Resources = {
      P: {
        Type: 'AWS::IAM::Policy',
        Properties: {
          PolicyDocument: {
            Statement: [
              { Effect: 'Allow', Action: 'dynamodb:*', Resource: { 'Fn::GetAtt': ['T', 'Arn'] } },
              { Effect: 'Allow', Action: ['s3:GetObject'], Resource: '*' },
              { Effect: 'Allow', Action: 's3:Put*', Resource: 'arn:aws:s3:::b/*' },
            ],
          },
        },
      },
    };
    expect(wildcardProblems(bad)).toEqual([
      'P: grants dynamodb:*',
      'P: s3:GetObject on *',
      'P: wildcard action s3:Put*',
      'P: literal wildcard resource arn:aws:s3:::b/*',
    ]);
  });

  it('alarms: errors, dead letters, cursor lag (EMF), no successful run; on the sync\'s service dimension', () => {
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
    expect(rule.Targets).toEqual([expect.objectContaining({ Arn: getAtt(queueId), DeadLetterConfig: { Arn: getAtt(commitDlq) } })]);
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

  it('outputs what operators and consumers need', () => {
    const outputs = Object.keys(s.template.toJSON().Outputs as Json);
    for (const name of ['CursorTable', 'SnapshotBucket', 'FunctionName', 'DeadLetterQueueUrl', 'CommitQueueUrl', 'CommitQueueArn', 'LogGroup']) {
      expect(outputs).toContain(name);
    }
  });

  it('is environment-agnostic: no account, region nor lookups', () => {
    expect(s.stack.environment).toBe('aws://unknown-account/unknown-region');
    expect(s.app.node.tryGetContext('availability-zones:account=unknown-account:region=unknown-region')).toBeUndefined();
  });
});

describe('two syncs in one app: the second follows the first one\'s cursor, in its table and bucket', () => {
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
    s.template.resourceCountIs('AWS::CloudWatch::Alarm', 8);
    expect(second.table).toBe(first.table);
    expect(second.bucket).toBe(first.bucket);
  });

  it('the second depends on the first cursor, under its own prefix, with its own metrics service', () => {
    const env = (sync: CatalogSync) => s.resources[id(sync.function)]!.Properties.Environment.Variables as Json;
    const table = ref(id(first.table));
    const bucket = ref(id(first.bucket));
    expect(env(first)).toMatchObject({ CURSOR_NAME: 'catalog-to-s3', DEPENDS_ON: '', SNAPSHOT_PREFIX: 'nuget/', CURSOR_TABLE: table, SNAPSHOT_BUCKET: bucket, POWERTOOLS_SERVICE_NAME: 'catalog-sync-catalog-to-s3' });
    expect(env(first).CATALOG_SOURCE).toBe('https://feed.example/v3/index.json');
    expect(env(second).CATALOG_SOURCE).toBe('https://feed.example/v3/index.json'); // the same catalog by default
    expect(env(second)).toMatchObject({ CURSOR_NAME: 'mirror', DEPENDS_ON: 'catalog-to-s3', SNAPSHOT_PREFIX: 'mirror/', CURSOR_TABLE: table, SNAPSHOT_BUCKET: bucket, POWERTOOLS_SERVICE_NAME: 'catalog-sync-mirror', CONCURRENCY: '8' });
  });

  it('IAM: each reads its own and its dependencies\' cursors, writes only its own items, puts only under its prefix', () => {
    const roleId = (sync: CatalogSync) => id(sync.function.role as iam.Role);
    const keys = (names: string[]) => ({ 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': names } });
    const tableArn = getAtt(id(first.table));
    const objects = (prefix: string) => ({ 'Fn::Join': ['', [getAtt(id(first.bucket)), `/${prefix}*`]] });
    const of = (sync: CatalogSync) => roleStatements(s.resources, roleId(sync)).map(normalized);
    expect(of(second)).toEqual(
      expect.arrayContaining([
        { Effect: 'Allow', Action: ['dynamodb:GetItem'], Resource: tableArn, Condition: keys(['mirror', 'catalog-to-s3']) },
        { Effect: 'Allow', Action: ['dynamodb:PutItem', 'dynamodb:UpdateItem'], Resource: tableArn, Condition: keys(['mirror']) },
        { Effect: 'Allow', Action: ['s3:PutObject'], Resource: objects('mirror/') },
      ]),
    );
    expect(of(first)).toEqual(
      expect.arrayContaining([
        { Effect: 'Allow', Action: ['dynamodb:GetItem'], Resource: tableArn, Condition: keys(['catalog-to-s3']) },
        { Effect: 'Allow', Action: ['dynamodb:PutItem', 'dynamodb:UpdateItem'], Resource: tableArn, Condition: keys(['catalog-to-s3']) },
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
    expect(() => synth({ 'catalog-sync:second:cursorName': 'mirror' })).toThrow(/prefix "mirror\/" overlaps prefix "" of .*own prefix/);
  });

  it('takes its own bucket when asked, then any prefixes do', () => {
    const own = synth({ 'catalog-sync:second:cursorName': 'mirror', 'catalog-sync:second:ownBucket': 'true', 'catalog-sync:second:prefix': '' });
    own.template.resourceCountIs('AWS::DynamoDB::Table', 1);
    own.template.resourceCountIs('AWS::S3::Bucket', 4);
  });

  it('refuses two syncs on one cursor name in one table', () => {
    expect(() => synth({ 'catalog-sync:prefix': 'a/', 'catalog-sync:second:cursorName': 'catalog-to-s3', 'catalog-sync:second:dependsOn': 'x' })).toThrow(
      /cursor "catalog-to-s3" is already followed by/,
    );
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
    s.template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: ref(topicId) });
    s.template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
    const alarms = ofType(s.resources, 'AWS::CloudWatch::Alarm').map(([, alarm]) => alarm.Properties);
    expect(alarms).toHaveLength(4);
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
    existing.template.allResourcesProperties('AWS::CloudWatch::Alarm', { AlarmActions: ['arn:aws:sns:eu-west-1:123456789012:ops'] });
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
    expect(fn.Environment.Variables).toMatchObject({ QUARANTINE: 'true', ALLOWED_ORIGINS: 'https://a.example,https://b.example', DEPENDS_ON: 'upstream' });
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
    [{ 'catalog-sync:memorySize': '1769' }, /catalog-sync:memorySize: not a setting of this app; did you mean catalog-sync:memoryMb\?/],
    [{ 'catalog-sync:second:concurency': '4', 'catalog-sync:second:cursorName': 'search' }, /did you mean catalog-sync:second:concurrency\?/],
    [{ 'catalog-sync:second:concurrency': '4' }, /catalog-sync:second:concurrency: there is no second sync; set catalog-sync:second:cursorName/],
    [{ 'catalog-sync:zzzzzzzzzzzz': 'x' }, /catalog-sync:zzzzzzzzzzzz: not a setting of this app \(see README/],
  ])('refuses %j at synth time, naming the setting', (overrides, message) => {
    expect(() => synth(overrides)).toThrow(message);
  });
});

describe('the construct in another app', () => {
  it('works with no props at all, and grants an operator read access to its cursor and run log', () => {
    const app = new App({ context: NO_BUNDLING, outdir: outdir() });
    const stack = new Stack(app, 'Theirs');
    const sync = new CatalogSync(stack, 'Sync');
    const operator = new iam.Role(stack, 'Operator', { assumedBy: new iam.AccountRootPrincipal() });
    sync.grantStatusRead(operator);
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: stack.getLogicalId(operator.node.defaultChild as iam.CfnRole) }],
      PolicyDocument: {
        Statement: [
          {
            Effect: 'Allow',
            Action: ['dynamodb:GetItem', 'dynamodb:Query'],
            Resource: { 'Fn::GetAtt': [stack.getLogicalId(sync.table.node.defaultChild as any), 'Arn'] },
            Condition: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['catalog-to-s3'] } },
          },
        ],
      },
    });
    // Access logs through a bucket policy even without the feature flag in this app's context.
    expect(Object.values(template.toJSON().Resources as Resources).some((r) => r.Properties?.AccessControl)).toBe(false);
  });

  it('uses a bucket given by name (no bucket created; its finding acknowledged), and refuses a runtime older than Node.js 22', () => {
    const app = new App({ context: NO_BUNDLING, outdir: outdir() });
    const stack = new Stack(app, 'Theirs');
    const bucket = s3.Bucket.fromBucketName(stack, 'Bucket', 'their-bucket');
    new CatalogSync(stack, 'Sync', { bucket, prefix: 'nuget/', schedule: Duration.minutes(10) });
    const template = Template.fromStack(stack);
    expect(new AwsSolutionsChecks().validateScope(stack).violations).toEqual([]);
    expect(rawFindings(stack).sort()).toEqual(['AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::their-bucket/nuget/*]', 'AwsSolutions-L1', 'AwsSolutions-SQS3']);
    template.resourceCountIs('AWS::S3::Bucket', 0);
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Action: 's3:PutObject', Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::their-bucket/nuget/*']] } }),
        ]),
      },
    });
    expect(() => new CatalogSync(new Stack(app, 'Old'), 'Sync', { runtime: lambda.Runtime.NODEJS_20_X })).toThrow(/Node.js 22 or newer/);
  });
});

describe('cdk-nag (AwsSolutions)', () => {
  let apps: Synthesized[];
  beforeAll(() => {
    apps = [
      synth(),
      synth({ 'catalog-sync:prefix': 'nuget/', 'catalog-sync:second:cursorName': 'mirror', 'catalog-sync:alarmEmails': 'ops@example.com' }),
    ];
  });

  it('reports no finding that is not acknowledged', () => {
    for (const { app } of apps) {
      const report = new AwsSolutionsChecks().validateScope(app);
      expect(report.violations.map((v) => `${v.ruleName} at ${v.violatingResources.map((r) => r.constructPath).join(', ')}`)).toEqual([]);
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
