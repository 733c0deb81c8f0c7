/**
 * `catalog-sync serve` as a user meets it: settings errors (exit 2) that name the flag, the URL it prints, the one
 * warning when the feed was written for another place, and, in one child process, a request log under --verbose and
 * a clean stop on Ctrl-C.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SettingsError } from '../../../lambda/contract/index.js';
import { type ServeOptions, startServing } from '../../../lambda/serve/cli/serve.js';
import { runCli, startCli, waitFor } from '../../../testkit/cli-process.js';
import { rawRequest, writeFeed } from './serve-kit.js';

let parent: string;
let mirror: string;

beforeAll(async () => {
  parent = await mkdtemp(join(tmpdir(), 'catalog-sync-serve-cli-'));
  mirror = join(parent, 'mirror');
  await writeFeed(mirror, { prefix: '', baseUrl: 'http://127.0.0.1:1/' });
});
afterAll(async () => {
  await rm(parent, { recursive: true, force: true });
});

/** Starts serving with `options`, its output lines kept. */
async function serve(options: Partial<ServeOptions>) {
  const out: string[] = [];
  const err: string[] = [];
  const serving = await startServing(
    { dataDir: mirror, port: '0', ...options },
    { out: (line) => out.push(line), err: (line) => err.push(line) },
  );
  return { ...serving, out, err };
}

/** The setting a failing start names, and its message. */
async function refused(options: Partial<ServeOptions>): Promise<{ setting: string; message: string }> {
  const error = await serve(options).then(
    async (started) => {
      await started.server.stop();
      throw new Error('it started');
    },
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(SettingsError);
  return { setting: (error as SettingsError).setting, message: (error as Error).message };
}

describe('settings', () => {
  it('refuses, naming the flag: a bucket, a port that is none, a folder that is missing or holds no feed yet', async () => {
    expect((await refused({ bucket: 'b' })).setting).toBe('--bucket');
    expect((await refused({ cursorTable: 't' })).setting).toBe('--cursor-table');
    for (const port of ['x', '70000', '-1', '1.5']) expect((await refused({ port })).setting, port).toBe('--port');
    expect(await refused({ dataDir: join(parent, 'absent') })).toEqual({
      setting: '--data-dir',
      message: expect.stringContaining('does not exist'),
    });
    const empty = join(parent, 'no-feed');
    await mkdir(empty);
    const noFeed = await refused({ dataDir: empty });
    expect(noFeed.setting).toBe('--data-dir');
    expect(noFeed.message).toContain('holds no feed yet: no feed/index.json');
    expect((await refused({ prefix: 'other/' })).message).toContain('no other/feed/index.json');
    const file = join(parent, 'a-file');
    await writeFile(file, '');
    expect((await refused({ dataDir: file })).message).toContain('is a file, not a folder');
  });

  it('refuses a port another program holds', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    try {
      const port = (holder.address() as { port: number }).port;
      const taken = await refused({ port: String(port) });
      expect(taken.setting).toBe('--port');
      expect(taken.message).toContain(`${port} is taken on 127.0.0.1`);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it('exits 2 with the message, as every settings error', async () => {
    const result = await runCli(['serve', '--data-dir', join(parent, 'absent')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^catalog-sync: --data-dir: ".*absent" does not exist\n$/);
  });
});

describe('where it serves', () => {
  it('warns once when the feed was written for another place, and not when it is served there', async () => {
    const elsewhere = await serve({});
    const port = elsewhere.server.port;
    await elsewhere.server.stop();
    expect(elsewhere.out[0]).toBe(`serving the feed of ${mirror} (feed/) at http://127.0.0.1:${port}/`);
    expect(elsewhere.err).toHaveLength(1);
    expect(elsewhere.err[0]).toContain(`was written for http://127.0.0.1:1/, not for http://127.0.0.1:${port}/`);

    // The same port again, now with the feed written for it.
    await writeFeed(mirror, { prefix: '', baseUrl: `http://127.0.0.1:${port}/` });
    const here = await serve({ port: String(port) });
    try {
      expect(here.err).toEqual([]);
      expect(here.sourceUrl).toBe(`http://127.0.0.1:${port}/index.json`);
      expect(here.out[1]).toBe(
        `NuGet source: http://127.0.0.1:${port}/index.json (allowInsecureConnections="true" in NuGet.Config)`,
      );
      expect((await rawRequest(`http://127.0.0.1:${port}`, '/index.json')).status).toBe(200);
    } finally {
      await here.server.stop();
    }
  });

  it('says so when it listens beyond this machine', async () => {
    const everywhere = await serve({ host: '0.0.0.0' });
    await everywhere.server.stop();
    expect(everywhere.err.some((line) => line.includes('listening on 0.0.0.0: anyone who reaches this machine'))).toBe(
      true,
    );
  });
});

describe('the command', () => {
  it('serves, logs each request under --verbose, and stops cleanly on Ctrl-C', async () => {
    const run = startCli(['serve', '--data-dir', mirror, '--port', '0', '--verbose']);
    let stdout = '';
    let stderr = '';
    run.child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    run.child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await waitFor(() => stdout.includes('Ctrl-C to stop'), 'serve to start');
    const origin = /at (http:\/\/127\.0\.0\.1:\d+)\//.exec(stdout)![1]!;
    const answer = await rawRequest(origin, '/index.json');
    expect(answer.status).toBe(200);
    expect((await rawRequest(origin, '/flat/none/index.json')).status).toBe(404);
    await waitFor(() => stderr.includes('/flat/none/index.json'), 'the request log');
    run.child.kill('SIGINT');
    const result = await run.done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/stopped\n$/);
    const requests = result.stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(
      requests.map(({ level, message, method, target, status }) => ({ level, message, method, target, status })),
    ).toEqual([
      { level: 'INFO', message: 'request', method: 'GET', target: '/index.json', status: 200 },
      { level: 'INFO', message: 'request', method: 'GET', target: '/flat/none/index.json', status: 404 },
    ]);
  });
});
