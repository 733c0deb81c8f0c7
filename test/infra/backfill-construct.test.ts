/**
 * `CatalogBackfill` alone, in another app (infra/constructs/catalog-backfill.ts): its props, a bucket with a
 * customer key, a private feed's secret, reserved concurrency for the workers, the example of docs/deploy.md, and
 * the props it refuses, naming them.
 */
import { readFileSync } from 'node:fs';
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { CatalogBackfill, type CatalogBackfillProps } from '../../infra/index.js';
import * as kms from 'aws-cdk-lib/aws-kms';
import { describe, expect, it } from 'vitest';
import { NO_BUNDLING, normalized, outdir, only, roleStatements, type Json, type Resources } from './synth-kit.js';

describe('CatalogBackfill alone, in another app', () => {
  const build = (props: Partial<CatalogBackfillProps> = {}, { keyed = false } = {}) => {
    const app = new App({ context: NO_BUNDLING, outdir: outdir() });
    const stack = new Stack(app, 'Other');
    const table = new dynamodb.TableV2(stack, 'Table', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
    });
    const encryption = keyed ? { encryption: s3.BucketEncryption.KMS, encryptionKey: new kms.Key(stack, 'Key') } : {};
    const bucket = new s3.Bucket(stack, 'Bucket', encryption);
    const backfill = new CatalogBackfill(stack, 'Backfill', {
      table,
      bucket,
      cursorName: 'mine',
      source: 'https://feed.example/v3/index.json',
      ...props,
    });
    return { backfill, template: Template.fromStack(stack) };
  };

  it('takes its props: concurrency, batch size, worker memory and timeout, cursor, source', () => {
    const { template, backfill } = build({
      maxConcurrency: 10,
      batchSize: 2,
      workerMemorySize: 3008,
      workerTimeout: Duration.minutes(10),
      maxPasses: 5,
    });
    expect(backfill.cursorName).toBe('mine');
    const machine = Object.values(template.findResources('AWS::StepFunctions::StateMachine'))[0]!.Properties as Json;
    const text = (machine.DefinitionString['Fn::Join'][1] as unknown[])
      .filter((part) => typeof part === 'string')
      .join('');
    expect(text).toContain('"MaxConcurrency":10');
    expect(text).toContain('"MaxItemsPerBatch":2');
    expect(text).toContain('"NumericGreaterThanEquals":5');
    template.hasResourceProperties('AWS::Lambda::Function', {
      MemorySize: 3008,
      Timeout: 600,
      Environment: {
        Variables: Match.objectLike({
          CURSOR_NAME: 'mine',
          CATALOG_SOURCE: 'https://feed.example/v3/index.json',
          SNAPSHOT_PREFIX: '',
        }),
      },
    });
  });

  it('a bucket with a customer key: every function and the state machine may encrypt and decrypt with it', () => {
    const { template } = build({}, { keyed: true });
    const policies = Object.values(template.findResources('AWS::IAM::Policy')) as Json[];
    const keyed = policies
      .filter((p) => JSON.stringify(p.Properties.PolicyDocument).includes('kms:GenerateDataKey'))
      .map((p) => JSON.stringify(p.Properties.Roles));
    for (const role of ['PlannerRole', 'WorkerRole', 'FinalizerRole', 'StateMachineRole'])
      expect(keyed.join()).toContain(role);
  });

  it('a private feed: every function, the finalizer too (it reads the head past an until), may read the secret it is given', () => {
    const secret = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:catalog-sync/feed-AbCdEf';
    const app = new App({ context: NO_BUNDLING, outdir: outdir() });
    const stack = new Stack(app, 'Private');
    const table = new dynamodb.TableV2(stack, 'Table', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
    });
    const sourceSecret = secretsmanager.Secret.fromSecretCompleteArn(stack, 'Feed', secret);
    new CatalogBackfill(stack, 'Backfill', {
      table,
      bucket: new s3.Bucket(stack, 'Bucket'),
      cursorName: 'mine',
      source: 'https://feed.example/v3/index.json',
      sourceSecret,
    });
    const resources = Template.fromStack(stack).toJSON().Resources as Resources;
    for (const name of ['planner', 'worker', 'finalizer']) {
      const [, fn] = only(resources, 'AWS::Lambda::Function', (p) =>
        new RegExp(`backfill ${name}`).test(p.Description ?? ''),
      );
      expect(fn.Environment.Variables.SOURCE_SECRET_ARN, name).toBe(secret);
      const statements = roleStatements(resources, fn.Role['Fn::GetAtt'][0]).map(normalized);
      expect(statements, name).toContainEqual({
        Effect: 'Allow',
        Action: ['secretsmanager:GetSecretValue'],
        Resource: secret,
      });
    }
  });

  it('reserved concurrency for the workers, when asked, at least maxConcurrency', () => {
    const { template } = build({ maxConcurrency: 10, workerReservedConcurrency: 12 });
    template.hasResourceProperties('AWS::Lambda::Function', {
      ReservedConcurrentExecutions: 12,
      Description: Match.stringLikeRegexp('backfill worker'),
    });
    expect(() => build({ maxConcurrency: 10, workerReservedConcurrency: 5 })).toThrow(
      /workerReservedConcurrency must be a whole number from 10/,
    );
  });

  it('the example of docs/deploy.md ("Use it alone") names only real props, and builds', () => {
    const docs = readFileSync(new URL('../../docs/deploy.md', import.meta.url), 'utf8');
    const example = /new CatalogBackfill\(stack, 'Backfill', \{([\s\S]*?)\n\}\);/.exec(
      docs.slice(docs.indexOf('**Use it alone:**')),
    )![1]!;
    // Its keys (`key:`), and the shorthand `table, bucket,` of its first line.
    const text = example.replace(/\/\/.*$/gm, '');
    const named = [...text.matchAll(/\b([A-Za-z]+):/g)]
      .map((m) => m[1])
      .concat(['table', 'bucket'].filter((n) => new RegExp(`\\b${n},`).test(text)));
    // The same props, typed: `npm run typecheck` refuses a key that CatalogBackfillProps does not have.
    const asWritten = {
      prefix: 'nuget/',
      cursorName: 'catalog-to-s3',
      settings: {},
      maxConcurrency: 48,
      batchSize: 4,
      workerMemorySize: 1769,
      workerReservedConcurrency: 48,
    } satisfies Partial<CatalogBackfillProps>;
    expect(new Set(named)).toEqual(new Set(['table', 'bucket', 'alarmTopic', ...Object.keys(asWritten)]));
    const { template } = build(asWritten);
    template.hasResourceProperties('AWS::Lambda::Function', { ReservedConcurrentExecutions: 48 });
  });

  it('refuses props it cannot deploy, naming them', () => {
    expect(() => build({ maxConcurrency: 0 })).toThrow(/maxConcurrency must be a whole number from 1 to 1000/);
    expect(() => build({ batchSize: 101 })).toThrow(/batchSize/);
    expect(() => build({ workerTimeout: Duration.minutes(16) })).toThrow(/workerTimeout/);
    expect(() => build({ prefix: 'a*/' })).toThrow(/prefix/);
    expect(() => build({ settings: { CONCURRENCY: 'many' } })).toThrow(/CONCURRENCY/);
    expect(() => build({ runtime: lambda.Runtime.NODEJS_20_X })).toThrow(/runtime/);
  });
});
