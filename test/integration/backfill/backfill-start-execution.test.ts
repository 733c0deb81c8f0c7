/**
 * `startBackfillExecution` against a tiny local server speaking the Step Functions JSON protocol
 * (X-Amz-Target: AWSStepFunctions.StartExecution), reached through the SDK's AWS_ENDPOINT_URL_SFN.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBackfillExecution } from '../../../lambda/backfill/lambda/start-execution.js';

const ARN = 'arn:aws:states:eu-west-3:123456789012:stateMachine:CatalogSyncBackfill';

describe('startBackfillExecution', () => {
  let server: Server;
  const seen: Array<{ headers: IncomingHttpHeaders; body: Record<string, unknown> }> = [];
  const saved = { ...process.env };

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        seen.push({
          headers: req.headers,
          body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
        });
        res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
        res.end(
          JSON.stringify({
            executionArn: `${ARN.replace(':stateMachine:', ':execution:')}:run-1`,
            startDate: 1_790_000_000,
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_SFN: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
    });
    delete process.env.AWS_REGION;
  });
  afterAll(async () => {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
    await new Promise((resolve) => server.close(resolve));
  });

  it("sends StartExecution with the input, signed for the ARN's region, and returns the execution", async () => {
    const started = await startBackfillExecution(ARN, { until: '2024-01-01T00:00:00Z', rangeLeaves: 5000 });
    expect(started.executionArn).toBe('arn:aws:states:eu-west-3:123456789012:execution:CatalogSyncBackfill:run-1');
    expect(started.startDate).toEqual(new Date(1_790_000_000 * 1000));
    expect(seen).toHaveLength(1);
    expect(seen[0]!.headers['x-amz-target']).toBe('AWSStepFunctions.StartExecution');
    expect(seen[0]!.headers.authorization).toContain('/eu-west-3/states/aws4_request');
    expect(seen[0]!.body).toEqual({
      stateMachineArn: ARN,
      input: JSON.stringify({ until: '2024-01-01T00:00:00Z', rangeLeaves: 5000 }),
    });
  });

  it('refuses what is not a state machine ARN, without a request', async () => {
    await expect(startBackfillExecution('arn:aws:lambda:eu-west-3:123456789012:function:x')).rejects.toMatchObject({
      code: expect.any(String),
    });
    expect(seen).toHaveLength(1);
  });
});
