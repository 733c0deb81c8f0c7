/**
 * What the infra tests share: the app as `cdk synth` builds it from cdk.json (with `-c`-style overrides), and
 * walks over its template: resources by type, every policy statement, the no-wildcard rule, cdk-nag's findings
 * and acknowledgements. Apps synthesize under one temporary folder per test file, removed after it.
 */
import { readFileSync } from 'node:fs';
import { App, Stack, type AppProps } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { expect } from 'vitest';
import { buildApp } from '../../infra/app.js';
import { outdir } from '../../testkit/synth-folder.js';
import { CatalogSync, type CatalogSyncProps, type CatalogSyncStack } from '../../infra/index.js';

/** Where an app synthesizes (one folder per test file, removed after it). */
export { outdir };

const ROOT = new URL('../../', import.meta.url);
export const CDK_JSON = JSON.parse(readFileSync(new URL('cdk.json', ROOT), 'utf8')) as {
  app: string;
  context: Record<string, unknown>;
};
/** Skips asset bundling (esbuild) for apps whose bundle is not under test. */
export const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };
/**
 * App props that skip aws-cdk-lib's CloudFormation validation of the synthesized templates (its WebAssembly rule
 * engine: about 5 CPU-s to start in each process, then a share of every synthesis), for the integration tests that
 * only read a template whose app the infra tests synthesize with it on.
 */
export const NO_TEMPLATE_VALIDATION = { builtinCloudFormationValidation: false } as const satisfies AppProps;

export type Json = Record<string, any>;
export type Resources = Record<
  string,
  { Type: string; Properties: Json; DeletionPolicy?: string; UpdateReplacePolicy?: string }
>;

export interface Synthesized {
  app: App;
  stack: CatalogSyncStack;
  template: Template;
  resources: Resources;
}

/**
 * The app exactly as `cdk synth` builds it: cdk.json's context, plus `-c`-style overrides. `validate: false` skips
 * the CloudFormation validation of its template ({@link NO_TEMPLATE_VALIDATION}).
 */
export function synth(
  overrides: Record<string, unknown> = {},
  { bundle = false, validate = true }: { bundle?: boolean; validate?: boolean } = {},
): Synthesized {
  const context = { ...CDK_JSON.context, ...(bundle ? {} : NO_BUNDLING), ...overrides };
  const { app, stack } = buildApp({
    context,
    outdir: outdir(),
    ...(validate ? {} : NO_TEMPLATE_VALIDATION),
  } satisfies AppProps);
  const template = Template.fromStack(stack);
  return { app, stack, template, resources: template.toJSON().Resources as Resources };
}

/** A `CatalogSync` of `props` alone in a stack (no bundling); its template's resources read when asked. */
export function syncStack(props: CatalogSyncProps, stackName = 'Syncs') {
  const app = new App({ context: NO_BUNDLING, outdir: outdir() });
  const stack = new Stack(app, stackName);
  const sync = new CatalogSync(stack, 'Sync', props);
  return { stack, sync, resources: () => Template.fromStack(stack).toJSON().Resources as Resources };
}

/** The resources of one type, with their logical ids. */
export function ofType(resources: Resources, type: string): Array<[string, Resources[string]]> {
  return Object.entries(resources).filter(([, resource]) => resource.Type === type);
}

/** The one resource of a type (matching `where`), asserted to be exactly one: its logical id and properties. */
export function only(
  resources: Resources,
  type: string,
  where: (properties: Json) => boolean = () => true,
): [string, Json] {
  const found = ofType(resources, type).filter(([, resource]) => where(resource.Properties));
  expect(found, `exactly one ${type}`).toHaveLength(1);
  return [found[0]![0], found[0]![1].Properties];
}

export const getAtt = (id: string, attribute = 'Arn') => ({ 'Fn::GetAtt': [id, attribute] });
export const ref = (id: string) => ({ Ref: id });
export const asArray = <T>(value: T | T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

/** Every statement of every policy in the template: identity policies and resource policies alike. */
export function statements(resources: Resources): Array<{ where: string; statement: Json }> {
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
export function roleStatements(resources: Resources, roleId: string): Json[] {
  return ofType(resources, 'AWS::IAM::Policy')
    .filter(([, policy]) => asArray(policy.Properties.Roles).some((role: Json) => role.Ref === roleId))
    .flatMap(([, policy]) => asArray(policy.Properties.PolicyDocument.Statement));
}

/** A statement without its Sid, actions as a sorted list: compare statements as sets. */
export function normalized(statement: Json): Json {
  const { Sid: _sid, ...rest } = statement;
  return { ...rest, Action: asArray(rest.Action).sort() };
}

const DATA_SERVICES = ['dynamodb', 's3', 'sqs', 'sns', 'logs', 'kms'];

/** The no-wildcard rule: no Allow grants `*` actions or service-wide wildcards, nor data actions on `*`. */
export function wildcardProblems(resources: Resources): string[] {
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
      if (typeof resource === 'string' && resource.includes('*') && resource !== '*')
        problems.push(`${where}: literal wildcard resource ${resource}`);
    }
  }
  return problems;
}

/** The acknowledgements (rule id → reason) recorded anywhere under `scope`. */
export function acknowledgements(scope: IConstruct): Map<string, string> {
  const found = new Map<string, string>();
  for (const construct of scope.node.findAll()) {
    for (const entry of construct.node.metadata) {
      if (entry.type !== 'aws:cdk:acknowledged-rules') continue;
      for (const [id, reason] of Object.entries(entry.data as Record<string, string>))
        found.set(id.replace(/^annotation::/i, ''), reason);
    }
  }
  return found;
}

/** cdk-nag's findings ignoring every acknowledgement: what the acknowledgements must answer, one for one. */
export function rawFindings(scope: IConstruct): string[] {
  const pack = new AwsSolutionsChecks();
  (pack as unknown as { isAcknowledged: () => boolean }).isAcknowledged = () => false;
  return pack.validateScope(scope).violations.map((violation) => violation.ruleName);
}

/**
 * The state machine's definition with its tokens replaced by plausible values: what Step Functions receives at
 * deploy time. Functions become `arn:aws:lambda:us-east-1:123456789012:function:<logical id>`, the snapshot bucket
 * `bucket`.
 */
export function definitionOf(s: Synthesized, bucket = 'snapshot-bucket'): Json {
  const [, props] = only(s.resources, 'AWS::StepFunctions::StateMachine');
  const parts = props.DefinitionString['Fn::Join'][1] as unknown[];
  const text = parts
    .map((part) => {
      if (typeof part === 'string') return part;
      const p = part as Json;
      if (p.Ref === 'AWS::Partition') return 'aws';
      if (typeof p.Ref === 'string' && /Snapshots/.test(p.Ref)) return bucket;
      if (p['Fn::GetAtt']) return `arn:aws:lambda:us-east-1:123456789012:function:${p['Fn::GetAtt'][0]}`;
      throw new Error(`unexpected token ${JSON.stringify(part)}`);
    })
    .join('');
  return JSON.parse(text) as Json;
}
