/**
 * `CatalogSync`'s `view` flag (issue 23): off by default; on, a `CatalogConsumer` named `view-latest` running the
 * view's handler, allowed to PUT `{prefix}packages/*`, its `view.json` and its conditional-PUT probe, and nothing more
 * besides a consumer's reads; its stale alarm (issue 32) on the dashboard; cdk-nag clean.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { CatalogSync, type CatalogSyncProps } from '../../infra/index.js';
import {
  acknowledgements,
  NO_BUNDLING,
  outdir,
  rawFindings,
  roleStatements,
  wildcardProblems,
  type Resources,
} from './synth-kit.js';

function build(props: CatalogSyncProps) {
  const app = new App({ context: NO_BUNDLING, outdir: outdir() });
  const stack = new Stack(app, 'Views');
  const sync = new CatalogSync(stack, 'Sync', props);
  const template = Template.fromStack(stack);
  return { stack, sync, template, resources: template.toJSON().Resources as Resources };
}

describe('CatalogSync view flag', () => {
  it('is off by default: no view consumer', () => {
    const { sync, template } = build({});
    expect(sync.view).toBeUndefined();
    expect(JSON.stringify(template.toJSON())).not.toContain('view-latest');
  });

  it('on: the view-latest consumer, PutObject on {prefix}packages/*, view.json and the probe only, lag and staleness on the dashboard, cdk-nag clean', () => {
    const { stack, sync, resources } = build({ prefix: 'nuget/', view: true });
    const fn = sync.view!.function.node.defaultChild as lambda.CfnFunction;
    const properties = resources[stack.getLogicalId(fn)]!.Properties;
    expect(properties.Environment.Variables).toMatchObject({ CONSUMER_NAME: 'view-latest', SNAPSHOT_PREFIX: 'nuget/' });
    expect(properties.ReservedConcurrentExecutions).toBe(1);
    // One vCPU: upkeep is bound by the CPU of its S3 requests.
    expect(properties.MemorySize).toBe(1769);
    const roleId = stack.getLogicalId(sync.view!.function.role!.node.defaultChild as never);
    const statements = roleStatements(resources, roleId);
    const puts = statements.filter((statement) => JSON.stringify(statement.Action).includes('s3:PutObject'));
    expect(puts).toHaveLength(1);
    expect(puts[0]!.Action).toBe('s3:PutObject');
    const writable = JSON.stringify(puts[0]!.Resource);
    expect(writable).toContain('/nuget/packages/*');
    expect(writable).toContain('/nuget/view.json');
    expect(writable).toContain('/nuget/view-conditional-put-check');
    expect(puts[0]!.Resource).toHaveLength(3);
    // The stale alarm: ViewStale of the view's service, at least 1 in a 5-minute period.
    const stale = Object.values(resources).find(
      (resource) => resource.Type === 'AWS::CloudWatch::Alarm' && resource.Properties.MetricName === 'ViewStale',
    )!;
    expect(stale.Properties).toMatchObject({
      Namespace: 'CatalogSync',
      Dimensions: [{ Name: 'service', Value: 'catalog-sync-consumer-view-latest' }],
      Statistic: 'Maximum',
      Period: 300,
      Threshold: 1,
      EvaluationPeriods: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
    expect(stale.Properties.AlarmDescription).toContain('catalog-sync view --rebuild --added');
    expect(wildcardProblems(resources)).toEqual([]);
    const dashboard = Object.values(resources).find((resource) => resource.Type === 'AWS::CloudWatch::Dashboard')!;
    expect(JSON.stringify(dashboard.Properties.DashboardBody)).toContain('catalog-sync-consumer-view-latest');
    expect(JSON.stringify(dashboard.Properties.DashboardBody)).toContain('ViewStale');
    expect(new AwsSolutionsChecks().validateScope(stack).violations.map((violation) => violation.ruleName)).toEqual([]);
    const findings = new Set(rawFindings(sync.view!));
    for (const id of acknowledgements(sync.view!).keys()) expect(findings, id).toContain(id);
  });
});
