/**
 * Usage a newcomer meets in the first hour (issue 34), through the CLI's `main` in this process (each case fails
 * before any request): an unknown command is an error whatever flags follow it; an empty id pattern is refused; a
 * `--data-dir` whose folder cannot be created (under /proc) is an error at once, not a hang; `latest --help` states
 * the order `latest` prints in. The child-process path is the same `main` (test/integration/cli/cli-local-usage.test.ts).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { main } from '../../lambda/cli.js';

/** Nothing listens on port 1: a case that reached the network would fail with ECONNREFUSED, not the error expected. */
const DEAD = 'http://127.0.0.1:1/v3/index.json';

async function cli(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const out = vi
    .spyOn(process.stdout, 'write')
    .mockImplementation((chunk: string | Uint8Array) => ((stdout += String(chunk)), true));
  const err = vi
    .spyOn(process.stderr, 'write')
    .mockImplementation((chunk: string | Uint8Array) => ((stderr += String(chunk)), true));
  try {
    return { code: await main(['node', 'catalog-sync', ...args]), stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

describe('an unknown command', () => {
  it('is an error (exit 2) whatever flags follow it, with "Did you mean" when a command is close', async () => {
    // Words no command has (`serve` and `consumers`, the words first tried, became commands since).
    for (const args of [['publish', '--help'], ['publish', '--json', '-h'], ['mirror'], ['help', 'publish']]) {
      const result = await cli(args);
      expect(result, args.join(' ')).toMatchObject({ code: 2, stdout: '' });
      expect(result.stderr, args.join(' ')).toContain(`error: unknown command '${args[args[0] === 'help' ? 1 : 0]}'`);
    }
    const near = await cli(['sttus', '--help']);
    expect(near).toMatchObject({ code: 2, stdout: '' });
    expect(near.stderr).toContain("error: unknown command 'sttus'\n(Did you mean status?)");
    // A known command's help is still help.
    expect(await cli(['help', 'status'])).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('Usage: catalog-sync status'),
    });
  });
});

describe('flags a newcomer gets wrong', () => {
  it('an empty --include or --exclude (an unset shell variable) is refused naming the flag, before the folder is made', async () => {
    const root = await mkdtemp(join(tmpdir(), 'catalog-sync-first-hour-'));
    try {
      const dir = join(root, 'mirror');
      for (const [args, message] of [
        [
          ['run', '--include', ''],
          '--include: "" is an empty pattern, which filters nothing (every package would be kept)',
        ],
        [['run', '--exclude', ' '], '--exclude: " " is an empty pattern'],
        [
          ['backfill', '--include', 'Newtonsoft.*,'],
          '--include: "Newtonsoft.*," has an empty pattern between its commas',
        ],
      ] as const) {
        const result = await cli([...args, '--source', DEAD, '--data-dir', dir]);
        expect(result, args.join(' ')).toMatchObject({ code: 2, stdout: '' });
        expect(result.stderr, args.join(' ')).toContain(`catalog-sync: ${message}`);
      }
      expect(await readdir(root)).toEqual([]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  // Node's recursive mkdir loops for ever on procfs, which answers ENOENT for a new folder: this hung at 100 % CPU.
  it('a --data-dir whose folder cannot be created (under /proc) is refused at once, naming it (exit 2)', {
    timeout: 10_000,
  }, async () => {
    const where = existsSync('/proc/self') ? '/proc' : undefined;
    if (where === undefined) return expect(existsSync('/proc')).toBe(false); // no procfs here (macOS, Windows)
    const result = await cli(['run', '--source', DEAD, '--data-dir', `${where}/catalog-sync-test/mirror`]);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toBe(
      `catalog-sync: --data-dir: "${where}/catalog-sync-test/mirror" cannot be created: "${where}" takes no new folder (ENOENT)\n`,
    );
  });

  it('latest --help states the order latest prints in, the order of its --json (index.json)', async () => {
    const help = await cli(['latest', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout.replace(/\s+/g, ' ')).toContain(
      'lowest version first by SemVer precedence, as in its index.json',
    );
    expect(help.stdout).not.toContain('newest first');
  });
});
