import { CfnOutput } from 'aws-cdk-lib';
import type { Construct } from 'constructs';

/** What a sync's stack outputs name: the values a user copies into `catalog-sync` flags and consoles. */
export interface SyncOutputValues {
  readonly cursorName: string;
  readonly tableName: string;
  readonly bucketName: string;
  readonly prefix: string;
  readonly functionName: string;
  readonly logGroupName: string;
  readonly deadLetterQueueUrl: string;
  readonly dashboardName?: string;
  readonly commitQueueUrl?: string;
  readonly commitQueueArn?: string;
}

/**
 * The stack outputs of one sync (`CursorTable`, `SnapshotBucket`, `CommitQueueUrl`, `DashboardName`, …), each
 * with the logical id `{prefix}{Name}`: a deployed stack's outputs say where the mirror is without a console
 * search, and a stable id lets scripts read them (`aws cloudformation describe-stacks`).
 */
export function addSyncOutputs(scope: Construct, prefix: string, values: SyncOutputValues): void {
  const out = (name: string, value: string, description: string): void => {
    new CfnOutput(scope, `${name}Output`, { value, description }).overrideLogicalId(`${prefix}${name}`);
  };
  out('CursorName', values.cursorName, 'CURSOR_NAME of this sync');
  out('CursorTable', values.tableName, 'DynamoDB table of the cursor and run log (--cursor-table)');
  out('SnapshotBucket', values.bucketName, 'S3 bucket of the snapshots (--bucket)');
  out('SnapshotPrefix', values.prefix === '' ? '(none)' : values.prefix, 'SNAPSHOT_PREFIX of this sync (--prefix)');
  out('FunctionName', values.functionName, 'The Lambda function (invoke it by hand to run a slice now)');
  out('LogGroup', values.logGroupName, 'Logs and EMF metrics of the runs');
  out('DeadLetterQueueUrl', values.deadLetterQueueUrl, 'Failed runs, with their error');
  if (values.dashboardName !== undefined)
    out(
      'DashboardName',
      values.dashboardName,
      'CloudWatch dashboard of this sync (lag, leaves/s, errors, duration, DLQ depths)',
    );
  if (values.commitQueueUrl !== undefined)
    out('CommitQueueUrl', values.commitQueueUrl, 'commits/ object-created events for consumers');
  if (values.commitQueueArn !== undefined)
    out('CommitQueueArn', values.commitQueueArn, 'commits/ object-created events for consumers');
}
