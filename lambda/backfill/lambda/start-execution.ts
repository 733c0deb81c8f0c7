/**
 * Starts a backfill on AWS: StartExecution of the CatalogBackfill's state machine (the CLI's
 * `catalog-sync backfill --state-machine ARN`). The region is the ARN's; the endpoint may be overridden with the
 * SDK's `AWS_ENDPOINT_URL_SFN`; the request honours the proxy variables as every other client's does.
 */
import { SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { SettingsError } from '../../contract/index.js';
import { sdkRequestHandler } from '../../stores/proxy-agents.js';

/** What the planner takes from the execution's input. */
export interface BackfillExecutionInput {
  readonly until?: string;
  readonly rangeLeaves?: number;
  /** Abandon the cursor's unfinished plan first. */
  readonly abandon?: boolean;
}

const STATE_MACHINE_ARN = /^arn:aws[a-z-]*:states:([a-z0-9-]+):\d{12}:stateMachine:[A-Za-z0-9_-]{1,80}$/;

/** Starts an execution; returns its ARN and start date. */
export async function startBackfillExecution(
  stateMachineArn: string,
  input: BackfillExecutionInput = {},
  client?: SFNClient,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<{ executionArn: string; startDate: Date }> {
  const region = STATE_MACHINE_ARN.exec(stateMachineArn)?.[1];
  if (region === undefined)
    throw new SettingsError(
      '--state-machine',
      `is not a state machine ARN (arn:aws:states:<region>:<account>:stateMachine:<name>): ${stateMachineArn}`,
    );
  const sfn =
    client ??
    new SFNClient({
      region,
      requestHandler: sdkRequestHandler(env, { sockets: 2, connectionTimeout: 10_000, requestTimeout: 30_000 }),
    });
  const response = await sfn.send(new StartExecutionCommand({ stateMachineArn, input: JSON.stringify(input) }));
  return { executionArn: response.executionArn!, startDate: response.startDate! };
}
