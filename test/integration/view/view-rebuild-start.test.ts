/**
 * `catalog-sync view --rebuild --state-machine ARN [--wait]` (lambda/view/cli/view-rebuild-start.ts) against a tiny
 * local server speaking the Step Functions JSON protocol (StartExecution, DescribeExecution), reached through the
 * SDK's AWS_ENDPOINT_URL_SFN: the input sent, the execution followed to its end without waiting, the summary, the
 * holder of a refused start, a failure, and the options refused before any request.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { addViewCommand } from '../../../lambda/view/cli/view.js';
import { startViewRebuild, type RebuildStartIo } from '../../../lambda/view/cli/view-rebuild-start.js';

const ARN = 'arn:aws:states:eu-west-3:123456789012:stateMachine:ViewRebuild';
const EXECUTION = 'arn:aws:states:eu-west-3:123456789012:execution:ViewRebuild:run-1';

describe('view --rebuild --state-machine', () => {
  let server: Server;
  const seen: Array<{ target: string; body: Record<string, unknown> }> = [];
  /** What DescribeExecution answers, one after the other (the last one again). */
  let answers: Record<string, unknown>[] = [];
  let env: Record<string, string>;
  const saved = { ...process.env };

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const target = String(req.headers['x-amz-target']);
        seen.push({ target, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> });
        res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
        if (target.endsWith('.StartExecution'))
          res.end(JSON.stringify({ executionArn: EXECUTION, startDate: 1_790_000_000 }));
        else
          res.end(
            JSON.stringify({
              executionArn: EXECUTION,
              stateMachineArn: ARN,
              startDate: 1_790_000_000,
              ...(answers.length > 1 ? answers.shift() : answers[0]),
            }),
          );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    env = {
      AWS_ENDPOINT_URL_SFN: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
    };
    // The SDK reads its endpoint and credentials from the process's environment.
    Object.assign(process.env, env);
  });
  afterAll(async () => {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
    await new Promise((resolve) => server.close(resolve));
  });

  function io(): RebuildStartIo & { out: string[]; pauses: number[] } {
    const out: string[] = [];
    const pauses: number[] = [];
    return { out, pauses, write: (text) => out.push(text), pause: async (ms) => void pauses.push(ms), env };
  }

  it('starts an execution with {"shards": n} and prints it', async () => {
    seen.length = 0;
    const run = io();
    await startViewRebuild({ rebuild: true, stateMachine: ARN, shards: '128' }, run);
    expect(seen).toEqual([
      { target: 'AWSStepFunctions.StartExecution', body: { stateMachineArn: ARN, input: '{"shards":128}' } },
    ]);
    expect(run.out).toEqual([`started ${EXECUTION}\n`]);
  });

  it('--wait: polls DescribeExecution every 5 s until it ends, then prints the summary', async () => {
    seen.length = 0;
    answers = [
      { status: 'RUNNING' },
      { status: 'RUNNING' },
      {
        status: 'SUCCEEDED',
        output: JSON.stringify({ packages: 12, commits: 36, written: 12, cursorAfter: '2024-01-01T00:00:00.0000000Z' }),
      },
    ];
    const run = io();
    await startViewRebuild({ rebuild: true, stateMachine: ARN, wait: true }, run);
    expect(seen.map((request) => request.target)).toEqual([
      'AWSStepFunctions.StartExecution',
      'AWSStepFunctions.DescribeExecution',
      'AWSStepFunctions.DescribeExecution',
      'AWSStepFunctions.DescribeExecution',
    ]);
    expect(seen[1]!.body).toEqual({ executionArn: EXECUTION });
    expect(run.pauses).toEqual([5_000, 5_000]);
    expect(run.out.at(-1)).toBe(
      'view rebuilt: 12 packages from 36 commits (12 indexes written), cursor 2024-01-01T00:00:00.0000000Z\n',
    );
  });

  it('--wait: a refused start names the holder; a failed execution is an error naming its error and cause', async () => {
    answers = [
      {
        status: 'SUCCEEDED',
        output: JSON.stringify({
          running: true,
          rebuildId: 'r1',
          holder: 'h@host',
          leaseUntil: '2026-01-01T00:00:00Z',
        }),
      },
    ];
    const run = io();
    await startViewRebuild({ rebuild: true, stateMachine: ARN, wait: true }, run);
    expect(run.out.at(-1)).toBe(
      'view rebuild r1 is already running (held by h@host, lease until 2026-01-01T00:00:00Z): nothing was started\n',
    );
    answers = [{ status: 'FAILED', error: 'ViewError', cause: 'shard 3 failed' }];
    await expect(startViewRebuild({ rebuild: true, stateMachine: ARN, wait: true }, io())).rejects.toThrow(
      `view rebuild ${EXECUTION} ended FAILED: ViewError: shard 3 failed`,
    );
  });

  it('refuses, before any request: no --rebuild, --follow, --temp-dir, bad --shards, --wait alone, a bad ARN', async () => {
    seen.length = 0;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ stateMachine: ARN }, '--state-machine: needs --rebuild'],
      [{ rebuild: true, follow: true, stateMachine: ARN }, '--state-machine'],
      [{ rebuild: true, tempDir: '/tmp', stateMachine: ARN }, '--temp-dir'],
      [{ rebuild: true, shards: 'x', stateMachine: ARN }, '--shards'],
      [{ rebuild: true, wait: true }, '--wait: needs --state-machine'],
      [{ rebuild: true, stateMachine: 'arn:aws:lambda:eu-west-3:123456789012:function:x' }, 'not a state machine ARN'],
    ];
    for (const [options, message] of cases) await expect(startViewRebuild(options, io())).rejects.toThrow(message);
    expect(seen).toEqual([]);
  });

  it('is what `catalog-sync view --rebuild --state-machine ARN --shards 64` runs (the command hook)', async () => {
    seen.length = 0;
    const program = new Command().exitOverride();
    addViewCommand(program);
    const written: unknown[] = [];
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((text) => written.push(text) > 0);
    try {
      await program.parseAsync(['view', '--rebuild', '--state-machine', ARN, '--shards', '64'], { from: 'user' });
    } finally {
      write.mockRestore();
    }
    expect(seen).toEqual([
      { target: 'AWSStepFunctions.StartExecution', body: { stateMachineArn: ARN, input: '{"shards":64}' } },
    ]);
    expect(written).toEqual([`started ${EXECUTION}\n`]);
  });
});
