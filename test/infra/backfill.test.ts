/**
 * The backfill's state machine (infra/constructs/catalog-backfill.ts) as `-c catalog-sync:backfill=true` builds
 * it: the definition (reader, batcher, concurrency, retries, tolerance, the loop, the finish step), validated by
 * asl-validator; least-privilege IAM; the alarm; cdk-nag; and the default app's template unchanged. The construct
 * alone in another app: backfill-construct.test.ts.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import validator from 'asl-validator';
import { MAX_BATCH_INPUT_BYTES, MAX_RANGE_ITEM_BYTES } from '../../lambda/contract/index.js';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  acknowledgements,
  definitionOf,
  normalized,
  only,
  rawFindings,
  roleStatements,
  synth,
  wildcardProblems,
  type Json,
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

  it("reads the ranges file (JSON array) from the planner's Bucket/Key, batches with the backfill id, 24 at once, no failure tolerated", () => {
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
      expect.objectContaining({
        ErrorEquals: ['Lambda.TooManyRequestsException', 'Lambda.EC2ThrottledException'],
        BackoffRate: 2,
        JitterStrategy: 'FULL',
      }),
      expect.objectContaining({
        ErrorEquals: expect.arrayContaining(['Lambda.ServiceException']),
        BackoffRate: 2,
        JitterStrategy: 'FULL',
        MaxAttempts: 6,
      }),
      expect.objectContaining({ ErrorEquals: ['States.ALL'], BackoffRate: 2, JitterStrategy: 'FULL', MaxAttempts: 3 }),
    ]);
    expect(run).toMatchObject({
      ResultPath: '$.result',
      ResultSelector: { 'done.$': '$.Payload.done' },
      Next: 'BatchDone?',
    });
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
    for (const name of ['Plan', 'Finish'])
      expect(definition.States[name].Retry[0]).toMatchObject({ BackoffRate: 2, JitterStrategy: 'FULL' });
  });

  it('retries Finish on any error with backoff, then gives the lease back (Release) and fails; a refused second start ends in AlreadyRunning', () => {
    const finish = definition.States.Finish;
    expect(finish.Retry.at(-1)).toEqual({
      ErrorEquals: ['States.ALL'],
      IntervalSeconds: 10,
      BackoffRate: 2,
      MaxAttempts: 3,
      JitterStrategy: 'FULL',
    });
    expect(finish.Catch).toEqual([{ ErrorEquals: ['States.ALL'], ResultPath: '$.failure', Next: 'Release' }]);
    // The error Step Functions sees is the code (the handlers name their errors by it), as the docs say.
    expect(definition.States.Plan.Catch).toEqual([
      { ErrorEquals: ['CS_ERR_BACKFILL_RUNNING'], ResultPath: '$.refused', Next: 'AlreadyRunning' },
    ]);
    expect(definition.States.AlreadyRunning).toMatchObject({ Type: 'Succeed', OutputPath: '$.refused' });
  });

  it('retries Lambda throttles for about 20 minutes on every task, before any other retrier can take them', () => {
    const tasks = [
      definition.States.Plan,
      definition.States.Finish,
      definition.States.Release,
      processor.States.RunBatch,
    ];
    for (const task of tasks) {
      const throttle = task.Retry[0];
      expect(throttle.ErrorEquals).toContain('Lambda.TooManyRequestsException');
      for (const later of task.Retry.slice(1))
        expect(later.ErrorEquals).not.toContain('Lambda.TooManyRequestsException');
      // The longest the retrier can wait in all (before jitter, which only shortens it).
      let waited = 0;
      for (let attempt = 0; attempt < throttle.MaxAttempts; attempt++)
        waited += Math.min(throttle.IntervalSeconds * throttle.BackoffRate ** attempt, throttle.MaxDelaySeconds);
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
    expect(map.ItemBatcher.MaxInputBytesPerBatch).toBeGreaterThanOrEqual(
      map.ItemBatcher.MaxItemsPerBatch * MAX_RANGE_ITEM_BYTES,
    );
    // The map writes its children's results to S3 (its output is then only where they went, and is discarded).
    expect(map.ResultWriter).toEqual({
      Resource: 'arn:aws:states:::s3:putObject',
      Parameters: { Bucket: 'snapshot-bucket', Prefix: 'nuget/backfill/map-runs/' },
    });
    expect(map.ResultPath).toBeNull();
    // A failed map gives the lease back, then fails with the map's error.
    expect(map.Catch).toEqual([{ ErrorEquals: ['States.ALL'], ResultPath: '$.failure', Next: 'Release' }]);
    expect(definition.States.Release).toMatchObject({
      Parameters: { 'backfillId.$': '$.backfillId', release: true },
      ResultPath: null,
      Next: 'Failed',
    });
    expect(definition.States.Failed).toMatchObject({
      Type: 'Fail',
      ErrorPath: '$.failure.Error',
      CausePath: '$.failure.Cause',
    });
  });

  it('least privilege: the ResultWriter may write (multipart) and read back under its results prefix only', () => {
    const [, machine] = only(s.resources, 'AWS::StepFunctions::StateMachine');
    const own = roleStatements(s.resources, machine.RoleArn['Fn::GetAtt'][0] as string).map(normalized);
    const writes = own.filter((st) => st.Action.includes('s3:PutObject'));
    expect(writes).toHaveLength(1);
    expect(writes[0]!.Action).toEqual([
      's3:AbortMultipartUpload',
      's3:GetObject',
      's3:ListMultipartUploadParts',
      's3:PutObject',
    ]);
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
    const mapPolicy = JSON.stringify(
      Object.values(s.resources)
        .filter((r) => r.Type === 'AWS::IAM::Policy')
        .map((r) => r.Properties.PolicyDocument),
    );
    expect(mapPolicy).toContain('states:StartExecution');
    expect(mapPolicy).toContain('states:DescribeExecution');
    expect(mapPolicy).toContain('states:StopExecution');
    // Only the execution logs' delivery actions, which have no resource-level permission (acknowledged for cdk-nag).
    expect(wildcardProblems(s.resources).filter((p) => /Backfill/.test(p))).toEqual([
      expect.stringMatching(/^BackfillStateMachineRoleDefaultPolicy\w+: (logs:\w+(, )?)+ on \*$/),
    ]);
  });

  it("least privilege: the worker writes its cursor's items and PutObject in the layout's folders and filter.json, reads filter.json and watermark.json, nothing else", () => {
    const [, worker] = only(s.resources, 'AWS::Lambda::Function', (p) => /backfill worker/.test(p.Description ?? ''));
    const statements = roleStatements(s.resources, worker.Role['Fn::GetAtt'][0]).map(normalized);
    const dynamo = statements.find((st) => st.Action.some((a: string) => a.startsWith('dynamodb:')))!;
    expect(dynamo.Action).toEqual(['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    expect(dynamo.Condition).toEqual({ 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['catalog-to-s3'] } });
    const s3 = statements
      .filter((st) => st.Action.some((a: string) => a.startsWith('s3:')))
      .map((st) => ({ actions: st.Action, resource: JSON.stringify(st.Resource) }));
    // PutObject in leaves/, commits/, quarantine/ and on filter.json (not the watermark: the finalizer's); its reads:
    // filter.json and watermark.json only, and ListBucket so that they answer 404 when missing (S3 answers 403 to a
    // role that may not list the bucket).
    expect(s3).toEqual([
      {
        actions: ['s3:PutObject'],
        resource: expect.stringMatching(
          /^\[\{.*\/nuget\/commits\/\*"\]\]\},\{.*\/nuget\/filter\.json"\]\]\},\{.*\/nuget\/leaves\/\*"\]\]\},\{.*\/nuget\/quarantine\/\*"\]\]\}\]$/,
        ),
      },
      {
        actions: ['s3:GetObject'],
        resource: expect.stringMatching(/\/nuget\/filter\.json"\]\]\},\{.*\/nuget\/watermark\.json"\]\]\}\]$/),
      },
      { actions: ['s3:ListBucket'], resource: JSON.stringify({ 'Fn::GetAtt': [bucketId(), 'Arn'] }) },
    ]);
    expect(worker).toMatchObject({ MemorySize: 1769, Timeout: 900, Architectures: ['arm64'] });
    expect(worker.Environment.Variables).toMatchObject({
      CURSOR_NAME: 'catalog-to-s3',
      SNAPSHOT_PREFIX: 'nuget/',
      CONCURRENCY: '32',
    });
  });

  it('least privilege: planner and finalizer write the ranges files, filter.json and watermark.json only, and read those; the follower may Query its plans', () => {
    const roleOf = (pattern: RegExp) =>
      only(s.resources, 'AWS::Lambda::Function', (p) => pattern.test(p.Description ?? ''))[1].Role[
        'Fn::GetAtt'
      ][0] as string;
    const s3Of = (role: string) =>
      roleStatements(s.resources, role)
        .map(normalized)
        .filter((st) => st.Action.some((a: string) => a.startsWith('s3:')))
        .map((st) => ({ actions: st.Action, resource: JSON.stringify(st.Resource) }));
    // filter.json and watermark.json, those two keys: read by all three (the filter check, the watermark never moved
    // back), written by these two (the first run on a mirror records the filter; B is the watermark).
    const stateKeys = expect.stringMatching(
      /^\[\{.*\/nuget\/filter\.json"\]\]\},\{.*\/nuget\/watermark\.json"\]\]\}\]$/,
    );
    const listBucket = { actions: ['s3:ListBucket'], resource: JSON.stringify({ 'Fn::GetAtt': [bucketId(), 'Arn'] }) };
    const planner = s3Of(roleOf(/backfill planner/));
    expect(planner).toEqual([
      { actions: ['s3:GetObject', 's3:PutObject'], resource: expect.stringMatching(/\/nuget\/backfill\/\*"\]\]\}$/) },
      { actions: ['s3:PutObject'], resource: stateKeys },
      { actions: ['s3:GetObject'], resource: stateKeys },
      listBucket,
    ]);
    const finalizer = s3Of(roleOf(/backfill finalizer/));
    expect(finalizer).toEqual([
      { actions: ['s3:PutObject'], resource: stateKeys },
      { actions: ['s3:GetObject'], resource: stateKeys },
      listBucket,
    ]);
    const follower = roleStatements(s.resources, roleOf(/^catalog-sync: cursor/)).map(normalized);
    expect(follower).toContainEqual(
      expect.objectContaining({
        Action: ['dynamodb:Query'],
        Condition: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['catalog-to-s3'] } },
      }),
    );
  });

  it('alarms on a failed, timed-out or aborted execution (a refused double start ends in a Succeed state: not counted)', () => {
    const [, alarm] = only(s.resources, 'AWS::CloudWatch::Alarm', (p) =>
      /backfill execution/.test(p.AlarmDescription ?? ''),
    );
    const names = (alarm.Metrics as Json[])
      .filter((m) => m.MetricStat)
      .map((m) => m.MetricStat.Metric.MetricName)
      .sort();
    expect(names).toEqual(['ExecutionsAborted', 'ExecutionsFailed', 'ExecutionsTimedOut']);
    expect(alarm).toMatchObject({
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'notBreaching',
    });
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
