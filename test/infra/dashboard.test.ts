/**
 * What an operator sees and is told (issue 13, item 7): the sync's CloudWatch dashboard (infra/constructs/
 * sync-dashboard.ts) widget by widget, with each metric's namespace, name, dimensions and statistic; the alarm on
 * the commit-events dead-letter queue; every alarm routed to the alarm topic; the dashboard turned off; a
 * backfill's row; cdk-nag. Each describe synthesizes its app once.
 */
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as sns from 'aws-cdk-lib/aws-sns';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { CatalogSync } from '../../infra/index.js';
import {
  acknowledgements,
  getAtt,
  ofType,
  only,
  outdir,
  rawFindings,
  ref,
  synth,
  type Json,
  type Resources,
  type Synthesized,
} from './synth-kit.js';

interface Widget {
  type: string;
  width: number;
  height: number;
  properties: Json;
}

/** The dashboard's body, its tokens written as `<Ref:Id>` / `<GetAtt:Id.Attr>`, parsed. */
function bodyOf(properties: Json): { widgets: Widget[] } {
  const body = properties.DashboardBody as string | Json;
  const parts = typeof body === 'string' ? [body] : (body['Fn::Join'][1] as unknown[]);
  const text = parts
    .map((part) => {
      if (typeof part === 'string') return part;
      const p = part as Json;
      if (p.Ref !== undefined) return `<Ref:${p.Ref}>`;
      if (p['Fn::GetAtt']) return `<GetAtt:${p['Fn::GetAtt'].join('.')}>`;
      throw new Error(`unexpected token ${JSON.stringify(part)}`);
    })
    .join('');
  return JSON.parse(text);
}

function dashboards(resources: Resources): Array<{ id: string; widgets: Widget[] }> {
  return ofType(resources, 'AWS::CloudWatch::Dashboard').map(([id, resource]) => ({
    id,
    widgets: bodyOf(resource.Properties).widgets,
  }));
}

/** The widgets of the one dashboard of a template. */
function theDashboard(resources: Resources): Widget[] {
  const all = dashboards(resources);
  expect(all, 'exactly one dashboard').toHaveLength(1);
  return all[0]!.widgets;
}

const widget = (widgets: Widget[], title: string): Widget => {
  const found = widgets.filter((w) => w.properties.title === title);
  expect(found, `one widget "${title}"`).toHaveLength(1);
  return found[0]!;
};

/** A graph's metric lines as `namespace name dim=value… stat period label`, math expressions as `= expr label`. */
function lines(w: Widget): string[] {
  return (w.properties.metrics as unknown[][]).map((line) => {
    const options = (typeof line[line.length - 1] === 'object' ? line[line.length - 1] : {}) as Json;
    if (options.expression) return `= ${options.expression} ${options.label}`;
    const [namespace, name, ...rest] = line.filter((part) => typeof part === 'string') as string[];
    const dims: string[] = [];
    for (let i = 0; i + 1 < rest.length; i += 2) dims.push(`${rest[i]}=${rest[i + 1]}`);
    const hidden = options.visible === false ? ` (hidden, id ${options.id})` : '';
    return `${namespace} ${name} ${dims.join(' ')} ${options.stat ?? 'Average'} ${options.period ?? 300} ${options.label ?? ''}${hidden}`.trim();
  });
}

/**
 * The default app, synthesized once for the tests that only read it (its dashboard, the absent backfill row, cdk-nag's
 * walk, which changes nothing).
 */
let theDefaultApp: Synthesized | undefined;
const defaultApp = (): Synthesized => (theDefaultApp ??= synth());

