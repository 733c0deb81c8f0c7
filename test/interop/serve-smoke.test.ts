/**
 * `catalog-sync serve` in front of NuGet's own client: the hand-written feed of harness-smoke.test.ts, in a mirror
 * folder's `feed/`, served by the built CLI (a child process, as a user runs it) and restored by `dotnet restore` with
 * audit, from this feed alone and with fresh caches. A missing id gets a 404, so restore fails at once with NU1101
 * (a 403 would make it retry and fail with NU1301).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildNupkg } from '../../testkit/nupkg.js';
import { PACKAGES, sha512, writeFeed } from './hand-written-feed.js';
import { restoreProject } from './restore-kit.js';
import { startServe, type ServeProcess } from './serve-process.js';

describe('dotnet restore from a feed served by catalog-sync serve', () => {
  let mirror: string;
  let serve: ServeProcess;
  let feedUrl: string;
  const bytes = new Map(PACKAGES.map((spec) => [spec, buildNupkg(spec)]));
  const hashOf = (id: string, version: string): string =>
    sha512([...bytes].find(([spec]) => spec.id === id && spec.version === version)![1]);
  const served = (): string[] => serve.served();

  beforeAll(async () => {
    mirror = mkdtempSync(join(tmpdir(), 'catalog-sync-serve-smoke-'));
    mkdirSync(join(mirror, 'feed'));
    // serve needs a feed to start, and the feed needs serve's port: written first for a port nothing listens on
    // (serve warns), then again for the port serve took.
    writeFeed(join(mirror, 'feed'), 'http://127.0.0.1:9/', bytes);
    serve = await startServe(mirror, 0);
    const { base } = serve;
    writeFeed(join(mirror, 'feed'), base, bytes);
    feedUrl = `${base}index.json`;
  });
  afterAll(async () => {
    await serve?.stop();
    rmSync(mirror, { recursive: true, force: true });
  });

  it('restores a package and its dependency from it alone, and audits them', async () => {
    const restore = await restoreProject({ feedUrl, references: { 'Smoke.App': '1.0.0' } });
    console.log(`dotnet restore printed:\n${restore.output}`);
    expect(restore.exitCode, restore.output).toBe(0);
    expect(restore.graph).toEqual(['Smoke.App/1.0.0', 'Smoke.Lib/1.0.0']);
    expect(restore.sha512).toEqual({
      'Smoke.App/1.0.0': hashOf('Smoke.App', '1.0.0'),
      'Smoke.Lib/1.0.0': hashOf('Smoke.Lib', '1.0.0'),
    });
    expect(restore.sources).toEqual([feedUrl]);
    expect(restore.logs.map((log) => [log.code, log.level, log.libraryId])).toEqual([
      ['NU1903', 'Warning', 'Smoke.Lib'],
    ]);
    expect(served()).toEqual(
      expect.arrayContaining([
        'GET /index.json 200',
        'GET /flat/smoke.app/1.0.0/smoke.app.1.0.0.nupkg 200',
        'GET /flat/smoke.lib/1.0.0/smoke.lib.1.0.0.nupkg 200',
        'GET /vulnerabilities/base.json 200',
      ]),
    );
  });

  it('fails a missing id at once with NU1101, after a 404', async () => {
    const missing = await restoreProject({ feedUrl, references: { 'Smoke.Missing': '1.0.0' } });
    console.log(`dotnet restore printed:\n${missing.output}`);
    expect(missing.exitCode).not.toBe(0);
    expect(missing.logs.map((log) => [log.code, log.libraryId])).toContainEqual(['NU1101', 'Smoke.Missing']);
    expect(served()).toContain('GET /flat/smoke.missing/index.json 404');
    expect(served().filter((line) => line.startsWith('GET /flat/smoke.missing/'))).toHaveLength(1);
  });

  it('stops on Ctrl-C, having warned once that the feed was first written for another port', async () => {
    const result = await serve.stop();
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/stopped\n$/);
    expect(result.stderr.match(/warning: .* was written for http:\/\/127\.0\.0\.1:9\//g)).toHaveLength(1);
  });
});
