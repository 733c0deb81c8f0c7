/**
 * `catalog-sync` on networks as they are, as a child process: HTTP_PROXY / NO_PROXY from the environment (a local
 * forward proxy counts what passes), a failed fetch naming its attempts with a hint, and `--verbose` logging each
 * request, retry and checkpoint as Powertools JSON lines on stderr.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../testkit/cli-process.js';
import { freePort } from '../../../testkit/emulator-processes.js';
import { ForwardProxy } from '../../../testkit/forward-proxy.js';
import { at, catalog, jsonLines, newDir, replica, useReplica } from './cli-local-kit.js';

useReplica();

let proxy: ForwardProxy;
beforeAll(async () => {
  proxy = await ForwardProxy.start({ credentials: 'alice:s3cret' });
});
afterAll(async () => {
  await proxy.stop();
});

const proxyUrl = () => proxy.url.replace('//', '//alice:s3cret@');

interface LogLine {
  level: string;
  message: string;
  timestamp: string;
  service: string;
  [field: string]: unknown;
}

describe('catalog-sync and the proxy variables', () => {
  it('with HTTP_PROXY set, every request of `run` goes through the proxy; with NO_PROXY matching, none does', async () => {
    replica.clearLog();
    proxy.requests.length = 0;
    const through = await runCli(['run', ...at(newDir('proxied')), '--json', '--max-commits', '20'], {
      HTTP_PROXY: proxyUrl(),
    });
    expect(through.stderr).toBe('');
    expect(through.code).toBe(0);
    expect(jsonLines(through.stdout)[0]).toMatchObject({ commits: 20 });
    expect(replica.requests.length).toBeGreaterThan(20);
    expect(proxy.requests.map((r) => r.path).sort()).toEqual(replica.requests.map((r) => r.path).sort());

    replica.clearLog();
    proxy.requests.length = 0;
    const direct = await runCli(['run', ...at(newDir('direct')), '--json', '--max-commits', '20'], {
      http_proxy: proxyUrl(),
      no_proxy: 'localhost,127.0.0.1',
    });
    expect(direct.code).toBe(0);
    expect(replica.requests.length).toBeGreaterThan(20);
    expect(proxy.requests).toEqual([]);
  });

  it('a proxy that is down: the error names the attempts and HTTP_PROXY, never its credentials; exit 1', async () => {
    const port = await freePort();
    const result = await runCli(['run', ...at(newDir('proxy-down'))], {
      HTTP_PROXY: `http://alice:s3cret@127.0.0.1:${port}`,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('(5 attempts). Hint: requests to 127.0.0.1:');
    expect(result.stderr).toContain(`go through the proxy of HTTP_PROXY (http://127.0.0.1:${port})`);
    expect(result.stderr).not.toContain('s3cret');
  });

  it('a refused port without a proxy: the attempts and a hint naming the host', async () => {
    const port = await freePort();
    const result = await runCli([
      'run',
      '--source',
      `http://127.0.0.1:${port}/v3/index.json`,
      '--data-dir',
      newDir('refused'),
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('ECONNREFUSED');
    expect(result.stderr).toContain(`(5 attempts). Hint: could not connect to 127.0.0.1:${port} (ECONNREFUSED)`);
  });
});

describe('--verbose', () => {
  it('`run --verbose` logs each request, and each checkpoint, as Powertools JSON lines on stderr', async () => {
    replica.clearLog();
    const result = await runCli(['run', ...at(newDir('verbose')), '--json', '--verbose', '--max-commits', '10']);
    expect(result.code).toBe(0);
    expect(jsonLines(result.stdout)).toHaveLength(1);
    const lines = result.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as LogLine);
    for (const line of lines) {
      expect(line).toMatchObject({ service: 'catalog-sync' });
      expect(typeof line.timestamp).toBe('string');
      expect(['INFO', 'WARN', 'ERROR']).toContain(line.level);
    }
    const requests = lines.filter((line) => line.message === 'request');
    expect(requests.map((r) => new URL(r.url as string).pathname).sort()).toEqual(
      replica.requests.map((r) => r.path).sort(),
    );
    for (const request of requests)
      expect(request).toMatchObject({ method: 'GET', status: 200, attempt: 1, ms: expect.any(Number) });
    expect(requests.map((r) => r.url)).toContain(replica.serviceIndexUrl);
    const checkpoints = lines.filter((line) => line.message === 'checkpoint');
    expect(checkpoints.length).toBeGreaterThan(0);
    expect(checkpoints.at(-1)).toMatchObject({
      cursorName: expect.any(String),
      outcome: 'written',
      cursor: jsonLines(result.stdout)[0]!.cursorAfter,
    });
    expect(lines.some((line) => line.message === 'run finished')).toBe(true);
  });

  it('logs each retry with why and the delay; without --verbose, nothing on stderr', async () => {
    replica.failWith('/v3/catalog0/index.json', 503, 1);
    const verbose = await runCli(['run', ...at(newDir('verbose-retry')), '--json', '--verbose', '--max-commits', '2']);
    expect(verbose.code).toBe(0);
    const lines = verbose.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as LogLine);
    expect(lines.find((line) => line.message === 'request failed')).toMatchObject({
      level: 'WARN',
      status: 503,
      error: 'HTTP 503',
    });
    expect(lines.find((line) => line.message === 'retry')).toMatchObject({
      level: 'WARN',
      attempt: 1,
      why: 'HTTP 503',
      delayMs: expect.any(Number),
    });

    const quiet = await runCli(['run', ...at(newDir('quiet')), '--json', '--max-commits', '2']);
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toBe('');
  });

  it('`backfill --verbose` logs the requests and range checkpoints of its workers', async () => {
    const result = await runCli([
      'backfill',
      ...at(newDir('backfill-verbose')),
      '--workers',
      '2',
      '--range-leaves',
      '40',
      '--json',
      '--verbose',
    ]);
    expect(result.code).toBe(0);
    expect(jsonLines(result.stdout)).toHaveLength(1);
    const lines = result.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as LogLine);
    expect(lines.filter((l) => l.message === 'request').length).toBeGreaterThan(catalog.commits.length);
    const checkpoints = lines.filter((l) => l.message === 'checkpoint');
    expect(checkpoints.length).toBeGreaterThan(1);
    expect(new Set(checkpoints.map((c) => c.range)).size).toBeGreaterThan(1);
    for (const c of checkpoints)
      expect(c).toMatchObject({ backfillId: expect.any(String), outcome: 'written', service: 'catalog-sync' });
  });

  it('`status --verbose` logs its requests', async () => {
    const dir = newDir('status-verbose');
    await runCli(['run', ...at(dir), '--json', '--max-commits', '3']);
    const result = await runCli(['status', ...at(dir), '--verbose']);
    expect(result.code).toBe(0);
    const lines = result.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as LogLine);
    expect(lines.map((l) => l.url)).toContain(replica.serviceIndexUrl);
    expect(lines.every((l) => l.message === 'request' && l.service === 'catalog-sync')).toBe(true);
  });
});
