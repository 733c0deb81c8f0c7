/**
 * Starts and watches a state machine's execution on AWS (the CLI's `backfill --state-machine ARN` and
 * `view --rebuild --state-machine ARN`). The region is the ARN's; the endpoint may be overridden with the SDK's
 * `AWS_ENDPOINT_URL_SFN`; the requests honour the proxy variables as every other client's do.
 */
import { DescribeExecutionCommand, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { SettingsError } from '../contract/index.js';
import { sdkRequestHandler } from '../stores/proxy-agents.js';

const STATE_MACHINE_ARN = /^arn:aws[a-z-]*:states:([a-z0-9-]+):\d{12}:stateMachine:[A-Za-z0-9_-]{1,80}$/;

/** The Step Functions client for `stateMachineArn`'s region; throws a {@link SettingsError} naming `--state-machine` when it is no state machine ARN. */
export function sfnClientFor(
  stateMachineArn: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): SFNClient {
  const region = STATE_MACHINE_ARN.exec(stateMachineArn)?.[1];
  if (region === undefined)
    throw new SettingsError(
      '--state-machine',
      `is not a state machine ARN (arn:aws:states:<region>:<account>:stateMachine:<name>): ${stateMachineArn}`,
    );
  return new SFNClient({
    region,
    requestHandler: sdkRequestHandler(env, { sockets: 2, connectionTimeout: 10_000, requestTimeout: 30_000 }),
  });
}

/** Starts an execution of `stateMachineArn` with `input` (JSON); returns its ARN and start date. */
export async function startExecution(
  stateMachineArn: string,
  input: object = {},
  client?: SFNClient,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<{ executionArn: string; startDate: Date }> {
  const sfn = client ?? sfnClientFor(stateMachineArn, env);
  const response = await sfn.send(new StartExecutionCommand({ stateMachineArn, input: JSON.stringify(input) }));
  return { executionArn: response.executionArn!, startDate: response.startDate! };
}

/** An execution's state: RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED; its output (JSON text) or error and cause. */
export interface ExecutionState {
  readonly status: string;
  readonly output?: string;
  readonly error?: string;
  readonly cause?: string;
}

/** DescribeExecution of `executionArn` (a client made for its state machine's region). */
export async function describeExecution(client: SFNClient, executionArn: string): Promise<ExecutionState> {
  const response = await client.send(new DescribeExecutionCommand({ executionArn }));
  return {
    status: response.status ?? 'UNKNOWN',
    ...(response.output === undefined ? {} : { output: response.output }),
    ...(response.error === undefined ? {} : { error: response.error }),
    ...(response.cause === undefined ? {} : { cause: response.cause }),
  };
}
