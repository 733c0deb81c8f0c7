/**
 * Named consumers from the command line (issue 29, parts 3 and 5), on the local folder: the pipe form refused without
 * a stated guarantee and at least once with acknowledgements, `--since` against a stored cursor, `--seek`, the
 * offline `consumers` listing and `status --consumer`, the heartbeat, Ctrl-C during `--exec`, and `changes --help`.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import type { ConsumersView } from '../../../lambda/consumer/consumers.js';
import { commitKeyOf } from '../../../lambda/contract/keys.js';
import { CLI, runCli, waitFor } from '../../../testkit/cli-process.js';
import { catalog, head, jsonLines, lag, newDir, replica, runJson, useReplica } from './cli-local-kit.js';

useReplica();

let template: string | undefined;

/** A fresh copy of one mirror of the whole catalog (synced once for the file: a copy costs far less than a run). */
async function synced(name: string): Promise<{ dir: string; all: string[] }> {
  if (template === undefined) {
    template = newDir('template');
    expect(await runJson(template, ['--max-commits', '1000'])).toMatchObject({ cursorAfter: head, caughtUp: true });
  }
  const dir = newDir(name);
  await cp(template, dir, { recursive: true });
  return { dir, all: catalog.commits.map((commit) => commitKeyOf(commit.timestamp)) };
}

async function consumers(dir: string, ...extra: string[]): Promise<ConsumersView> {
  const result = await runCli(['consumers', '--data-dir', dir, '--json', ...extra]);
  expect(result).toMatchObject({ code: 0, stderr: '' });
  return jsonLines<ConsumersView>(result.stdout)[0]!;
}

