/**
 * A private feed's credentials in the CDK app (issue 10, item 6): the function gets the secret's ARN only
 * (`SOURCE_SECRET_ARN`), its role may read that one secret and nothing else, nothing of the value is in the
 * template, and a source URL embedding credentials is refused at synth without quoting them.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../infra/app.js';
import { CatalogSync, CatalogSyncPropsError } from '../../infra/index.js';

const CDK_JSON = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
  context: Record<string, unknown>;
};
const OUT = mkdtempSync(join(tmpdir(), 'catalog-sync-secret-test-'));
afterAll(() => rmSync(OUT, { recursive: true, force: true }));
/** Skips asset bundling (esbuild): the bundle is not under test here. */
const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:catalog-sync/feed-AbCdEf';
const KEY_ARN = 'arn:aws:kms:eu-west-1:123456789012:key/0b5f2a7e-1111-4222-8333-444455556666';
const PAT = 'pat7q2wzxkd4lmv9';

type Json = Record<string, any>;

/** The app as `cdk synth -c …` builds it from cdk.json, with its template and its functions' roles' statements. */
function synth(overrides: Record<string, unknown>) {
  const { app, stack } = buildApp({
    context: { ...CDK_JSON.context, ...NO_BUNDLING, ...overrides },
    outdir: mkdtempSync(join(OUT, 'app-')),
  });
  const template = Template.fromStack(stack).toJSON() as {
    Resources: Record<string, { Type: string; Properties: Json }>;
  };
  const of = (type: string) => Object.entries(template.Resources).filter(([, r]) => r.Type === type);
  /** Statements naming secretsmanager or kms actions, by role logical id. */
  const secretStatements = (roleId: string): Json[] =>
    of('AWS::IAM::Policy')
      .filter(([, p]) => p.Properties.Roles.some((role: Json) => role.Ref === roleId))
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement as Json[])
      .filter((s) => [s.Action].flat().some((action: string) => /^(secretsmanager|kms):/.test(action)));
  const functions = of('AWS::Lambda::Function').map(([, f]) => ({
    env: f.Properties.Environment.Variables as Json,
    description: f.Properties.Description as string,
    statements: secretStatements(f.Properties.Role['Fn::GetAtt'][0]),
  }));
  const nag = new AwsSolutionsChecks().validateScope(app).violations.map((v) => v.ruleName);
  return { app, stack, text: JSON.stringify(template), functions, nag };
}

