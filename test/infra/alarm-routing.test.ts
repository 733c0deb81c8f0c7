/**
 * The documented way to route alarms (docs/deploy.md, "Watch the alarms" and "Route the alarms"): every alarm
 * the app can make is explained there, the context keys it names exist, and the ChatOps example (an AWS Chatbot
 * Slack channel on the alarm topic) builds as written, cdk-nag clean.
 */
import { readFileSync } from 'node:fs';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as chatbot from 'aws-cdk-lib/aws-chatbot';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as sns from 'aws-cdk-lib/aws-sns';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { CatalogSync } from '../../infra/index.js';
import { acknowledgements, CDK_JSON, outdir, rawFindings, synth } from './synth-kit.js';

const DEPLOY_MD = readFileSync(new URL('../../docs/deploy.md', import.meta.url), 'utf8');

/** The text of one `## ` section of docs/deploy.md. */
function section(title: string): string {
  const start = DEPLOY_MD.indexOf(`\n## ${title}\n`);
  expect(start, `section "${title}"`).toBeGreaterThan(0);
  const end = DEPLOY_MD.indexOf('\n## ', start + 1);
  return DEPLOY_MD.slice(start, end < 0 ? undefined : end);
}

describe('docs/deploy.md explains the alarms and how to route them', () => {
  it('every alarm of the app (two syncs, the backfill, the view and its rebuild, the feed on) has a row saying what it means and what to do', () => {
    const s = synth({
      'catalog-sync:backfill': 'true',
      'catalog-sync:view-rebuild': 'true',
      'catalog-sync:feed': 'true',
      'catalog-sync:prefix': 'nuget/',
      'catalog-sync:second:cursorName': 'mirror',
    });
    const ids = new Set(
      s.stack.node
        .findAll()
        .filter((c) => c instanceof cloudwatch.Alarm)
        .map((c) => c.node.id),
    );
    expect([...ids].sort()).toEqual([
      'CommitDeadLettersAlarm',
      'DeadLettersAlarm',
      'ErrorsAlarm',
      'FailedAlarm',
      'LagAlarm',
      'MissedRunsAlarm',
      'QuarantinedAlarm',
      'RebuildFailedAlarm',
      'StaleAlarm',
      'StuckAlarm',
    ]);
    const rows = section('Watch the alarms')
      .split('\n')
      .filter((line) => line.startsWith('| `…'));
    const documented = new Set(rows.map((row) => /^\| `…(?:\w+…)*(\w+Alarm)`/.exec(row)?.[1]));
    expect([...documented].sort()).toEqual([...ids].sort());
    for (const row of rows) expect(row.split('|').filter((cell) => cell.trim() !== '')).toHaveLength(3);
  });

  it('the routing section names the context keys the app reads, with e-mail and chat examples', () => {
    const text = section('Route the alarms');
    for (const key of ['catalog-sync:alarmEmails', 'catalog-sync:alarmTopicArn']) {
      expect(text).toContain(key);
      expect(Object.keys(CDK_JSON.context)).toContain(key);
    }
    expect(text).toMatch(/--protocol email/);
    expect(text).toMatch(/SlackChannelConfiguration/);
    expect(text).toContain('AlarmTopicArn');
    // The output it points to exists.
    expect(Object.keys(synth({ 'catalog-sync:alarmEmails': 'ops@example.com' }).template.toJSON().Outputs)).toContain(
      'AlarmTopicArn',
    );
  });

  it('the ChatOps example builds as written: the Slack channel is subscribed to the topic every alarm notifies', () => {
    const app = new App({ outdir: outdir(), context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Ops');
    // As in docs/deploy.md, "Route the alarms".
    const alarms = new sns.Topic(stack, 'Alarms', { enforceSSL: true });
    new CatalogSync(stack, 'NuGet', { alarmTopic: alarms });
    new chatbot.SlackChannelConfiguration(stack, 'OpsChannel', {
      slackChannelConfigurationName: 'catalog-sync-ops',
      slackWorkspaceId: 'T0123456789',
      slackChannelId: 'C0123456789',
      notificationTopics: [alarms],
    });
    expect(section('Route the alarms')).toContain('notificationTopics: [alarms],');
    const template = Template.fromStack(stack);
    const topic = { Ref: stack.getLogicalId(alarms.node.defaultChild as sns.CfnTopic) };
    template.hasResourceProperties('AWS::Chatbot::SlackChannelConfiguration', {
      SlackChannelId: 'C0123456789',
      SnsTopicArns: [topic],
    });
    template.resourceCountIs('AWS::CloudWatch::Alarm', 5);
    template.allResourcesProperties('AWS::CloudWatch::Alarm', { AlarmActions: [topic], OKActions: [topic] });
    const findings = new AwsSolutionsChecks().validateScope(app).violations.map((v) => v.ruleName);
    expect(findings).toEqual([]);
    const found = new Set(rawFindings(app));
    for (const id of acknowledgements(app).keys()) if (id.startsWith('AwsSolutions-')) expect(found, id).toContain(id);
  });
});