describe("the default app's dashboard", () => {
  let s: Synthesized;
  let widgets: Widget[];
  let ids: { fn: string; dlq: string; commitDlq: string };
  const service = 'service=catalog-sync-catalog-to-s3';

  beforeAll(() => {
    s = defaultApp();
    const all = dashboards(s.resources);
    expect(all).toHaveLength(1);
    widgets = all[0]!.widgets;
    const [fn] = only(s.resources, 'AWS::Lambda::Function');
    const [, commitQueue] = only(s.resources, 'AWS::SQS::Queue', (p) => p.RedrivePolicy !== undefined);
    const [, invokeConfig] = only(s.resources, 'AWS::Lambda::EventInvokeConfig');
    ids = {
      fn,
      dlq: invokeConfig.DestinationConfig.OnFailure.Destination['Fn::GetAtt'][0],
      commitDlq: commitQueue.RedrivePolicy.deadLetterTargetArn['Fn::GetAtt'][0],
    };
  });

  it("one dashboard, its name in the outputs; a title naming the cursor and the metrics' namespace", () => {
    const [dashboardId] = only(s.resources, 'AWS::CloudWatch::Dashboard');
    expect(s.template.toJSON().Outputs.DashboardName).toMatchObject({ Value: ref(dashboardId) });
    const text = widgets.find((w) => w.type === 'text')!;
    expect(text.properties.markdown).toMatch(/^# catalog-sync catalog-to-s3\n/);
    expect(text.properties.markdown).toContain('namespace `CatalogSync`, service `catalog-sync-catalog-to-s3`');
    expect(widgets.map((w) => w.properties.title ?? w.type)).toEqual([
      'text',
      'Cursor lag (seconds behind the catalog head)',
      'Leaves per second, and S3 PUT retries',
      'Errors and failed runs',
      'Run duration (ms)',
      'Dead-letter queue depths (messages visible)',
      'Alarms',
    ]);
  });

  it("lag: CursorLagSeconds of the sync's service (maximum per 5-minute period), with the lag alarm's threshold", () => {
    const lag = widget(widgets, 'Cursor lag (seconds behind the catalog head)');
    expect(lines(lag)).toEqual([`CatalogSync CursorLagSeconds ${service} Maximum 300 CursorLagSeconds (max)`]);
    expect(lag.properties.annotations.horizontal).toEqual([
      expect.objectContaining({ value: 3600, label: 'lag alarm (1 hour)' }),
    ]);
    expect(lag.properties.yAxis.left).toMatchObject({ min: 0 });
  });

  it("leaves/s: the handler's Leaves over the period, and over the time the function ran; S3 PUT retries on the right axis", () => {
    const rate = widget(widgets, 'Leaves per second, and S3 PUT retries');
    expect(lines(rate).sort()).toEqual(
      [
        '= leaves / PERIOD(leaves) leaves/s (over the period)',
        '= IF(busy > 0, leaves / (busy / 1000), 0) leaves/s (while running)',
        `CatalogSync Leaves ${service} Sum 300 Leaves (hidden, id leaves)`,
        `AWS/Lambda Duration FunctionName=<Ref:${ids.fn}> Sum 300 Duration (sum, ms) (hidden, id busy)`,
        `CatalogSync PutRetries ${service} Sum 300 S3 PUT retries`,
      ].sort(),
    );
    const retries = (rate.properties.metrics as unknown[][]).find((line) => line.includes('PutRetries'))!;
    expect(retries.at(-1)).toMatchObject({ yAxis: 'right' });
    expect(rate.properties.yAxis.right).toMatchObject({ min: 0 });
  });

  it("errors: the function's Errors and Throttles, the handler's RunFailed; RunSucceeded on the right axis", () => {
    const errors = widget(widgets, 'Errors and failed runs');
    expect(lines(errors)).toEqual([
      `AWS/Lambda Errors FunctionName=<Ref:${ids.fn}> Sum 300 Function errors`,
      `CatalogSync RunFailed ${service} Sum 300 Failed runs`,
      `AWS/Lambda Throttles FunctionName=<Ref:${ids.fn}> Sum 300 Throttles`,
      `CatalogSync RunSucceeded ${service} Sum 300 Successful runs`,
    ]);
    expect((errors.properties.metrics as unknown[][]).at(-1)!.at(-1)).toMatchObject({ yAxis: 'right' });
  });

  it("duration: average and maximum of the function's Duration, with its timeout", () => {
    const duration = widget(widgets, 'Run duration (ms)');
    expect(lines(duration)).toEqual([
      `AWS/Lambda Duration FunctionName=<Ref:${ids.fn}> Average 300 Duration (avg)`,
      `AWS/Lambda Duration FunctionName=<Ref:${ids.fn}> Maximum 300 Duration (max)`,
    ]);
    expect(duration.properties.annotations.horizontal).toEqual([
      expect.objectContaining({ value: 300_000, label: 'timeout (5 minutes)' }),
    ]);
  });

  it("DLQ depths: the schedule's dead-letter queue and the consumer's, messages visible (maximum)", () => {
    const depths = widget(widgets, 'Dead-letter queue depths (messages visible)');
    expect(lines(depths)).toEqual([
      `AWS/SQS ApproximateNumberOfMessagesVisible QueueName=<GetAtt:${ids.dlq}.QueueName> Maximum 300 Run dead-letter queue`,
      `AWS/SQS ApproximateNumberOfMessagesVisible QueueName=<GetAtt:${ids.commitDlq}.QueueName> Maximum 300 Commit-events dead-letter queue`,
    ]);
    expect(ids.dlq).not.toBe(ids.commitDlq);
  });

  it("the alarms' states: every alarm of the sync, the commit-events DLQ alarm included", () => {
    const alarms = widget(widgets, 'Alarms');
    expect(alarms.type).toBe('alarm');
    const shown = (alarms.properties.alarms as string[]).map((arn) => /^<GetAtt:(\w+)\.Arn>$/.exec(arn)?.[1]).sort();
    expect(shown).toEqual(
      ofType(s.resources, 'AWS::CloudWatch::Alarm')
        .map(([id]) => id)
        .sort(),
    );
    expect(shown).toHaveLength(5);
  });

  it('an alarm on the commit-events dead-letter queue: a message visible, missing data not breaching, no topic by default', () => {
    const [, alarm] = only(
      s.resources,
      'AWS::CloudWatch::Alarm',
      (p) => p.Dimensions?.[0]?.Value?.['Fn::GetAtt']?.[0] === ids.commitDlq,
    );
    expect(alarm).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: getAtt(ids.commitDlq, 'QueueName') }],
      Statistic: 'Maximum',
      Period: 300,
      Threshold: 1,
      EvaluationPeriods: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
    expect(alarm.AlarmDescription).toMatch(
      /^catalog-sync catalog-to-s3: the commit-events dead-letter queue holds messages/,
    );
    expect(alarm.AlarmActions).toBeUndefined();
    expect(s.stack.sync.commitDeadLetterAlarm).toBeDefined();
  });
});