describe('named consumers on the command line', () => {
  it('refuses a named consumer writing into a pipe without --ack-from or --checkpoint-on-write, and moves nothing', async () => {
    const { dir } = await synced('pipe');
    const refused = await runCli(['changes', '--data-dir', dir, '--consumer', 'piped', '--json']);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('stdout is a pipe');
    expect(refused.stderr).toContain('--ack-from');
    expect(refused.stderr).toContain('--checkpoint-on-write');
    expect((await consumers(dir)).consumers).toEqual([]);
  });

  it('with --ack-from, checkpoints only what the reader acknowledged: a reader that stops early loses nothing', async () => {
    const { dir, all } = await synced('acks');
    // The reader runs `changes` as its child and acknowledges on the child's stdin, after reading 5 commits.
    const child = spawn(
      process.execPath,
      [
        CLI,
        'changes',
        '--data-dir',
        dir,
        '--consumer',
        'acked',
        '--json',
        '--ack-from',
        '-',
        '--follow',
        '--poll-interval',
        '0.1',
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const read: string[] = [];
    for await (const line of createInterface({ input: child.stdout })) {
      read.push((JSON.parse(line) as { commitKey: string }).commitKey);
      if (read.length <= 5) child.stdin.write(`${read.at(-1)}\n`);
      if (read.length === 5) {
        await waitFor(
          async () => (await consumers(dir)).consumers[0]?.commitKey === all[4],
          'the acknowledged commits checkpointed',
        );
        // The reader "crashes": its acknowledgements end, though many more lines were written into the pipe.
        child.stdin.end();
      }
    }
    expect(await exited, stderr).toBe(0);
    expect(read.length).toBeGreaterThan(5);
    expect(stderr).toContain('not acknowledged: they come again next time');
    const [state] = (await consumers(dir)).consumers;
    expect(state).toMatchObject({ name: 'acked', commitKey: all[4], lagCommits: all.length - 5, heldBy: null });
    // The next run starts right after the last acknowledged commit.
    const again = await runCli([
      'changes',
      '--data-dir',
      dir,
      '--consumer',
      'acked',
      '--json',
      '--checkpoint-on-write',
    ]);
    expect(jsonLines<{ commitKey: string }>(again.stdout).map((line) => line.commitKey)).toEqual(all.slice(5));
  });

  it('refuses --since that disagrees with a stored cursor; --seek moves it; consumers and status --consumer show the lag offline', async () => {
    const { dir, all } = await synced('seek');
    const keysOf = (stdout: string): string[] => jsonLines<{ commitKey: string }>(stdout).map((line) => line.commitKey);
    const changes = (...extra: string[]) =>
      runCli(['changes', '--data-dir', dir, '--consumer', 'seeker', '--json', '--checkpoint-on-write', ...extra]);
    expect(keysOf((await changes('--since', catalog.commits[50]!.timestamp)).stdout)).toEqual(all.slice(50));
    const disagrees = await changes('--since', catalog.commits[10]!.timestamp);
    expect(disagrees.code).toBe(2);
    expect(disagrees.stderr).toContain(`consumer seeker has a cursor at`);
    expect(disagrees.stderr).toContain(`--seek ${catalog.commits[10]!.timestamp}`);
    expect(disagrees.stdout).toBe('');
    expect(keysOf((await changes('--seek', catalog.commits[10]!.timestamp)).stdout)).toEqual(all.slice(10));
    expect(keysOf((await changes('--seek', 'now')).stdout)).toEqual([]);
    expect(keysOf((await changes('--seek', all[49]!, '--checkpoint-every', '5')).stdout)).toEqual(all.slice(50));
    expect((await changes('--seek', all[49]!, '--after', all[5]!)).code).toBe(2);
    // Back by 10 commits (a handler failing on the first commit after the seek leaves it there), then the offline
    // views: no request reaches the catalog.
    const requests = replica.requests.length;
    expect(
      (await runCli(['changes', '--data-dir', dir, '--consumer', 'seeker', '--seek', all[49]!, '--exec', 'exit 1']))
        .code,
    ).toBe(1);
    const listed = await consumers(dir);
    expect(listed.watermark?.commitKey).toBe(all.at(-1));
    expect(listed.consumers).toEqual([
      expect.objectContaining({
        name: 'seeker',
        commitKey: all[49],
        lagCommits: 10,
        lagCommitsAtLeast: false,
        heldBy: null,
      }),
    ]);
    expect(listed.consumers[0]!.lagSeconds).toBeCloseTo(lag(head, catalog.commits[49]!.timestamp), 2);
    const status = await runCli(['status', '--data-dir', dir, '--consumer', 'seeker']);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`seeker: cursor `);
    expect(status.stdout).toContain('10 commits');
    expect(status.stdout).toContain('no instance holds it');
    expect(replica.requests.length).toBe(requests);
  });

  it('--follow --json --heartbeat writes a heartbeat line while idle', async () => {
    const { dir, all } = await synced('heartbeat');
    const child = spawn(
      process.execPath,
      [CLI, 'changes', '--data-dir', dir, '--json', '--follow', '--heartbeat', '0.1', '--after', all.at(-2)!],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const lines: Record<string, unknown>[] = [];
    createInterface({ input: child.stdout }).on('line', (line) =>
      lines.push(JSON.parse(line) as Record<string, unknown>),
    );
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    await waitFor(() => lines.length >= 3, 'two heartbeats after the last commit');
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(lines[0]).toMatchObject({ commitKey: all.at(-1) });
    expect(lines[1]).toEqual({ heartbeat: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/), after: all.at(-1) });
  });

  it('Ctrl-C during --exec stops the consumer with its commit not checkpointed, not as a failed handler', async () => {
    const { dir, all } = await synced('interrupted');
    const started = join(dir, 'exec-started');
    // A process group of its own, signalled whole, as a terminal does on Ctrl-C.
    const child = spawn(
      process.execPath,
      [
        CLI,
        'changes',
        '--data-dir',
        dir,
        '--consumer',
        'slow',
        '--after',
        all[2]!,
        '--exec',
        `touch ${JSON.stringify(started)}; exec sleep 30`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    await waitFor(() => existsSync(started), 'the first --exec to start');
    process.kill(-child.pid!, 'SIGINT');
    expect(await exited).toBe(130);
    expect(stderr).toContain(
      `stopped while --exec handled commit ${all[3]}: it was not checkpointed, and comes first next time`,
    );
    expect(stderr).not.toContain('killed by');
    // Known by its lease, given back; no cursor: the commit comes first next time.
    expect((await consumers(dir)).consumers).toEqual([
      expect.objectContaining({ name: 'slow', cursor: null, heldBy: null }),
    ]);
  });

  it('changes --help names neither --source nor --cursor-name, which mean nothing to a reader', async () => {
    const help = await runCli(['changes', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--consumer');
    expect(help.stdout).not.toContain('--source');
    expect(help.stdout).not.toContain('--cursor-name');
  });
});