describe('sourceSecret (context catalog-sync:sourceSecret)', () => {
  it('a source URL embedding credentials is refused at synth, naming the setting, quoting neither user nor token', () => {
    let error: unknown;
    try {
      synth({
        'catalog-sync:source': `https://build-bot:${PAT}@pkgs.dev.azure.com/org/_packaging/feed/nuget/v3/index.json?api=${PAT}`,
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(CatalogSyncPropsError);
    const { message } = error as Error;
    expect(message).toMatch(
      /^CatalogSync\/Sync: source \(CATALOG_SOURCE\) "https:\/\/REDACTED@pkgs\.dev\.azure\.com\/org\/_packaging\/feed\/nuget\/v3\/index\.json\?api=REDACTED" embeds credentials/,
    );
    expect(message).toContain('pass it as sourceSecret (context key catalog-sync:sourceSecret');
    expect(message).not.toContain(PAT);
    expect(message).not.toContain('build-bot');
  });

  it('by complete ARN: the function gets the ARN only; its role may GetSecretValue on that secret and nothing else', () => {
    const s = synth({
      'catalog-sync:source': 'https://pkgs.example/feed/v3/index.json',
      'catalog-sync:sourceSecret': ARN,
    });
    const [fn] = s.functions;
    expect(Object.keys(fn!.env).slice(0, 2)).toEqual(['CATALOG_SOURCE', 'SOURCE_SECRET_ARN']);
    expect(fn!.env.SOURCE_SECRET_ARN).toBe(ARN);
    expect(fn!.statements).toEqual([
      { Sid: 'ReadSourceSecret', Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: ARN },
    ]);
    // No dynamic reference: CloudFormation would resolve the value into the function's configuration.
    expect(s.text).not.toMatch(/resolve:secretsmanager/);
    expect(s.nag).toEqual([]);
  });

  it('by name with a customer key: "-??????" after the name (acknowledged), kms:Decrypt through Secrets Manager only', () => {
    const s = synth({
      'catalog-sync:source': 'https://pkgs.example/feed/v3/index.json',
      'catalog-sync:sourceSecret': 'catalog-sync/feed',
      'catalog-sync:sourceSecretKeyArn': KEY_ARN,
    });
    const arnStart = [
      'arn:',
      { Ref: 'AWS::Partition' },
      ':secretsmanager:',
      { Ref: 'AWS::Region' },
      ':',
      { Ref: 'AWS::AccountId' },
    ];
    const partial = { 'Fn::Join': ['', [...arnStart, ':secret:catalog-sync/feed']] };
    const [fn] = s.functions;
    expect(fn!.env.SOURCE_SECRET_ARN).toEqual(partial);
    const region = { 'Fn::Join': ['', ['secretsmanager.', { Ref: 'AWS::Region' }, '.amazonaws.com']] };
    expect(fn!.statements).toEqual([
      {
        Sid: 'ReadSourceSecret',
        Effect: 'Allow',
        Action: 'secretsmanager:GetSecretValue',
        Resource: { 'Fn::Join': ['', [...arnStart, ':secret:catalog-sync/feed-??????']] },
      },
      {
        Sid: 'DecryptSourceSecret',
        Effect: 'Allow',
        Action: 'kms:Decrypt',
        Resource: KEY_ARN,
        Condition: { StringEquals: { 'kms:ViaService': region } },
      },
    ]);
    expect(s.nag).toEqual([]);
  });

  it('a second sync on the same source reads the same secret; one with a source of its own does not', () => {
    const first = {
      'catalog-sync:source': 'https://pkgs.example/v3/index.json',
      'catalog-sync:sourceSecret': ARN,
      'catalog-sync:prefix': 'nuget/',
    };
    const shared = synth({ ...first, 'catalog-sync:second:cursorName': 'mirror' });
    expect(shared.functions.map((f) => f.env.SOURCE_SECRET_ARN)).toEqual([ARN, ARN]);
    expect(shared.functions.map((f) => f.statements.length)).toEqual([1, 1]);
    const own = synth({
      ...first,
      'catalog-sync:second:cursorName': 'public',
      'catalog-sync:second:source': 'https://api.nuget.org/v3/index.json',
    });
    expect(own.functions.map((f) => f.env.SOURCE_SECRET_ARN)).toEqual([ARN, undefined]);
    expect(own.functions.map((f) => f.statements.length)).toEqual([1, 0]);
  });

  it('an ISecret of their own app: the function holds a reference, never the value', () => {
    const app = new App({ context: NO_BUNDLING, outdir: mkdtempSync(join(OUT, 'app-')) });
    const stack = new Stack(app, 'Theirs');
    const secret = new secretsmanager.Secret(stack, 'Feed', {
      generateSecretString: { secretStringTemplate: '{"username":"bot"}', generateStringKey: 'password' },
    });
    new CatalogSync(stack, 'Sync', { source: 'https://pkgs.example/v3/index.json', sourceSecret: secret });
    const template = Template.fromStack(stack);
    const text = JSON.stringify(template.toJSON());
    const secretRef = { Ref: stack.getLogicalId(secret.node.defaultChild as secretsmanager.CfnSecret) };
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { SOURCE_SECRET_ARN: secretRef } },
    });
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          { Sid: 'ReadSourceSecret', Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: secretRef },
        ]),
      },
    });
    expect(text).not.toMatch(/resolve:secretsmanager/);
    expect(() => new CatalogSync(new Stack(app, 'Twice'), 'Sync', { sourceSecretKeyArn: KEY_ARN })).toThrow(
      /sourceSecretKeyArn is the key of sourceSecret: give sourceSecret too/,
    );
    expect(
      () =>
        new CatalogSync(new Stack(app, 'Plain'), 'Sync', {
          source: 'http://pkgs.example/v3/index.json',
          sourceSecret: ARN,
        }),
    ).toThrow(
      /^Plain\/Sync: sourceSecret: the credentials are sent over https only, and source \(CATALOG_SOURCE\) "http:\/\/pkgs\.example\/v3\/index\.json" is not https$/,
    );
  });
});
