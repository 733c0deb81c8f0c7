/**
 * Starts a backfill on AWS: StartExecution of the CatalogBackfill's state machine (the CLI's
 * `catalog-sync backfill --state-machine ARN`), through the runtime's generic start (runtime/start-execution.ts:
 * the ARN's region, `AWS_ENDPOINT_URL_SFN`, the proxy variables).
 */
import type { SFNClient } from '@aws-sdk/client-sfn';
import { startExecution } from '../../runtime/start-execution.js';

/** What the planner takes from the execution's input. */
export interface BackfillExecutionInput {
  readonly until?: string;
  readonly rangeLeaves?: number;
  /** Abandon the cursor's unfinished plan first. */
  readonly abandon?: boolean;
}

/** Starts an execution; returns its ARN and start date. */
export function startBackfillExecution(
  stateMachineArn: string,
  input: BackfillExecutionInput = {},
  client?: SFNClient,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<{ executionArn: string; startDate: Date }> {
  return startExecution(stateMachineArn, input, client, env);
}
