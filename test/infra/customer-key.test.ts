/**
 * A snapshot bucket encrypted with a customer key (`bucket.encryptionKey`): every function that reads the mirror holds
 * `kms:Decrypt` of that key, and every one that writes to it the key's encrypt actions. S3 needs them on AWS (a GET of
 * an SSE-KMS object is refused without Decrypt, a PUT without GenerateDataKey); s3rver never asks.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { fileURLToPath } from 'node:url';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { CatalogBackfill, CatalogConsumer, CatalogSync } from '../../infra/index.js';
import { NO_BUNDLING, ofType, outdir, roleStatements, type Resources } from './synth-kit.js';

const ENTRY = fileURLToPath(new URL('./fixtures/consumer-entry.ts', import.meta.url));

describe('a snapshot bucket with a customer key', () => {
  const app = new App({ context: NO_BUNDLING, outdir: outdir() });
  const stack = new Stack(app, 'Keyed');
  const key = new kms.Key(stack, 'Key', { enableKeyRotation: true });
  const bucket = new s3.Bucket(stack, 'Mirror', {
    encryption: s3.BucketEncryption.KMS,
    encryptionKey: key,
    enforceSSL: true,
  });
  const sync = new CatalogSync(stack, 'Sync', { prefix: 'nuget/', bucket, view: true, feed: {} });
  const consumer = new CatalogConsumer(stack, 'Indexer', { sync, consumerName: 'search-indexer', entry: ENTRY });
  const backfill = new CatalogBackfill(stack, 'Backfill', { table: sync.table, bucket, settings: sync.settings });
  const resources = Template.fromStack(stack).toJSON().Resources as Resources;
  const keyArn = { 'Fn::GetAtt': [stack.getLogicalId(key.node.defaultChild as kms.CfnKey), 'Arn'] };
  /** The KMS actions a function's role holds on the bucket's key. */
  const kmsOf = (fn: lambda.IFunction): string[] => {
    const roleId = resources[stack.getLogicalId(fn.node.defaultChild as lambda.CfnFunction)]!.Properties.Role[
      'Fn::GetAtt'
    ][0] as string;
    return roleStatements(resources, roleId)
      .filter((statement) => JSON.stringify(statement.Resource) === JSON.stringify(keyArn))
      .flatMap((statement) => [statement.Action].flat() as string[])
      .filter((action) => action.startsWith('kms:'))
      .sort();
  };

  it('the readers may decrypt with it: the follower (its filter and watermark), the consumers, the backfill', () => {
    for (const fn of [
      sync.function,
      consumer.function,
      sync.view!.function,
      backfill.planner,
      backfill.worker,
      backfill.finalizer,
    ]) {
      expect(kmsOf(fn), fn.node.path).toContain('kms:Decrypt');
    }
  });

  it('the writers may make data keys with it (the follower, the view, the backfill); a plain consumer only decrypts', () => {
    expect(kmsOf(sync.function)).toEqual(['kms:Decrypt', 'kms:GenerateDataKey']);
    expect(kmsOf(sync.view!.function)).toEqual(['kms:Decrypt', 'kms:GenerateDataKey']);
    expect(kmsOf(consumer.function)).toEqual(['kms:Decrypt']);
    for (const fn of [backfill.planner, backfill.worker, backfill.finalizer])
      expect(kmsOf(fn), fn.node.path).toEqual(['kms:Decrypt', 'kms:GenerateDataKey']);
  });

  it('no policy repeats a Sid (IAM refuses one that does)', () => {
    for (const [id, policy] of ofType(resources, 'AWS::IAM::Policy')) {
      const sids = (policy.Properties.PolicyDocument.Statement as { Sid?: string }[])
        .map((statement) => statement.Sid)
        .filter((sid) => sid !== undefined);
      expect(sids, id).toEqual([...new Set(sids)]);
    }
  });

  it("the feed's CloudFront may decrypt with it, for this account's distributions, and reads nuget/feed/ only", () => {
    const keyId = stack.getLogicalId(key.node.defaultChild as kms.CfnKey);
    const keyPolicy = resources[keyId]!.Properties.KeyPolicy.Statement as Record<string, unknown>[];
    const cloudFront = keyPolicy.filter((statement) => JSON.stringify(statement.Principal).includes('cloudfront'));
    expect(cloudFront).toEqual([
      {
        Effect: 'Allow',
        Principal: { Service: 'cloudfront.amazonaws.com' },
        Action: 'kms:Decrypt',
        Resource: '*',
        Condition: {
          StringEquals: { 'AWS:SourceAccount': { Ref: 'AWS::AccountId' } },
          ArnLike: {
            'AWS:SourceArn': {
              'Fn::Join': [
                '',
                ['arn:', { Ref: 'AWS::Partition' }, ':cloudfront::', { Ref: 'AWS::AccountId' }, ':distribution/*'],
              ],
            },
          },
        },
      },
    ]);
    const [distribution] = ofType(resources, 'AWS::CloudFront::Distribution');
    expect(distribution![1].Properties.DistributionConfig.Origins[0].OriginPath).toBe('/nuget/feed');
    const reads = ofType(resources, 'AWS::S3::BucketPolicy')
      .flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement as Record<string, any>[])
      .filter((statement) => statement.Action === 's3:GetObject');
    expect(reads.map((statement) => statement.Resource['Fn::Join'][1][1])).toEqual(['/nuget/feed/*']);
  });

  it("exact KMS actions for the sync's own functions: no cdk-nag finding about the key", () => {
    const findings = new AwsSolutionsChecks().validateScope(sync).violations.map((violation) => violation.ruleName);
    expect(findings.filter((finding) => /kms/i.test(finding))).toEqual([]);
  });
});