describe('routing the alarms to the alarm topic', () => {
  it('alarmEmails: every alarm, the commit-events DLQ alarm included, notifies the topic on alarm and on OK', () => {
    const s = synth({ 'catalog-sync:alarmEmails': 'ops@example.com' });
    const [topicId] = only(s.resources, 'AWS::SNS::Topic');
    const alarms = ofType(s.resources, 'AWS::CloudWatch::Alarm');
    expect(alarms).toHaveLength(5);
    for (const [id, alarm] of alarms) {
      expect(alarm.Properties.AlarmActions, id).toEqual([ref(topicId)]);
      expect(alarm.Properties.OKActions, id).toEqual([ref(topicId)]);
    }
    expect(s.template.toJSON().Outputs.AlarmTopicArn).toMatchObject({ Value: ref(topicId) });
  });

  it('alarmTopicArn: the commit-events DLQ alarm goes to the existing topic too', () => {
    const arn = 'arn:aws:sns:eu-west-1:123456789012:chatops';
    const s = synth({ 'catalog-sync:alarmTopicArn': arn });
    const commitDlq = s.stack.getLogicalId(s.stack.sync.commitDeadLetterQueue!.node.defaultChild as any);
    const [, alarm] = only(
      s.resources,
      'AWS::CloudWatch::Alarm',
      (p) => p.Dimensions?.[0]?.Value?.['Fn::GetAtt']?.[0] === commitDlq,
    );
    expect(alarm).toMatchObject({ AlarmActions: [arn], OKActions: [arn] });
  });

  it('the construct in another app: alarmTopic routes all five alarms', () => {
    const app = new App({ outdir: outdir(), context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Ops');
    const topic = new sns.Topic(stack, 'Pager', { enforceSSL: true });
    new CatalogSync(stack, 'Sync', {
      alarmTopic: topic,
      schedule: Duration.minutes(10),
      timeout: Duration.minutes(10),
    });
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::CloudWatch::Alarm', 5);
    template.allResourcesProperties('AWS::CloudWatch::Alarm', {
      AlarmActions: [{ Ref: stack.getLogicalId(topic.node.defaultChild as sns.CfnTopic) }],
    });
    const widgets = theDashboard(template.toJSON().Resources as Resources);
    // Every graph in periods of the schedule.
    expect(lines(widget(widgets, 'Cursor lag (seconds behind the catalog head)'))[0]).toMatch(/ Maximum 600 /);
    expect(widgets[0]!.properties.markdown).toContain('One run every 10 minutes');
  });
});

describe('turning it off, and what follows the other props', () => {
  it('dashboard=false (context) or dashboard: false (prop): no dashboard, no output; the alarms stay', () => {
    const s = synth({ 'catalog-sync:dashboard': 'false' });
    s.template.resourceCountIs('AWS::CloudWatch::Dashboard', 0);
    s.template.resourceCountIs('AWS::CloudWatch::Alarm', 5);
    expect(s.template.toJSON().Outputs.DashboardName).toBeUndefined();
    expect(s.stack.sync.dashboard).toBeUndefined();
    const app = new App({ outdir: outdir(), context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Quiet');
    new CatalogSync(stack, 'Sync', { dashboard: false });
    Template.fromStack(stack).resourceCountIs('AWS::CloudWatch::Dashboard', 0);
  });

  it('a typo of the key is refused, as every key of this app', () => {
    expect(() => synth({ 'catalog-sync:dashbord': 'false' })).toThrow(/did you mean catalog-sync:dashboard\?/);
  });

  it('commitEvents=false: one DLQ on the dashboard, no commit-events alarm', () => {
    const s = synth({ 'catalog-sync:commitEvents': 'false' });
    s.template.resourceCountIs('AWS::CloudWatch::Alarm', 4);
    const widgets = theDashboard(s.resources);
    expect(lines(widget(widgets, 'Dead-letter queue depths (messages visible)'))).toHaveLength(1);
    expect(widget(widgets, 'Alarms').properties.alarms).toHaveLength(4);
  });

  it('dashboardName names it; lagAlarmMinutes moves the lag line', () => {
    const app = new App({ outdir: outdir(), context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Named');
    new CatalogSync(stack, 'Sync', { dashboardName: 'catalog-sync-prod', lagThreshold: Duration.minutes(30) });
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: 'catalog-sync-prod' });
    const widgets = theDashboard(template.toJSON().Resources as Resources);
    expect(
      widget(widgets, 'Cursor lag (seconds behind the catalog head)').properties.annotations.horizontal[0].value,
    ).toBe(1800);
  });

  it('two syncs: a dashboard each, on its own service dimension', () => {
    const s = synth({ 'catalog-sync:prefix': 'nuget/', 'catalog-sync:second:cursorName': 'mirror' });
    const all = dashboards(s.resources);
    expect(all).toHaveLength(2);
    const services = all
      .map(({ widgets }) => lines(widget(widgets, 'Cursor lag (seconds behind the catalog head)'))[0]!.split(' ')[2])
      .sort();
    expect(services).toEqual(['service=catalog-sync-catalog-to-s3', 'service=catalog-sync-mirror']);
    s.template.resourceCountIs('AWS::CloudWatch::Alarm', 10);
    expect(Object.keys(s.template.toJSON().Outputs)).toEqual(
      expect.arrayContaining(['DashboardName', 'SecondDashboardName']),
    );
  });
});

describe('with the backfill on', () => {
  let s: Synthesized;
  beforeAll(() => {
    s = synth({ 'catalog-sync:backfill': 'true', 'catalog-sync:alarmEmails': 'ops@example.com' });
  });

  it("a row of the backfill's executions (AWS/States, its state machine) and its alarm's state", () => {
    const [machineId] = only(s.resources, 'AWS::StepFunctions::StateMachine');
    const widgets = theDashboard(s.resources);
    const dimension = `StateMachineArn=<Ref:${machineId}>`;
    expect(lines(widget(widgets, 'Backfill executions'))).toEqual([
      `AWS/States ExecutionsStarted ${dimension} Sum 300 Started`,
      `AWS/States ExecutionsSucceeded ${dimension} Sum 300 Succeeded`,
      `AWS/States ExecutionsFailed ${dimension} Sum 300 Failed`,
      `AWS/States ExecutionsTimedOut ${dimension} Sum 300 Timed out`,
      `AWS/States ExecutionsAborted ${dimension} Sum 300 Aborted`,
    ]);
    const [failedId] = only(s.resources, 'AWS::CloudWatch::Alarm', (p) =>
      /backfill execution/.test(p.AlarmDescription ?? ''),
    );
    expect(widget(widgets, 'Backfill alarm').properties.alarms).toEqual([`<GetAtt:${failedId}.Arn>`]);
  });

  it("a graph of the range workers' leaves per second, SlowDowns and ranges done (their own service dimension)", () => {
    const widgets = theDashboard(s.resources);
    expect(lines(widget(widgets, 'Backfill leaves per second'))).toEqual([
      '= leaves / PERIOD(leaves) leaves/s (all workers)',
      'CatalogSync Leaves service=catalog-sync-catalog-to-s3-backfill Sum 300 Leaves (hidden, id leaves)',
      'CatalogSync SlowDowns service=catalog-sync-catalog-to-s3-backfill Sum 300 S3 SlowDown answers',
      'CatalogSync RangesDone service=catalog-sync-catalog-to-s3-backfill Sum 300 ranges done',
    ]);
  });

  it('without it, no backfill row', () => {
    const widgets = theDashboard(defaultApp().resources);
    expect(widgets.some((w) => /Backfill/.test(w.properties.title ?? ''))).toBe(false);
  });

  it("every alarm, the backfill's and the commit-events DLQ's included, notifies the topic", () => {
    const [topicId] = only(s.resources, 'AWS::SNS::Topic');
    for (const [id, alarm] of ofType(s.resources, 'AWS::CloudWatch::Alarm'))
      expect(alarm.Properties.AlarmActions, id).toEqual([ref(topicId)]);
    s.template.resourceCountIs('AWS::CloudWatch::Alarm', 6);
  });

  it('cdk-nag: no finding, every acknowledgement answering one', () => {
    const report = new AwsSolutionsChecks().validateScope(s.app);
    expect(report.violations.map((v) => v.ruleName)).toEqual([]);
    const found = new Set(rawFindings(s.app));
    for (const id of acknowledgements(s.app).keys())
      if (id.startsWith('AwsSolutions-')) expect(found, id).toContain(id);
  });
});

describe('cdk-nag with the dashboard and the new alarm', () => {
  it('the default app, and the construct in another app with a topic: no finding, no warning', () => {
    const s = defaultApp();
    expect(new AwsSolutionsChecks().validateScope(s.app).violations.map((v) => v.ruleName)).toEqual([]);
    expect(Annotations.fromStack(s.stack).findWarning('*', Match.anyValue())).toEqual([]);
    const app = new App({ outdir: outdir(), context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Ops');
    new CatalogSync(stack, 'Sync', { alarmTopic: new sns.Topic(stack, 'Pager', { enforceSSL: true }) });
    expect(new AwsSolutionsChecks().validateScope(app).violations.map((v) => v.ruleName)).toEqual([]);
    expect(Annotations.fromStack(stack).findWarning('*', Match.anyValue())).toEqual([]);
  });
});
