/**
 * `catalog-sync` usage: bad flags and settings exit 2 naming the setting before touching the folder, `--help` and
 * `--version`, and a corrupt state file that stops every command and is left as it was.
 */
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../testkit/cli-process.js';
import { localKeys, RUN_LOG_FILE, STATE_FILE } from '../../../testkit/local-verify.js';
import { at, MANY_PROCESSES, newDir, replica, useReplica } from './cli-local-kit.js';

useReplica();

describe('usage', () => {
  it(
    'bad flags and settings exit 2 naming the setting, before touching the folder',
    async () => {
      const dir = newDir('never');
      replica.clearLog();
      const source = ['--source', replica.serviceIndexUrl];
      const cases: [string[], string][] = [
        [['run', ...source, '--data-dir', ''], '--data-dir'],
        [['status', ...source, '--data-dir', ''], '--data-dir'],
        [['runs', '--data-dir', ''], '--data-dir'],
        [['run', ...source, '--data-dir', dir, '--poll-interval', 'x'], '--poll-interval'],
        [['run', ...source, '--data-dir', dir, '--follow', '--poll-interval', '0'], '--poll-interval'],
        [['run', ...source, '--data-dir', dir, '--max-leaves', 'lots'], '--max-leaves'],
        [['run', ...source, '--data-dir', dir, '--start', 'yesterday'], '--start'],
        [['run', ...source, '--data-dir', dir, '--bucket', 'mirror'], '--cursor-table'],
        [['status', '--source', 'ftp://127.0.0.1/index.json', '--data-dir', dir], '--source'],
        [['status', ...source, '--data-dir', dir, '--cursor-name', 'a/b'], '--cursor-name'],
        [['runs', '--data-dir', dir, '--limit', '0'], '--limit'],
        [['runs', '--data-dir', dir, '--limit', 'ten'], '--limit'],
        [['runs', '--data-dir', dir, '--since', 'notadate'], '--since'],
        [['runs', '--data-dir', dir, '--until', 'tomorrow'], '--until'],
        [['keys'], '--since'],
        [['keys', '--since', 'notadate'], '--since'],
        [['status', ...source, '--data-dir', dir, '--frobnicate'], '--frobnicate'],
        [['frobnicate'], 'frobnicate'],
        [[], 'Usage: catalog-sync'],
      ];
      const results = await Promise.all(cases.map(([args]) => runCli(args)));
      cases.forEach(([args, setting], i) => {
        const result = results[i]!;
        expect(result.code, args.join(' ')).toBe(2);
        expect(result.stderr, args.join(' ')).toContain(setting);
        expect(result.stdout, args.join(' ')).toBe('');
      });
      await expect(stat(dir)).rejects.toThrow();
      expect(replica.requests).toEqual([]); // settings fail before anything is fetched
    },
    MANY_PROCESSES,
  );

  it('--help of every command exits 0 and shows examples', async () => {
    const cases = [
      ['--help'],
      ['run', '--help'],
      ['status', '--help'],
      ['runs', '--help'],
      ['keys', '--help'],
      ['help', 'run'],
    ];
    const results = await Promise.all(cases.map((args) => runCli(args)));
    cases.forEach((args, i) => {
      const result = results[i]!;
      expect(result.code, args.join(' ')).toBe(0);
      expect(result.stdout, args.join(' ')).toContain('Usage: catalog-sync');
      expect(result.stdout, args.join(' ')).toContain('Examples:');
    });
    expect(results[0]!.stdout).toContain('Exit codes: 0 done, 1 a run failed, 2 bad usage or settings');
    expect(results[0]!.stdout).toContain('-V, --version');
  });

  it('--version prints the version of package.json and exits 0', async () => {
    const pkg = JSON.parse(await readFile(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    for (const flag of ['--version', '-V']) {
      const result = await runCli([flag]);
      expect(result, flag).toMatchObject({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
    }
  });

  it(
    'a corrupt state file stops every command with a message naming the file, and is left as it was',
    async () => {
      // [content, does `runs` fail too?] (`runs` reads only the run log, its own file: a bad state file does not stop it).
      const corruptions: [string, boolean][] = [
        ['{"cursors":', false],
        ['[]', false],
        ['{"cursors":{"catalog-to-s3":{"cursor":"last tuesday"}}}', false],
      ];
      for (const [content, runsFails] of corruptions) {
        const dir = newDir('corrupt');
        const statePath = join(dir, STATE_FILE);
        await mkdir(join(dir, '.catalog-sync'), { recursive: true });
        await writeFile(statePath, content);
        const [run, status, runs] = await Promise.all([
          runCli(['run', ...at(dir)]),
          runCli(['status', ...at(dir)]),
          runCli(['runs', '--data-dir', dir]),
        ]);
        for (const [what, result] of [
          ['run', run],
          ['status', status],
          ...(runsFails ? [['runs', runs] as const] : []),
        ] as const) {
          expect([1, 2], `${what} with ${content}`).toContain(result.code);
          expect(result.stderr, `${what} with ${content}`).toContain(statePath);
        }
        if (!runsFails) expect(runs).toMatchObject({ code: 0, stdout: 'no runs recorded\n' });
        expect(await readFile(statePath, 'utf8')).toBe(content);
        expect(await localKeys(dir)).toEqual([]);
      }
      // A run log with a bad line (not the last, which a crash mid-append may cut short and is skipped).
      const dir = newDir('corrupt-runs');
      const runLogPath = join(dir, RUN_LOG_FILE);
      await mkdir(join(dir, '.catalog-sync', 'runs'), { recursive: true });
      await writeFile(runLogPath, 'garbage\n{"sk":"run#x","expiresAt":1}\n{"runId":"cut sh');
      const [status, runs] = await Promise.all([runCli(['status', ...at(dir)]), runCli(['runs', '--data-dir', dir])]);
      for (const result of [status, runs]) {
        expect(result.code).toBe(1);
        expect(result.stderr).toContain(`${runLogPath}: line 1 is not a run record`);
      }
    },
    MANY_PROCESSES,
  );
});
