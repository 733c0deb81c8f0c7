/**
 * `npm run demo` leads somewhere (issue 13): it syncs, prints the next commands to try with the exact --source
 * and --data-dir, keeps the replica running for them until Ctrl-C, and they work. Started here as a child, as a
 * user starts it; its printed commands are run as printed (through a shell), then SIGINT ends it with exit 0, the
 * replica stopped and the mirror folder left in place.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../testkit/cli-process.js';
import type { ConsumersView, ConsumerStatus } from '../../lambda/consumer/consumers.js';
import type { RunSummary } from '../../lambda/contract/run-summary.js';
import { jsonLines, MANY_PROCESSES } from './cli/cli-local-kit.js';

const DEMO = fileURLToPath(new URL('../../scripts/demo.mjs', import.meta.url));

/** Runs one printed command line through the shell, as a user pastes it. */
function shell(line: string): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync('sh', ['-c', line], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('npm run demo', () => {
  it(
    'prints the next commands, they work against its replica, and Ctrl-C stops the replica and exits 0',
    async () => {
      const demo = spawn(process.execPath, [DEMO, '--commits', '60', '--latency', '0'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      demo.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      demo.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => demo.on('close', (code) => resolve(code)));
      let dataDir: string | undefined;
      try {
        await waitFor(
          () => stdout.includes('Ctrl-C here stops the replica.\n') || demo.exitCode !== null,
          'the demo to print its next commands',
          2_400,
        );
        expect(demo.exitCode, stderr).toBeNull();
        const origin = /The replica stays up at (\S+) and the mirror in (.+)\. Try/.exec(stdout);
        expect(origin).not.toBeNull();
        dataDir = origin![2]!;
        // It points at watermark.json, the bound a reader trusts, not at the newest manifest (issue 34).
        expect(stdout).toContain(
          '\nwatermark.json (everything at or before its cursor is stored, manifests included: read up to it):\n{\n  "cursor": ',
        );
        expect(stdout).not.toContain('the newest manifest: everything before it is stored');
        const commands = stdout
          .split('\n')
          .filter((line) => line.startsWith('  $ '))
          .map((line) => line.slice(4));
        const named = (name: string) => commands.find((line) => line.includes(` ${name}`))!;
        expect(commands).toHaveLength(6);
        for (const command of commands.filter((line) => !line.includes(' keys '))) {
          // Reading the mirror back needs no catalog: `changes` and `consumers` take the folder alone.
          if (!/ (changes|consumers) /.test(command)) expect(command).toContain(`--source ${origin![1]}/`);
          expect(command).toContain(`--data-dir ${dataDir}`);
        }

        const status = shell(`${named('status')} --json`);
        expect(status).toMatchObject({ code: 0, stderr: '' });
        const state = jsonLines<Record<string, unknown>>(status.stdout)[0]!;
        expect(state).toMatchObject({ commitsBehind: 0, lagSeconds: 0, sourceError: null });
        expect((state.lastRuns as RunSummary[])[0]).toMatchObject({ commits: 60, stoppedBy: 'caught-up' });

        const runs = shell(`${named('runs')} --json`);
        expect(runs).toMatchObject({ code: 0, stderr: '' });
        expect(jsonLines(runs.stdout)).toHaveLength(1);

        const keys = shell(named('keys'));
        expect(keys).toMatchObject({ code: 0, stderr: '' });
        expect(keys.stdout).toMatch(/^leaves\/[0-9A-Za-z]{8}\n$/);

        // Caught up: following says so once and logs no run; a time budget ends it, with the whole follow added up.
        const follow = shell(`${named('run --follow')} --time-budget 1`);
        expect(follow.code).toBe(0);
        expect(follow.stderr).toMatch(
          /^catalog-sync: caught up at \S+; waiting for new commits; checking every 5 s, one line per slice that finds new commits \(Ctrl-C to stop\)\n$/,
        );
        expect(follow.stdout).toMatch(
          /^time-budget: 0 commits, 0 leaves \(0 deletes, 0 quarantined\), 0 B in [\d.]+ s\ncursor catalog-to-s3: (\S+) -> \1, lag 0\.0 s\n$/,
        );
        expect(jsonLines(shell(`${named('runs')} --json`).stdout)).toHaveLength(1);

        // The README's pipeline: `changes --follow --json --consumer printer` into examples/print-changes.mjs prints every
        // commit, in order, and the consumer is checkpointed as far as the script acknowledged on its named pipe.
        const pipeline = spawn('sh', ['-c', named('changes')], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
        let printed = '';
        pipeline.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
        const printer = async (): Promise<ConsumerStatus> =>
          jsonLines<ConsumersView>(shell(`${named('consumers')} --json`).stdout)[0]!.consumers[0]!;
        try {
          await waitFor(
            () => printed.split('\n').length > 60 || pipeline.exitCode !== null,
            'the pipeline to print 60 commits',
          );
          await waitFor(
            async () => (await printer()).lagCommits === 0,
            'the consumer to checkpoint what the script acknowledged',
          );
          expect(await printer()).toMatchObject({
            name: 'printer',
            lagSeconds: 0,
            heldBy: expect.stringMatching(/^\d+@/),
          });
        } finally {
          process.kill(-pipeline.pid!, 'SIGTERM');
        }
        await waitFor(async () => (await printer()).heldBy === null, 'the stopped consumer to give its lease back');
        const lines = printed.trim().split('\n');
        expect(lines).toHaveLength(60);
        expect(lines.every((line) => /^\d{4}-\d\d-\d\dT[\d:.]+Z [0-9A-Za-z]{12}( [+-]\S+@\S+)+$/.test(line))).toBe(
          true,
        );
        const stamps = lines.map((line) => line.split(' ')[0]!);
        expect([...stamps].sort()).toEqual(stamps);

        demo.kill('SIGINT');
        expect(await exited).toBe(0);
        expect(stdout).toContain(`replica stopped; the mirror stays in ${dataDir}`);
        expect(existsSync(dataDir)).toBe(true);
        // The replica is gone: status now says the source did not answer, and still shows the cursor.
        const offline = shell(named('status'));
        expect(offline.code).toBe(0);
        expect(offline.stdout).toContain('catalog head: unknown: the source did not answer');
        expect(offline.stdout).toContain('last runs:');
      } finally {
        if (demo.exitCode === null) demo.kill('SIGKILL');
        if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
      }
    },
    MANY_PROCESSES,
  );

  it(
    'exits 0 on Ctrl-C under `npm run demo` too, as the README says (Ctrl-C reaches npm, the shell and the demo)',
    async () => {
      // A process group of its own, signalled whole, as a terminal does; --ignore-scripts skips `predemo` (dist/ is built).
      const npm = spawn(
        'npm',
        ['run', 'demo', '--ignore-scripts', '--', '--commits', '20', '--latency', '0', '--clean'],
        {
          cwd: fileURLToPath(new URL('../../', import.meta.url)),
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stdout = '';
      npm.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      npm.stderr.on('data', () => undefined);
      const exited = new Promise<number | null>((resolve) => npm.on('close', (code) => resolve(code)));
      try {
        await waitFor(
          () => stdout.includes('Ctrl-C here stops the replica.\n') || npm.exitCode !== null,
          'the demo under npm to wait',
          2_400,
        );
        process.kill(-npm.pid!, 'SIGINT');
        expect(await exited).toBe(0);
      } finally {
        if (npm.exitCode === null) process.kill(-npm.pid!, 'SIGKILL');
      }
    },
    MANY_PROCESSES,
  );
});
