/**
 * The backfill's state machine (infra/constructs/catalog-backfill.ts) as `-c catalog-sync:backfill=true` builds
 * it: the definition (reader, batcher, concurrency, retries, tolerance, the loop, the finish step), validated by
 * asl-validator; least-privilege IAM; the alarm; cdk-nag; and the default app's template unchanged.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import validator from 'asl-validator';
import { CatalogBackfill, type CatalogBackfillProps } from '../../infra/index.js';
import * as kms from 'aws-cdk-lib/aws-kms';
import { MAX_BATCH_INPUT_BYTES, MAX_RANGE_ITEM_BYTES } from '../../lambda/contract/index.js';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  acknowledgements,
  definitionOf,
  NO_BUNDLING,
  normalized,
  outdir,
  only,
  rawFindings,
  roleStatements,
  synth,
  wildcardProblems,
  type Json,
  type Resources,
  type Synthesized,
} from './synth-kit.js';

describe('the backfill state machine (-c catalog-sync:backfill=true)', () => {
  let s: Synthesized;
  let definition: Json;
  let map: Json;
  let processor: Json;

  beforeAll(() => {
    s = synth({ 'catalog-sync:backfill': true, 'catalog-sync:prefix': 'nuget/' });
    definition = definitionOf(s);
    map = definition.States.Ranges;
    processor = map.ItemProcessor;
  });
  const bucketId = () => only(s.resources, 'AWS::S3::Bucket', (p) => p.NotificationConfiguration !== undefined)[0];

  it('is a STANDARD state machine: Plan → Ranges (Distributed Map) → Finish, valid ASL', () => {
    const [, props] = only(s.resources, 'AWS::StepFunctions::StateMachine');
    expect(props.StateMachineType).toBe('STANDARD');
    expect(definition.StartAt).toBe('Plan');
    expect(definition.States.Plan.Next).toBe('Ranges');
    expect(map.Next).toBe('Finish');
    expect(definition.States.Finish).toMatchObject({ End: true, Parameters: { 'backfillId.$': '$.backfillId' } });
    // The planner gets the execution's input and the execution's id (the lease holder).
    expect(definition.States.Plan.Parameters).toEqual({ 'input.$': '$', 'execution.$': '$$.Execution.Id' });
    const result = validator(definition, { checkPaths: true, checkArn: true });
    expect(result.errorsText('\n')).toBe('');
    expect(result.isValid).toBe(true);
  });

  it('reads the ranges file (JSON array) from the planner\'s Bucket/Key, batches with the backfill id, 24 at once, no failure tolerated', () => {
    expect(map.Type).toBe('Map');
    expect(map.ItemReader).toEqual({
      Resource: 'arn:aws:states:::s3:getObject',
      ReaderConfig: { InputType: 'JSON' },
      Parameters: { 'Bucket.$': '$.bucket', 'Key.$': '$.rangesKey' },
    });
    // The lease's holder (the execution, as the planner returns it) rides along: a worker renews only its own lease.
    expect(map.ItemBatcher).toEqual({
      MaxItemsPerBatch: 4,
      MaxInputBytesPerBatch: MAX_BATCH_INPUT_BYTES,
      BatchInput: { 'backfillId.$': '$.backfillId', 'leaseHolder.$': '$.leaseHolder', passes: 0 },
    });
    expect(map.MaxConcurrency).toBe(24);
    expect(map.ToleratedFailurePercentage ?? 0).toBe(0);
    expect(map.ToleratedFailureCount).toBeUndefined();
    expect(map.ResultPath).toBeNull();
    expect(processor.ProcessorConfig).toEqual({ Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' });
  });

  it('retries the worker with backoff and jitter (Lambda service errors, then any worker error) and loops a not-done batch', () => {
    const run = processor.States.RunBatch;
    expect(processor.StartAt).toBe('RunBatch');
    expect(run.Retry).toEqual([
      expect.objectContaining({ ErrorEquals: ['Lambda.TooManyRequestsException', 'Lambda.EC2ThrottledException'], BackoffRate: 2, JitterStrategy: 'FULL' }),
      expect.objectContaining({ ErrorEquals: expect.arrayContaining(['Lambda.ServiceException']), BackoffRate: 2, JitterStrategy: 'FULL', MaxAttempts: 6 }),
      expect.objectContaining({ ErrorEquals: ['States.ALL'], BackoffRate: 2, JitterStrategy: 'FULL', MaxAttempts: 3 }),
    ]);
    expect(run).toMatchObject({ ResultPath: '$.result', ResultSelector: { 'done.$': '$.Payload.done' }, Next: 'BatchDone?' });
    expect(processor.States['BatchDone?']).toMatchObject({
      Choices: [
        { Variable: '$.result.done', BooleanEquals: true, Next: 'BatchDone' },
        { Variable: '$.BatchInput.passes', NumericGreaterThanEquals: 20, Next: 'TooManyPasses' },
      ],
      Default: 'Again',
    });
    expect(processor.States.Again).toMatchObject({ Type: 'Pass', Next: 'RunBatch' });
    expect(processor.States.Again.Parameters.BatchInput).toEqual({
      'backfillId.$': '$.BatchInput.backfillId',
      'leaseHolder.$': '$.BatchInput.leaseHolder',
      'passes.$': 'States.MathAdd($.BatchInput.passes, 1)',
    });
    for (const name of ['Plan', 'Finish']) expect(definition.States[name].Retry[0]).toMatchObject({ BackoffRate: 2, JitterStrategy: 'FULL' });
  });

  it('retries Finish on any error with backoff, then gives the lease back (Release) and fails; a refused second start ends in AlreadyRunning', () => {
    const finish = definition.States.Finish;
    expect(finish.Retry.at(-1)).toEqual({ ErrorEquals: ['States.ALL'], IntervalSeconds: 10, BackoffRate: 2, MaxAttempts: 3, JitterStrategy: 'FULL' });
    expect(finish.Catch).toEqual([{ ErrorEquals: ['States.ALL'], ResultPath: '$.failure', Next: 'Release' }]);
    // The error Step Functions sees is the code (the handlers name their errors by it), as the docs say.
    expect(definition.States.Plan.Catch).toEqual([{ ErrorEquals: ['CS_ERR_BACKFILL_RUNNING'], ResultPath: '$.refused', Next: 'AlreadyRunning' }]);
    expect(definition.States.AlreadyRunning).toMatchObject({ Type: 'Succeed', OutputPath: '$.refused' });
  });

  it('retries Lambda throttles for about 20 minutes on every task, before any other retrier can take them', () => {
    const tasks = [definition.States.Plan, definition.States.Finish, definition.States.Release, processor.States.RunBatch];
    for (const task of tasks) {
      const throttle = task.Retry[0];
      expect(throttle.ErrorEquals).toContain('Lambda.TooManyRequestsException');
      for (const later of task.Retry.slice(1)) expect(later.ErrorEquals).not.toContain('Lambda.TooManyRequestsException');
      // The longest the retrier can wait in all (before jitter, which only shortens it).
      let waited = 0;
      for (let attempt = 0; attempt < throttle.MaxAttempts; attempt++) waited += Math.min(throttle.IntervalSeconds * throttle.BackoffRate ** attempt, throttle.MaxDelaySeconds);
      expect(waited).toBeGreaterThanOrEqual(15 * 60);
      expect(waited).toBeLessThanOrEqual(30 * 60);
    }
  });

  it('size limits: a child ends with {done} only, a batch is bounded in bytes, the results go to S3 (256 KiB per state)', () => {
    // The child's last state keeps only the result: never the batch (up to MaxInputBytesPerBatch) it was given.
    expect(processor.States.BatchDone).toMatchObject({ Type: 'Succeed', OutputPath: '$.result' });
    expect(processor.States.RunBatch.ResultSelector).toEqual({ 'done.$': '$.Payload.done' });
    // A batch's input: bytes bounded well under 256 KiB, and at least the default batch of the largest range items.
    expect(map.ItemBatcher.MaxInputBytesPerBatch).toBeLessThanOrEqual(200 * 1024);
    expect(map.ItemBatcher.MaxInputBytesPerBatch).toBeGreaterThanOrEqual(map.ItemBatcher.MaxItemsPerBatch * MAX_RANGE_ITEM_BYTES);
    // The map writes its children's results to S3 (its output is then only where they went, and is discarded).
    expect(map.ResultWriter).toEqual({ Resource: 'arn:aws:states:::s3:putObject', Parameters: { Bucket: 'snapshot-bucket', Prefix: 'nuget/backfill/map-runs/' } });
    expect(map.ResultPath).toBeNull();
    // A failed map gives the lease back, then fails with the map's error.
    expect(map.Catch).toEqual([{ ErrorEquals: ['States.ALL'], ResultPath: '$.failure', Next: 'Release' }]);
    expect(definition.States.Release).toMatchObject({ Parameters: { 'backfillId.$': '$.backfillId', release: true }, ResultPath: null, Next: 'Failed' });
    expect(definition.States.Failed).toMatchObject({ Type: 'Fail', ErrorPath: '$.failure.Error', CausePath: '$.failure.Cause' });
  });

  it('least privilege: the ResultWriter may write (multipart) and read back under its results prefix only', () => {
    const [, machine] = only(s.resources, 'AWS::StepFunctions::StateMachine');
    const own = roleStatements(s.resources, machine.RoleArn['Fn::GetAtt'][0] as string).map(normalized);
    const writes = own.filter((st) => st.Action.includes('s3:PutObject'));
    expect(writes).toHaveLength(1);
    expect(writes[0]!.Action).toEqual(['s3:AbortMultipartUpload', 's3:GetObject', 's3:ListMultipartUploadParts', 's3:PutObject']);
    expect(JSON.stringify(writes[0]!.Resource)).toMatch(/\/nuget\/backfill\/map-runs\/\*"\]\]\}$/);
  });

  it('least privilege: the state machine invokes its three functions, reads only the ranges files and runs its own map', () => {
    const [, machine] = only(s.resources, 'AWS::StepFunctions::StateMachine');
    const role = machine.RoleArn['Fn::GetAtt'][0] as string;
    const own = roleStatements(s.resources, role).map(normalized);
    const invoke = own.find((st) => st.Action.includes('lambda:InvokeFunction'))!;
    expect(invoke.Action).toEqual(['lambda:InvokeFunction']);
    expect(JSON.stringify(invoke.Resource)).toMatch(/BackfillPlanner.*BackfillWorker|BackfillWorker.*BackfillPlanner/s);
    const read = own.find((st) => st.Action.includes('s3:GetObject'))!;
    expect(read.Action).toEqual(['s3:GetObject']);
    expect(JSON.stringify(read.Resource)).toContain('/nuget/backfill/*');
    const mapPolicy = JSON.stringify(Object.values(s.resources).filter((r) => r.Type === 'AWS::IAM::Policy').map((r) => r.Properties.PolicyDocument));
    expect(mapPolicy).toContain('states:StartExecution');
    expect(mapPolicy).toContain('states:DescribeExecution');
    expect(mapPolicy).toContain('states:StopExecution');
    // Only the execution logs' delivery actions, which have no resource-level permission (acknowledged for cdk-nag).
    expect(wildcardProblems(s.resources).filter((p) => /Backfill/.test(p))).toEqual([
      expect.stringMatching(/^BackfillStateMachineRoleDefaultPolicy\w+: (logs:\w+(, )?)+ on \*$/),
    ]);
  });

  it('least privilege: the worker writes its cursor\'s items and PutObject in the layout\'s folders and filter.json, reads filter.json and watermark.json, nothing else', () => {
    const [, worker] = only(s.resources, 'AWS::Lambda::Function', (p) => /backfill worker/.test(p.Description ?? ''));
    const statements = roleStatements(s.resources, worker.Role['Fn::GetAtt'][0]).map(normalized);
    const dynamo = statements.find((st) => st.Action.some((a: string) => a.startsWith('dynamodb:')))!;
    expect(dynamo.Action).toEqual(['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    expect(dynamo.Condition).toEqual({ 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['catalog-to-s3'] } });
    const s3 = statements.filter((st) => st.Action.some((a: string) => a.startsWith('s3:'))).map((st) => ({ actions: st.Action, resource: JSON.stringify(st.Resource) }));
    // PutObject in leaves/, commits/, quarantine/ and on filter.json (not the watermark: the finalizer's); its reads:
    // filter.json and watermark.json only, and ListBucket so that they answer 404 when missing (S3 answers 403 to a
    // role that may not list the bucket).
    expect(s3).toEqual([
      { actions: ['s3:PutObject'], resource: expect.stringMatching(/^\[\{.*\/nuget\/commits\/\*"\]\]\},\{.*\/nuget\/filter\.json"\]\]\},\{.*\/nuget\/leaves\/\*"\]\]\},\{.*\/nuget\/quarantine\/\*"\]\]\}\]$/) },
      { actions: ['s3:GetObject'], resource: expect.stringMatching(/\/nuget\/filter\.json"\]\]\},\{.*\/nuget\/watermark\.json"\]\]\}\]$/) },
      { actions: ['s3:ListBucket'], resource: JSON.stringify({ 'Fn::GetAtt': [bucketId(), 'Arn'] }) },
    ]);
    expect(worker).toMatchObject({ MemorySize: 1769, Timeout: 900, Architectures: ['arm64'] });
    expect(worker.Environment.Variables).toMatchObject({ CURSOR_NAME: 'catalog-to-s3', SNAPSHOT_PREFIX: 'nuget/', CONCURRENCY: '32' });
  });

  it('least privilege: planner and finalizer write the ranges files, filter.json and watermark.json only, and read those; the follower may Query its plans', () => {
    const roleOf = (pattern: RegExp) => only(s.resources, 'AWS::Lambda::Function', (p) => pattern.test(p.Description ?? ''))[1].Role['Fn::GetAtt'][0] as string;
    const s3Of = (role: string) =>
      roleStatements(s.resources, role)
        .map(normalized)
        .filter((st) => st.Action.some((a: string) => a.startsWith('s3:')))
        .map((st) => ({ actions: st.Action, resource: JSON.stringify(st.Resource) }));
    // filter.json and watermark.json, those two keys: read by all three (the filter check, the watermark never moved
    // back), written by these two (the first run on a mirror records the filter; B is the watermark).
    const stateKeys = expect.stringMatching(/^\[\{.*\/nuget\/filter\.json"\]\]\},\{.*\/nuget\/watermark\.json"\]\]\}\]$/);
    const listBucket = { actions: ['s3:ListBucket'], resource: JSON.stringify({ 'Fn::GetAtt': [bucketId(), 'Arn'] }) };
    const planner = s3Of(roleOf(/backfill planner/));
    expect(planner).toEqual([
      { actions: ['s3:GetObject', 's3:PutObject'], resource: expect.stringMatching(/\/nuget\/backfill\/\*"\]\]\}$/) },
      { actions: ['s3:PutObject'], resource: stateKeys },
      { actions: ['s3:GetObject'], resource: stateKeys },
      listBucket,
    ]);
    const finalizer = s3Of(roleOf(/backfill finalizer/));
    expect(finalizer).toEqual([{ actions: ['s3:PutObject'], resource: stateKeys }, { actions: ['s3:GetObject'], resource: stateKeys }, listBucket]);
    const follower = roleStatements(s.resources, roleOf(/^catalog-sync: cursor/)).map(normalized);
    expect(follower).toContainEqual(
      expect.objectContaining({ Action: ['dynamodb:Query'], Condition: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['catalog-to-s3'] } } }),
    );
  });

  it('alarms on a failed, timed-out or aborted execution (a refused double start ends in a Succeed state: not counted)', () => {
    const [, alarm] = only(s.resources, 'AWS::CloudWatch::Alarm', (p) => /backfill execution/.test(p.AlarmDescription ?? ''));
    const names = (alarm.Metrics as Json[]).filter((m) => m.MetricStat).map((m) => m.MetricStat.Metric.MetricName).sort();
    expect(names).toEqual(['ExecutionsAborted', 'ExecutionsFailed', 'ExecutionsTimedOut']);
    expect(alarm).toMatchObject({ Threshold: 0, ComparisonOperator: 'GreaterThanThreshold', TreatMissingData: 'notBreaching' });
  });

  it('cdk-nag: every finding acknowledged with a reason, every acknowledgement answering a finding', () => {
    const findings = new Set(rawFindings(s.stack));
    const acks = acknowledgements(s.stack);
    for (const id of acks.keys()) expect(findings, id).toContain(id);
  });
});

describe('the default app', () => {
  it('has no backfill, and its template is byte for byte the fixture (test/infra/fixtures/default-template.json)', () => {
    const s = synth();
    const text = `${JSON.stringify(s.template.toJSON(), (key, value) => (key === 'S3Key' && typeof value === 'string' ? '<asset>.zip' : value), 1)}\n`;
    const fixture = new URL('./fixtures/default-template.json', import.meta.url);
    // A deliberate change of the default template: UPDATE_TEMPLATE_FIXTURE=1 npx vitest run test/infra/backfill.test.ts
    if (process.env.UPDATE_TEMPLATE_FIXTURE === '1') writeFileSync(fixture, text);
    expect(text).toBe(readFileSync(fixture, 'utf8'));
    expect(synth({ 'catalog-sync:backfill': false }).template.toJSON()).toEqual(s.template.toJSON());
  });

  it('refuses a misspelt flag', () => {
    expect(() => synth({ 'catalog-sync:backfil': true })).toThrow(/did you mean catalog-sync:backfill/);
  });
});

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
    const backfill = new CatalogBackfill(stack, 'Backfill', { table, bucket, cursorName: 'mine', source: 'https://feed.example/v3/index.json', ...props });
    return { backfill, template: Template.fromStack(stack) };
  };

  it('takes its props: concurrency, batch size, worker memory and timeout, cursor, source', () => {
    const { template, backfill } = build({ maxConcurrency: 10, batchSize: 2, workerMemorySize: 3008, workerTimeout: Duration.minutes(10), maxPasses: 5 });
    expect(backfill.cursorName).toBe('mine');
    const machine = Object.values(template.findResources('AWS::StepFunctions::StateMachine'))[0]!.Properties as Json;
    const text = (machine.DefinitionString['Fn::Join'][1] as unknown[]).filter((part) => typeof part === 'string').join('');
    expect(text).toContain('"MaxConcurrency":10');
    expect(text).toContain('"MaxItemsPerBatch":2');
    expect(text).toContain('"NumericGreaterThanEquals":5');
    template.hasResourceProperties('AWS::Lambda::Function', {
      MemorySize: 3008,
      Timeout: 600,
      Environment: { Variables: Match.objectLike({ CURSOR_NAME: 'mine', CATALOG_SOURCE: 'https://feed.example/v3/index.json', SNAPSHOT_PREFIX: '' }) },
    });
  });

  it('a bucket with a customer key: every function and the state machine may encrypt and decrypt with it', () => {
    const { template } = build({}, { keyed: true });
    const policies = Object.values(template.findResources('AWS::IAM::Policy')) as Json[];
    const keyed = policies
      .filter((p) => JSON.stringify(p.Properties.PolicyDocument).includes('kms:GenerateDataKey'))
      .map((p) => JSON.stringify(p.Properties.Roles));
    for (const role of ['PlannerRole', 'WorkerRole', 'FinalizerRole', 'StateMachineRole']) expect(keyed.join()).toContain(role);
  });

  it('a private feed: every function, the finalizer too (it reads the head past an until), may read the secret it is given', () => {
    const secret = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:catalog-sync/feed-AbCdEf';
    const app = new App({ context: NO_BUNDLING, outdir: outdir() });
    const stack = new Stack(app, 'Private');
    const table = new dynamodb.TableV2(stack, 'Table', { partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING }, sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING } });
    const sourceSecret = secretsmanager.Secret.fromSecretCompleteArn(stack, 'Feed', secret);
    new CatalogBackfill(stack, 'Backfill', { table, bucket: new s3.Bucket(stack, 'Bucket'), cursorName: 'mine', source: 'https://feed.example/v3/index.json', sourceSecret });
    const resources = Template.fromStack(stack).toJSON().Resources as Resources;
    for (const name of ['planner', 'worker', 'finalizer']) {
      const [, fn] = only(resources, 'AWS::Lambda::Function', (p) => new RegExp(`backfill ${name}`).test(p.Description ?? ''));
      expect(fn.Environment.Variables.SOURCE_SECRET_ARN, name).toBe(secret);
      const statements = roleStatements(resources, fn.Role['Fn::GetAtt'][0]).map(normalized);
      expect(statements, name).toContainEqual({ Effect: 'Allow', Action: ['secretsmanager:GetSecretValue'], Resource: secret });
    }
  });

  it('reserved concurrency for the workers, when asked, at least maxConcurrency', () => {
    const { template } = build({ maxConcurrency: 10, workerReservedConcurrency: 12 });
    template.hasResourceProperties('AWS::Lambda::Function', { ReservedConcurrentExecutions: 12, Description: Match.stringLikeRegexp('backfill worker') });
    expect(() => build({ maxConcurrency: 10, workerReservedConcurrency: 5 })).toThrow(/workerReservedConcurrency must be a whole number from 10/);
  });

  it('the example of docs/deploy.md ("Use it alone") names only real props, and builds', () => {
    const docs = readFileSync(new URL('../../docs/deploy.md', import.meta.url), 'utf8');
    const example = /new CatalogBackfill\(stack, 'Backfill', \{([\s\S]*?)\n\}\);/.exec(docs.slice(docs.indexOf('**Use it alone:**')))![1]!;
    // Its keys (`key:`), and the shorthand `table, bucket,` of its first line.
    const text = example.replace(/\/\/.*$/gm, '');
    const named = [...text.matchAll(/\b([A-Za-z]+):/g)].map((m) => m[1]).concat(['table', 'bucket'].filter((n) => new RegExp(`\\b${n},`).test(text)));
    // The same props, typed: `npm run typecheck` refuses a key that CatalogBackfillProps does not have.
    const asWritten = { prefix: 'nuget/', cursorName: 'catalog-to-s3', settings: {}, maxConcurrency: 48, batchSize: 4, workerMemorySize: 1769, workerReservedConcurrency: 48 } satisfies Partial<CatalogBackfillProps>;
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
