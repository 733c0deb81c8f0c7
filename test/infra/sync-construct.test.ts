/**
 * `CatalogSync` in another app (infra/catalog-sync.ts): id filters, no props at all and an operator's read grant, a
 * bucket given by name, the runtime it refuses, and the stack outputs under its id. (The app's own syncs:
 * apps.test.ts and stack.test.ts.)
 */
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { CatalogSync } from '../../infra/index.js';
import { NO_BUNDLING, outdir, rawFindings, ref, type Resources } from './synth-kit.js';

describe('the construct in another app', () => {
  it("id filters: INCLUDE_IDS / EXCLUDE_IDS in the function's environment; a bad pattern fails the synth naming it", () => {
    const app = new App({ context: NO_BUNDLING, outdir: outdir() });
    const stack = new Stack(app, 'Filtered');
    new CatalogSync(stack, 'Sync', { includeIds: ['Newtonsoft.*', 'Microsoft.Extensions.*'], excludeIds: ['*.Tests'] });
    Template.fromStack(stack).hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({ INCLUDE_IDS: 'Newtonsoft.*,Microsoft.Extensions.*', EXCLUDE_IDS: '*.Tests' }),
      },
    });
    const other = new Stack(app, 'Bad');
    expect(() => new CatalogSync(other, 'Sync', { includeIds: ['Newtonsoft Json'] })).toThrow(
      /INCLUDE_IDS: "Newtonsoft Json" is not an id pattern/,
    );
  });

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
    expect(Object.values(template.toJSON().Resources as Resources).some((r) => r.Properties?.AccessControl)).toBe(
      false,
    );
  });

  it('uses a bucket given by name (no bucket created; its finding acknowledged), and refuses a runtime older than Node.js 22', () => {
    const app = new App({ context: NO_BUNDLING, outdir: outdir() });
    const stack = new Stack(app, 'Theirs');
    const bucket = s3.Bucket.fromBucketName(stack, 'Bucket', 'their-bucket');
    new CatalogSync(stack, 'Sync', { bucket, prefix: 'nuget/', schedule: Duration.minutes(10) });
    const template = Template.fromStack(stack);
    expect(new AwsSolutionsChecks().validateScope(stack).violations).toEqual([]);
    expect(rawFindings(stack).sort()).toEqual([
      'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::their-bucket/nuget/commits/*]',
      'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::their-bucket/nuget/leaves/*]',
      'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::their-bucket/nuget/quarantine/*]',
      'AwsSolutions-L1',
      'AwsSolutions-SQS3',
    ]);
    template.resourceCountIs('AWS::S3::Bucket', 0);
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: 's3:PutObject',
            Resource: Match.arrayWith([
              { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::their-bucket/nuget/leaves/*']] },
            ]),
          }),
        ]),
      },
    });
    expect(() => new CatalogSync(new Stack(app, 'Old'), 'Sync', { runtime: lambda.Runtime.NODEJS_20_X })).toThrow(
      /Node.js 22 or newer/,
    );
  });

  it('adds stack outputs naming its table, bucket, queues and dashboard, under its id (two syncs do not collide), or none when asked', () => {
    const app = new App({ context: NO_BUNDLING, outdir: outdir() });
    const stack = new Stack(app, 'Theirs');
    const sync = new CatalogSync(stack, 'Nuget-Sync', { prefix: 'nuget/' });
    new CatalogSync(stack, 'Other', {
      cursorName: 'other',
      table: sync.table,
      prefix: 'other/',
      commitEvents: false,
      dashboard: false,
    });
    new CatalogSync(stack, 'Quiet', {
      cursorName: 'quiet',
      table: sync.table,
      bucket: sync.bucket,
      prefix: 'quiet/',
      outputs: false,
    });
    const outputs = Template.fromStack(stack).toJSON().Outputs as Record<string, { Value: unknown }>;
    const names = [
      'CursorName',
      'CursorTable',
      'SnapshotBucket',
      'SnapshotPrefix',
      'FunctionName',
      'LogGroup',
      'DeadLetterQueueUrl',
      'DashboardName',
      'CommitQueueUrl',
      'CommitQueueArn',
    ];
    expect(Object.keys(outputs).sort()).toEqual(
      [...names.map((name) => `NugetSync${name}`), ...names.slice(0, 7).map((name) => `Other${name}`)].sort(),
    );
    const id = (construct: IConstruct) => stack.getLogicalId(construct.node.defaultChild as any);
    expect(outputs.NugetSyncSnapshotBucket!.Value).toEqual(ref(id(sync.bucket)));
    expect(outputs.NugetSyncCursorTable!.Value).toEqual(ref(id(sync.table)));
    expect(outputs.NugetSyncCommitQueueUrl!.Value).toEqual(ref(id(sync.commitQueue!)));
    expect(outputs.NugetSyncDashboardName!.Value).toEqual(ref(id(sync.dashboard!.dashboard)));
    expect(outputs.OtherSnapshotPrefix!.Value).toBe('other/');
  });
});
