/**
 * The CDK app, as `cdk synth` builds it from cdk.json: template assertions for every item of issue 5 and the
 * least-privilege IAM walk, on one sync with its bundle. (Its alarms and commit events: stack-alarms-and-events.test.ts;
 * two syncs in one app, context parsing and cdk-nag: apps.test.ts; the construct in another app:
 * sync-construct.test.ts.) Each describe synthesizes its app once.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  asArray,
  getAtt,
  normalized,
  ofType,
  only,
  ref,
  roleStatements,
  statements,
  synth,
  wildcardProblems,
  type Json,
  type Resources,
  type Synthesized,
} from './synth-kit.js';

describe('the app from cdk.json (one sync, bundled)', () => {
  let s: Synthesized;
  let ids: {
    table: string;
    bucket: string;
    logsBucket: string;
    fn: string;
    role: string;
    dlq: string;
    logGroup: string;
    schedule: string;
  };

  beforeAll(() => {
    s = synth({}, { bundle: true });
    const r = s.resources;
    const [fn, fnProps] = only(r, 'AWS::Lambda::Function');
    const [bucket] = only(r, 'AWS::S3::Bucket', (p) => p.VersioningConfiguration !== undefined);
    const [logsBucket] = only(r, 'AWS::S3::Bucket', (p) => p.VersioningConfiguration === undefined);
    const [schedule] = only(r, 'AWS::Events::Rule', (p) => p.ScheduleExpression !== undefined);
    const dlq = (fnProps.Environment &&
      ofType(r, 'AWS::Lambda::EventInvokeConfig')[0]![1].Properties.DestinationConfig.OnFailure.Destination[
        'Fn::GetAtt'
      ][0]) as string;
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
    expect(
      types.filter((type) => type.startsWith('Custom::') || type === 'AWS::CloudFormation::CustomResource'),
    ).toEqual([]);
    s.template.resourceCountIs('AWS::Lambda::Function', 1);
    s.template.resourceCountIs('AWS::IAM::Role', 1);
    s.template.resourceCountIs('AWS::DynamoDB::Table', 1);
    s.template.resourceCountIs('AWS::S3::Bucket', 2); // snapshots and their access logs
    s.template.resourceCountIs('AWS::SQS::Queue', 3); // run DLQ, commit queue, commit DLQ
    s.template.resourceCountIs('AWS::CloudWatch::Alarm', 5); // the four of the sync and the commit-events DLQ's
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
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      },
      VersioningConfiguration: { Status: 'Enabled' },
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
      NotificationConfiguration: { EventBridgeConfiguration: { EventBridgeEnabled: true } },
      LoggingConfiguration: { DestinationBucketName: ref(ids.logsBucket), LogFilePrefix: 'snapshots/' },
    });
    expect(bucket.Properties.LifecycleConfiguration.Rules).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ NoncurrentVersionExpiration: { NoncurrentDays: 30 }, Status: 'Enabled' }),
      ]),
    );
  });

  it('S3 bucket policy: TLS only (aws:SecureTransport and TLS 1.2), on the bucket and its objects', () => {
    const [, policy] = only(s.resources, 'AWS::S3::BucketPolicy', (p) => p.Bucket.Ref === ids.bucket);
    const denies = asArray<Json>(policy.PolicyDocument.Statement).filter((statement) => statement.Effect === 'Deny');
    const bucketAndObjects = [getAtt(ids.bucket), { 'Fn::Join': ['', [getAtt(ids.bucket), '/*']] }];
    expect(denies).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          Action: 's3:*',
          Principal: { AWS: '*' },
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          Resource: bucketAndObjects,
        }),
        expect.objectContaining({
          Action: 's3:*',
          Principal: { AWS: '*' },
          Condition: { NumericLessThan: { 's3:TlsVersion': 1.2 } },
          Resource: bucketAndObjects,
        }),
      ]),
    );
    expect(asArray<Json>(policy.PolicyDocument.Statement).filter((statement) => statement.Effect === 'Allow')).toEqual(
      [],
    );
  });

  it('access-logs bucket: private, TLS only, expiring, written by the logging service through a bucket policy (no ACL)', () => {
    const logs = s.resources[ids.logsBucket]!;
    expect(logs.DeletionPolicy).toBe('Retain');
    expect(logs.Properties.AccessControl).toBeUndefined();
    expect(logs.Properties).toMatchObject({
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
      LifecycleConfiguration: { Rules: [expect.objectContaining({ ExpirationInDays: 90 })] },
    });
    const [, policy] = only(s.resources, 'AWS::S3::BucketPolicy', (p) => p.Bucket.Ref === ids.logsBucket);
    expect(policy.PolicyDocument.Statement).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          Effect: 'Allow',
          Principal: { Service: 'logging.s3.amazonaws.com' },
          Action: 's3:PutObject',
        }),
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      ]),
    );
  });

  it('function: NodejsFunction on Node.js 22+, arm64, 512 MB, 5 minutes, ESM handler, own log group with retention', () => {
    const fn = s.resources[ids.fn]!.Properties;
    expect(Number(/^nodejs(\d+)\.x$/.exec(fn.Runtime)?.[1])).toBeGreaterThanOrEqual(22);
    expect(fn).toMatchObject({ Architectures: ['arm64'], MemorySize: 512, Timeout: 300, Handler: 'index.handler' });
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
      MAX_COMMITS: '1000000',
      MAX_LEAVES: '1000000',
      CONCURRENCY: '32',
      QUARANTINE: 'false',
      ALLOWED_ORIGINS: '',
      RUN_LOG_DAYS: '30',
      POWERTOOLS_SERVICE_NAME: 'catalog-sync-catalog-to-s3',
      POWERTOOLS_METRICS_NAMESPACE: 'CatalogSync',
      NODE_OPTIONS: '--enable-source-maps',
    });
  });

  it('a run is bound by its time, not by MAX_COMMITS or MAX_LEAVES: a 15-minute function less its 30 s margin, at 600 leaves/s, a leaf a commit', () => {
    const env = s.resources[ids.fn]!.Properties.Environment.Variables as Record<string, string>;
    // The engine made 557-617 leaves/s on the bench (docs/performance.md); Lambda's longest timeout is 15 minutes.
    const longestRun = (900 - 30) * 600;
    expect(Number(env.MAX_LEAVES)).toBeGreaterThan(longestRun);
    expect(Number(env.MAX_COMMITS)).toBeGreaterThan(longestRun);
  });

  it('bundle: an ESM file made by the local esbuild, SDK inside, that loads on Node and names a missing setting', async () => {
    const assembly = s.app.synth();
    const manifest = JSON.parse(
      readFileSync(join(assembly.directory, `${s.stack.artifactId}.assets.json`), 'utf8'),
    ) as {
      files: Record<string, { source: { path: string; packaging?: string } }>;
    };
    const zips = Object.values(manifest.files).filter((file) => file.source.packaging === 'zip');
    expect(zips).toHaveLength(1);
    const dir = join(assembly.directory, zips[0]!.source.path);
    const code = readFileSync(join(dir, 'index.mjs'), 'utf8');
    expect(
      code.startsWith(
        "import { createRequire as __catalogSyncRequire } from 'node:module'; const require = __catalogSyncRequire(import.meta.url);",
      ),
    ).toBe(true);
    expect(code).not.toMatch(/from\s*["']@aws-sdk\//); // bundled, not taken from the runtime
    expect(readFileSync(join(dir, 'index.mjs.map'), 'utf8')).toContain('"mappings"');
    const probe = `import(${JSON.stringify(join(dir, 'index.mjs'))}).then((m) => m.handler({}, { getRemainingTimeInMillis: () => 60000 })).then(() => console.log('RESOLVED'), (e) => console.log('REJECTED', e.name, e.message))`;
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', probe], {
      env,
      timeout: 30_000,
    });
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
    expect(s.resources[ids.dlq]!.Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: 14 * 86_400,
    });
    const [, policy] = only(s.resources, 'AWS::SQS::QueuePolicy', (p) => p.Queues.some((q: Json) => q.Ref === ids.dlq));
    expect(policy.PolicyDocument.Statement).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          Effect: 'Deny',
          Action: 'sqs:*',
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
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
          {
            Effect: 'Allow',
            Action: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
            Resource: getAtt(ids.table),
            Condition: own,
          },
          // The follower's gate: the newest backfill plan of its own cursor.
          { Effect: 'Allow', Action: ['dynamodb:Query'], Resource: getAtt(ids.table), Condition: own },
          // Its writes: the layout's folders and its two state keys, not the whole bucket (the default prefix is empty).
          {
            Effect: 'Allow',
            Action: ['s3:PutObject'],
            Resource: ['/commits/*', '/filter.json', '/leaves/*', '/quarantine/*', '/watermark.json'].map((key) => ({
              'Fn::Join': ['', [getAtt(ids.bucket), key]],
            })),
          },
          // Its only reads: the mirror's id filter and its watermark (before each write), those two keys.
          {
            Effect: 'Allow',
            Action: ['s3:GetObject'],
            Resource: [
              { 'Fn::Join': ['', [getAtt(ids.bucket), '/filter.json']] },
              { 'Fn::Join': ['', [getAtt(ids.bucket), '/watermark.json']] },
            ],
          },
          // Both are missing on a fresh mirror: S3 answers 404 (not 403) only to a role that may list the bucket.
          { Effect: 'Allow', Action: ['s3:ListBucket'], Resource: getAtt(ids.bucket) },
          { Effect: 'Allow', Action: ['sqs:SendMessage'], Resource: getAtt(ids.dlq) },
        ].map(normalized),
      ),
    );
    expect(roleStatements(s.resources, ids.role)).toHaveLength(8);
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

  it('outputs what operators and consumers need', () => {
    const outputs = Object.keys(s.template.toJSON().Outputs as Json);
    for (const name of [
      'CursorTable',
      'SnapshotBucket',
      'FunctionName',
      'DeadLetterQueueUrl',
      'CommitQueueUrl',
      'CommitQueueArn',
      'LogGroup',
    ]) {
      expect(outputs).toContain(name);
    }
  });

  it('is environment-agnostic: no account, region nor lookups', () => {
    expect(s.stack.environment).toBe('aws://unknown-account/unknown-region');
    expect(
      s.app.node.tryGetContext('availability-zones:account=unknown-account:region=unknown-region'),
    ).toBeUndefined();
  });
});
