/**
 * bin/catalog-sync.js keeps V8's compiled code of the CLI's bundle between runs (a code cache in the temp folder, one
 * per command): written by the first command, used as it is by the next, rewritten when it is not V8's (a broken
 * file), never read from a folder others can write, and off with NODE_DISABLE_COMPILE_CACHE=1. Whatever the cache,
 * a command's output is the same. (What it saves is a figure of `npm run bench`, not asserted here.)
 */
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../testkit/cli-process.js';

let temp: string;

beforeAll(async () => {
  temp = await mkdtemp(join(tmpdir(), 'catalog-sync-code-cache-test-'));
});

afterAll(async () => {
  await rm(temp, { recursive: true, force: true });
});

/** A fresh temp folder for the CLI (TMPDIR); the cache folder it uses inside, and the files there. */
async function freshTemp(
  name: string,
): Promise<{ env: Record<string, string>; folder: string; files: () => Promise<string[]> }> {
  const dir = join(temp, name);
  await mkdir(dir);
  const folder = join(dir, `catalog-sync-code-cache-${process.getuid!()}`);
  const files = async () => ((await stat(folder).catch(() => undefined)) ? (await readdir(folder)).sort() : []);
  return { env: { TMPDIR: dir }, folder, files };
}

async function version(env: Record<string, string>): Promise<string> {
  const result = await runCli(['--version'], env);
  expect(result.code, result.stderr).toBe(0);
  expect(result.stderr).toBe('');
  return result.stdout;
}

describe('the code cache of the CLI', () => {
  it('is written by the first command, used unchanged by the next, and rewritten when broken', async () => {
    const { env, folder, files } = await freshTemp('cycle');
    const first = await version(env);
    const [cache] = await files();
    expect(cache, 'one cache file after the first command').toMatch(/cli_js\.other@\d+-\d+-v[\d.]+-\w+\.bin$/);
    expect(await files()).toHaveLength(1);
    const file = join(folder, cache!);
    expect((await stat(file)).mode & 0o077, 'readable by its user only').toBe(0);
    const bytes = await readFile(file);

    expect(await version(env)).toBe(first);
    expect((await readFile(file)).equals(bytes), 'a cache V8 accepted is left as it is').toBe(true);

    await writeFile(file, 'not a code cache');
    expect(await version(env)).toBe(first);
    expect((await readFile(file)).toString()).not.toBe('not a code cache');
    expect(await files()).toEqual([cache]);

    // Another command keeps a cache of its own (the code it compiles), beside the first.
    const usage = await runCli(['keys'], env);
    expect(usage.code).toBe(2);
    expect(await files()).toEqual([cache, cache!.replace('.other@', '.keys@')].sort());
  });

  it('is off with NODE_DISABLE_COMPILE_CACHE=1, and never taken from a folder others can write', async () => {
    const off = await freshTemp('off');
    const first = await version({ ...off.env, NODE_DISABLE_COMPILE_CACHE: '1' });
    expect(await off.files()).toEqual([]);

    const shared = await freshTemp('shared');
    await mkdir(shared.folder, { mode: 0o777 });
    await chmod(shared.folder, 0o777);
    expect(await version(shared.env)).toBe(first);
    expect(await shared.files(), 'nothing written to or read from a folder others can write').toEqual([]);
  });
});
