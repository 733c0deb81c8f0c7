/**
 * The interop harness proves itself: a tiny hand-written static feed (a service index, a flat container holding the
 * test kit's generated `.nupkg` files, and vulnerability data), served from a folder on loopback, is restored by
 * `dotnet restore` (audit included) and read by NuGet.Protocol (the probe). What the feed writer of issue 33 will
 * produce is checked the same way.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildNupkg } from '../../testkit/nupkg.js';
import { StaticFeedServer } from '../../testkit/static-feed-server.js';
import { ADVISORY, flatVersion, PACKAGES, sha512, writeFeed } from './hand-written-feed.js';
import { probeFeed } from './probe-kit.js';
import { restoreProject } from './restore-kit.js';

describe('the interop harness against a hand-written static feed', () => {
  let folder: string;
  let server: StaticFeedServer;
  let feedUrl: string;
  const bytes = new Map(PACKAGES.map((spec) => [spec, buildNupkg(spec)]));
  const hashOf = (id: string, version: string): string =>
    sha512([...bytes].find(([spec]) => spec.id === id && spec.version === version)![1]);

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'catalog-sync-static-feed-'));
    // The server first: the feed's URLs are absolute and must name its port.
    server = await StaticFeedServer.start(folder);
    writeFeed(folder, server.baseUrl, bytes);
    feedUrl = `${server.baseUrl}index.json`;
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(folder, { recursive: true, force: true });
  });

  it('dotnet restore takes a package and its dependency from this feed alone, with fresh caches, and audits them', async () => {
    server.requests.length = 0;
    const restore = await restoreProject({ feedUrl, references: { 'Smoke.App': '1.0.0' } });
    expect(restore.exitCode, restore.output).toBe(0);
    expect(restore.graph).toEqual(['Smoke.App/1.0.0', 'Smoke.Lib/1.0.0']);
    expect(restore.sha512).toEqual({
      'Smoke.App/1.0.0': hashOf('Smoke.App', '1.0.0'),
      'Smoke.Lib/1.0.0': hashOf('Smoke.Lib', '1.0.0'),
    });
    expect(restore.packageFolders).toEqual([restore.packagesFolder]);
    expect(restore.sources).toEqual([feedUrl]);
    expect(
      restore.logs.map((log) => [log.code, log.level, log.libraryId]),
      restore.output,
    ).toEqual([['NU1903', 'Warning', 'Smoke.Lib']]);
    for (const path of ['/flat/smoke.app/1.0.0/smoke.app.1.0.0.nupkg', '/flat/smoke.lib/1.0.0/smoke.lib.1.0.0.nupkg']) {
      expect(server.requests, path).toContainEqual({ method: 'GET', path, status: 200 });
    }
  });

  it('dotnet restore takes a SemVer 2.0.0 version, and fails a missing id with NU1101 after a 404', async () => {
    const semver2 = await restoreProject({ feedUrl, references: { 'Smoke.Lib': '[2.0.0-beta.1]' } });
    expect(semver2.exitCode, semver2.output).toBe(0);
    expect(semver2.graph).toEqual(['Smoke.Lib/2.0.0-Beta.1']);
    expect(semver2.sha512['Smoke.Lib/2.0.0-Beta.1']).toBe(hashOf('Smoke.Lib', '2.0.0-Beta.1+sha.abc123'));

    server.requests.length = 0;
    const missing = await restoreProject({ feedUrl, references: { 'Smoke.Missing': '1.0.0' } });
    expect(missing.exitCode).not.toBe(0);
    expect(
      missing.logs.map((log) => [log.code, log.libraryId]),
      missing.output,
    ).toContainEqual(['NU1101', 'Smoke.Missing']);
    expect(server.requests).toContainEqual({ method: 'GET', path: '/flat/smoke.missing/index.json', status: 404 });
  });

  it('NuGet.Protocol reads every version: the bytes served and the nuspec inside them', async () => {
    const reading = await probeFeed(feedUrl, ['Smoke.App', 'Smoke.Lib', 'Smoke.Missing']);
    expect(reading.resources).toEqual({
      findPackageById: 'HttpFileSystemBasedFindPackageByIdResource',
      packageMetadata: null,
      vulnerabilityInfo: 'VulnerabilityInfoResourceV3',
    });
    expect(reading.vulnerabilityErrors).toEqual([]);
    expect(reading.versions.map((v) => [v.id, v.version, v.audit])).toEqual([
      ['Smoke.App', '1.0.0', null],
      ['Smoke.Lib', '1.0.0', [ADVISORY]],
      ['Smoke.Lib', '2.0.0-beta.1', []],
    ]);
    expect(reading.ids).toEqual([
      { id: 'Smoke.App', flat: ['1.0.0'], registration: [] },
      { id: 'Smoke.Lib', flat: ['1.0.0', '2.0.0-beta.1'], registration: [] },
      { id: 'Smoke.Missing', flat: [], registration: [] },
    ]);
    expect(reading.versions.map((v) => [v.id, v.version, v.download])).toEqual(
      PACKAGES.map((spec) => [
        spec.id,
        flatVersion(spec.version),
        {
          found: true,
          size: bytes.get(spec)!.length,
          sha512: sha512(bytes.get(spec)!),
          nuspec: {
            id: spec.id,
            version: spec.version,
            dependencies: (spec.dependencies ?? []).map((d) => `net10.0:${d.id}:${d.range}`),
          },
        },
      ]),
    );
  });
});
