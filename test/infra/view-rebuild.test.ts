/**
 * `CatalogSync`'s `viewRebuild` (issue 32): off by default (the app's `catalog-sync:view-rebuild` too), refused
 * without the view; on, the ViewRebuild state machine (Plan → Running? → Records → Indexes → Finish, Release on a
 * failure), each function's role least-privilege as the IAM evaluator reads it, cdk-nag clean, its alarm and graphs
 * on the dashboard. One synthesis for the file.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type * as iam from 'aws-cdk-lib/aws-iam';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { CatalogSync } from '../../infra/index.js';
import { appConfigFromContext } from '../../infra/config.js';
import { allows, type TemplateNames } from '../../testkit/iam-evaluator.js';
import {
  acknowledgements,
  NO_BUNDLING,
  outdir,
  rawFindings,
  roleStatements,
  type Json,
  type Resources,
} from './synth-kit.js';

const BUCKET = 'mirror-bucket';
const TABLE = 'cursor-table';
const PLAN_KEY = `consumer#s3://${BUCKET}/nuget/#view-latest`;

describe('CatalogSync viewRebuild', () => {
  let stack: Stack;
  let sync: CatalogSync;
  let resources: Resources;
  let names: TemplateNames;
  let definition: Json;
  let outputs: Record<string, { Value: unknown }>;

  beforeAll(() => {
    const app = new App({ context: NO_BUNDLING, outdir: outdir() });
    stack = new Stack(app, 'Rebuild');
    sync = new CatalogSync(stack, 'Sync', { prefix: 'nuget/', view: true, viewRebuild: true });
    const template = Template.fromStack(stack).toJSON();
    resources = template.Resources as Resources;
    outputs = template.Outputs as Record<string, { Value: unknown }>;
    const id = (construct: { node: { defaultChild?: unknown } }) =>
      stack.getLogicalId(construct.node.defaultChild as never);
    names = {
      region: 'us-east-1',
      account: '123456789012',
      tables: { [id(sync.table as never)]: TABLE },
      buckets: { [id(sync.bucket as never)]: BUCKET },
    };
    const [, machine] = Object.entries(resources).find(([, r]) => r.Type === 'AWS::StepFunctions::StateMachine')!;
    const parts = machine.Properties.DefinitionString['Fn::Join'][1] as unknown[];
    definition = JSON.parse(parts.map((part) => (typeof part === 'string' ? part : 'x')).join(''));
  });

  it('is off by default, in the construct and in the app; refused without the view', () => {
    const app = new App({ context: NO_BUNDLING, outdir: outdir() });
    expect(appConfigFromContext(app.node).viewRebuild).toBe(false);
    const on = new App({ context: { 'catalog-sync:view-rebuild': 'true' }, outdir: outdir() });
    expect(appConfigFromContext(on.node).viewRebuild).toBe(true);
    expect(() => new CatalogSync(new Stack(app, 'NoView'), 'Sync', { viewRebuild: true })).toThrow(
      /viewRebuild needs view: true/,
    );
    // The feed turns the view on, which is enough.
    const fed = new CatalogSync(new Stack(app, 'Fed'), 'Sync', { feed: {}, viewRebuild: true });
    expect(fed.viewRebuild).toBeDefined();
  });

  it('names its state machine in the output {outputPrefix}ViewRebuildStateMachineArn, as the sync names its others', () => {
    expect(Object.keys(outputs)).toContain('SyncViewRebuildStateMachineArn');
    expect(JSON.stringify(outputs.SyncViewRebuildStateMachineArn!.Value)).toContain('Ref');
  });

  it('Plan → Running? → Records → Indexes → Finish; AlreadyRunning a Succeed; Release on a failed map or Finish', () => {
    expect(definition.StartAt).toBe('Plan');
    expect(definition.States.Plan.Next).toBe('Running?');
    expect(definition.States['Running?'].Choices).toEqual([
      { Variable: '$.running', BooleanEquals: true, Next: 'AlreadyRunning' },
    ]);
    expect(definition.States.AlreadyRunning.Type).toBe('Succeed');
    expect(definition.States['Running?'].Default).toBe('Records');
    expect(definition.States.Records.Next).toBe('Indexes');
    expect(definition.States.Indexes.Next).toBe('Finish');
    for (const state of ['Records', 'Indexes', 'Finish'])
      expect(definition.States[state].Catch).toEqual([
        { ErrorEquals: ['States.ALL'], ResultPath: '$.failure', Next: 'Release' },
      ]);
    expect(definition.States.Finish.Retry.at(-1)).toMatchObject({ ErrorEquals: ['States.ALL'], MaxAttempts: 6 });
    expect(definition.States.Release.Next).toBe('Failed');
    expect(definition.States.Records.ItemBatcher.BatchInput).toMatchObject({ phase: 'records', passes: 0 });
    expect(definition.States.Indexes.ItemBatcher.BatchInput).toMatchObject({ phase: 'indexes', passes: 0 });
    expect(definition.States.Records.ItemReader.Parameters['Key.$']).toBe('$.rangesKey');
    expect(definition.States.Indexes.ItemReader.Parameters['Key.$']).toBe('$.shardsKey');
  });

  it('each role has exactly its calls: the worker writes packages/ and view-rebuild/ only, the planner no index, only view-rebuild/ is deleted', () => {
    const rebuild = sync.viewRebuild!;
    const statementsOf = (role: iam.IRole | undefined) =>
      roleStatements(resources, stack.getLogicalId(role!.node.defaultChild as never));
    const can = (statements: Json[], action: string, key: string) =>
      allows(statements, { action, resource: `arn:aws:s3:::${BUCKET}/${key}`, context: {}, why: key }, names);
    const worker = statementsOf(rebuild.worker.role);
    const planner = statementsOf(rebuild.planner.role);
    const finalizer = statementsOf(rebuild.finalizer.role);
    expect(can(worker, 's3:PutObject', 'nuget/packages/newtonsoft.json/index.json')).toBe(true);
    expect(can(worker, 's3:PutObject', 'nuget/view-rebuild/r1/records/3/0.jsonl')).toBe(true);
    expect(can(worker, 's3:GetObject', 'nuget/leaves/x/y.json')).toBe(true);
    expect(can(worker, 's3:PutObject', 'nuget/leaves/x/y.json')).toBe(false);
    expect(can(worker, 's3:PutObject', 'nuget/commits/0001.json')).toBe(false);
    expect(can(worker, 's3:PutObject', 'nuget/watermark.json')).toBe(false);
    expect(can(planner, 's3:PutObject', 'nuget/packages/newtonsoft.json/index.json')).toBe(false);
    expect(can(planner, 's3:PutObject', 'nuget/view-rebuild/r1/ranges.json')).toBe(true);
    for (const statements of [worker, planner, finalizer]) {
      expect(can(statements, 's3:DeleteObject', 'nuget/packages/newtonsoft.json/index.json')).toBe(false);
      expect(can(statements, 's3:DeleteObject', 'nuget/leaves/x/y.json')).toBe(false);
    }
    expect(can(worker, 's3:DeleteObject', 'nuget/view-rebuild/r1/records/3/0.jsonl')).toBe(false);
    expect(can(finalizer, 's3:DeleteObject', 'nuget/view-rebuild/r1/records/3/0.jsonl')).toBe(true);
    expect(can(finalizer, 's3:PutObject', 'nuget/packages/a/index.json')).toBe(false);
    const item = (statements: Json[], action: string, pk: string) =>
      allows(
        statements,
        {
          action,
          resource: `arn:aws:dynamodb:us-east-1:123456789012:table/${TABLE}`,
          context: { 'dynamodb:LeadingKeys': [pk] },
          why: pk,
        },
        names,
      );
    expect(item(worker, 'dynamodb:UpdateItem', PLAN_KEY)).toBe(true);
    expect(item(worker, 'dynamodb:PutItem', PLAN_KEY)).toBe(false);
    expect(item(finalizer, 'dynamodb:UpdateItem', PLAN_KEY)).toBe(true);
    expect(item(planner, 'dynamodb:PutItem', PLAN_KEY)).toBe(true);
    // The follower's cursor is not theirs.
    for (const statements of [worker, planner, finalizer])
      expect(item(statements, 'dynamodb:UpdateItem', 'catalog-sync')).toBe(false);
  });

  it('cdk-nag clean (every acknowledgement matches a finding); the alarm and the graphs on the dashboard', () => {
    expect(new AwsSolutionsChecks().validateScope(stack).violations.map((violation) => violation.ruleName)).toEqual([]);
    const findings = new Set(rawFindings(sync.viewRebuild!));
    for (const id of acknowledgements(sync.viewRebuild!).keys()) expect(findings, id).toContain(id);
    const dashboard = Object.values(resources).find((resource) => resource.Type === 'AWS::CloudWatch::Dashboard')!;
    const body = JSON.stringify(dashboard.Properties.DashboardBody);
    expect(body).toContain('View rebuild executions');
    expect(body).toContain('ManifestsRead');
    expect(body).toContain('catalog-sync-view-rebuild');
    expect(
      Object.values(resources)
        .filter((r) => r.Type === 'AWS::CloudWatch::Alarm')
        .map((r) => JSON.stringify(r)),
    ).toContainEqual(expect.stringContaining('a view rebuild execution failed'));
  });
});
