/**
 * The feed catalog-sync's own engine builds, in front of NuGet's own client, all through the built CLI as a user runs
 * it: a catalog with real `.nupkg` files (a dependency graph, a SemVer 2.0.0 package, an unlisted, a deprecated and two
 * vulnerable versions, an id of 130 versions whose registration is paged, then a delete and a re-add) served by the
 * catalog replica, mirrored (`catalog-sync run`), its latest view kept (`view`), its feed built (`feed --base-url`)
 * and served on loopback (`serve`). Then `dotnet restore` (with audit, from this feed alone, fresh caches) and
 * NuGet.Protocol (the probe) read it.
 */
import { createServer } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { runCli } from '../../testkit/cli-process.js';
import { FeedCatalog, type LeafSpec } from '../../testkit/feed-kit.js';
import { sha512 } from './hand-written-feed.js';
import { probeFeed } from './probe-kit.js';
import { restoreProject, type RestoreResult } from './restore-kit.js';
import { startServe, type ServeProcess } from './serve-process.js';

const ADVISORY_C = 'https://example.com/advisories/ENGINE-C-0001';
const ADVISORY_D = 'https://example.com/advisories/ENGINE-D-0002';

/** The first commit: A → B → C, a SemVer 2.0.0 D, an unlisted C, a deprecated B, vulnerable C and D; Gone 1 and 2. */
const FIRST: readonly LeafSpec[] = [
  { id: 'Engine.C', version: '0.9.0', listed: false },
  { id: 'Engine.C', version: '1.0.0', vulnerabilities: [{ advisoryUrl: ADVISORY_C, severity: '2' }] },
  { id: 'Engine.C', version: '1.0.1' },
  {
    id: 'Engine.B',
    version: '0.5.0',
    dependencies: [{ id: 'Engine.C', range: '[1.0.1, )' }],
    deprecation: {
      reasons: ['Legacy', 'CriticalBugs'],
      message: 'Use Engine.B 1.x.',
      alternatePackage: { id: 'Engine.B', range: '[1.0.0, )' },
    },
  },
  { id: 'Engine.B', version: '1.0.0', dependencies: [{ id: 'Engine.C', range: '[1.0.0, )' }] },
  { id: 'Engine.A', version: '1.0.0', dependencies: [{ id: 'Engine.B', range: '[1.0.0, )' }] },
  {
    id: 'Engine.D',
    version: '2.0.0-Beta.1+sha.abc123',
    vulnerabilities: [{ advisoryUrl: ADVISORY_D, severity: '3' }],
  },
  { id: 'Engine.Gone', version: '1.0.0' },
  { id: 'Engine.Gone', version: '2.0.0' },
  // 130 versions: registration in page documents of 64 (above 127), states in the second and third pages.
  ...Array.from(
    { length: 130 },
    (_, i): LeafSpec => ({
      id: 'Engine.Many',
      version: `1.0.${i}`,
      ...(i === 70 ? { deprecation: { reasons: ['Other'], message: 'Skip 1.0.70.' } } : {}),
      ...(i === 100 ? { listed: false } : {}),
      ...(i === 129
        ? { vulnerabilities: [{ advisoryUrl: 'https://example.com/advisories/ENGINE-MANY-0003', severity: '0' }] }
        : {}),
    }),
  ),
];
const IDS = [...new Set(FIRST.map((spec) => spec.id))];
/** The second commit: the delete, and changes of state (an unlist, a new deprecation, a vulnerability withdrawn). */
const SECOND: readonly LeafSpec[] = [
  { id: 'Engine.Gone', version: '2.0.0', delete: true },
  { id: 'Engine.C', version: '1.0.1', listed: false },
  { id: 'Engine.C', version: '1.0.0' },
  {
    id: 'Engine.B',
    version: '1.0.0',
    dependencies: [{ id: 'Engine.C', range: '[1.0.0, )' }],
    deprecation: { reasons: ['CriticalBugs'] },
  },
];

/** A free TCP port on loopback, for the base URL the feed is built with and serve then listens on. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('dotnet restore and NuGet.Protocol on the feed catalog-sync builds', () => {
  const built = new FeedCatalog();
  let replica: CatalogReplica;
  let dir: string;
  let base: string;
  let feedUrl: string;
  let serve: ServeProcess;
  const timings: string[] = [];
  /** The latest leaf's spec of each package the catalog holds now, by `id version`. */
  const now = new Map<string, LeafSpec>();
  const commit = (leaves: readonly LeafSpec[]): void => {
    built.commit(leaves);
    for (const spec of leaves)
      if (spec.delete) now.delete(`${spec.id} ${spec.version}`);
      else now.set(`${spec.id} ${spec.version}`, spec);
  };

  /** Mirrors the replica's new commits, keeps the view and builds the feed, each a CLI run that must succeed. */
  async function follow(...feedArgs: string[]): Promise<void> {
    const source = ['--source', replica.serviceIndexUrl, '--data-dir', dir];
    for (const args of [
      ['run', ...source],
      ['view', '--data-dir', dir],
      ['feed', ...source, ...feedArgs],
    ]) {
      const started = performance.now();
      const result = await runCli(args);
      expect(result.code, `catalog-sync ${args.join(' ')}\n${result.stdout}${result.stderr}`).toBe(0);
      timings.push(`${args[0]} ${((performance.now() - started) / 1000).toFixed(1)} s`);
    }
  }
  const hashOf = (id: string, version: string): string => sha512(built.latest(id, version).package!.bytes);
  const codes = (restore: RestoreResult) => restore.logs.map((log) => [log.code, log.level, log.libraryId]);

  beforeAll(async () => {
    commit(FIRST);
    replica = await CatalogReplica.start({ catalog: built.catalog });
    dir = mkdtempSync(join(tmpdir(), 'catalog-sync-engine-feed-'));
    base = `http://127.0.0.1:${await freePort()}/`;
    feedUrl = `${base}index.json`;
    await follow('--base-url', base);
    serve = await startServe(dir, new URL(base).port);
    expect(serve.base).toBe(base);
    // The feed was built for the URL serve now serves it at: serve does not warn.
    expect(serve.stderr()).not.toContain('warning');
  });
  afterAll(async () => {
    await serve?.stop();
    await replica?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    console.log(`catalog-sync steps: ${timings.join(', ')}`);
  });

  it('restores the graph and a SemVer 2.0.0 package from it alone, and audit reports the vulnerable versions (one transitive)', async () => {
    const restore = await restoreProject({
      feedUrl,
      references: { 'Engine.A': '1.0.0', 'Engine.D': '2.0.0-beta.1' },
    });
    console.log(`dotnet restore printed:\n${restore.output}`);
    expect(restore.exitCode, restore.output).toBe(0);
    expect(restore.graph).toEqual(['Engine.A/1.0.0', 'Engine.B/1.0.0', 'Engine.C/1.0.0', 'Engine.D/2.0.0-Beta.1']);
    expect(restore.sha512, restore.output).toEqual({
      'Engine.A/1.0.0': hashOf('Engine.A', '1.0.0'),
      'Engine.B/1.0.0': hashOf('Engine.B', '1.0.0'),
      'Engine.C/1.0.0': hashOf('Engine.C', '1.0.0'),
      'Engine.D/2.0.0-Beta.1': hashOf('Engine.D', '2.0.0-Beta.1+sha.abc123'),
    });
    expect(restore.sources).toEqual([feedUrl]);
    expect(restore.packageFolders).toEqual([restore.packagesFolder]);
    expect(codes(restore).sort()).toEqual([
      ['NU1903', 'Warning', 'Engine.C'],
      ['NU1904', 'Warning', 'Engine.D'],
    ]);
    expect(serve.served()).toEqual(
      expect.arrayContaining([
        'GET /index.json 200',
        'GET /flat/engine.a/1.0.0/engine.a.1.0.0.nupkg 200',
        'GET /flat/engine.d/2.0.0-beta.1/engine.d.2.0.0-beta.1.nupkg 200',
        'GET /vulnerabilities/index.json 200',
      ]),
    );
  });

  it('a deleted version is not restorable (NU1102), restorable again once re-added; a withdrawn vulnerability is no longer reported', async () => {
    commit(SECOND); // with changes of state, which the last test reads
    await follow();
    const nupkg = join(dir, 'feed/flat/engine.gone/2.0.0/engine.gone.2.0.0.nupkg');
    expect(existsSync(nupkg)).toBe(false);
    const gone = await restoreProject({ feedUrl, references: { 'Engine.Gone': '[2.0.0]' } });
    console.log(`dotnet restore printed:\n${gone.output}`);
    expect(gone.exitCode).not.toBe(0);
    expect(codes(gone)).toEqual([['NU1102', 'Error', 'Engine.Gone']]);

    commit([{ id: 'Engine.Gone', version: '2.0.0' }]);
    await follow();
    // Engine.B 1.0.0 → Engine.C 1.0.0 again: its vulnerability withdrawn, audit has nothing to say.
    const back = await restoreProject({ feedUrl, references: { 'Engine.Gone': '[2.0.0]', 'Engine.B': '1.0.0' } });
    console.log(`dotnet restore printed:\n${back.output}`);
    expect(back.exitCode, back.output).toBe(0);
    expect(back.sha512).toEqual({
      'Engine.B/1.0.0': hashOf('Engine.B', '1.0.0'),
      'Engine.C/1.0.0': hashOf('Engine.C', '1.0.0'),
      'Engine.Gone/2.0.0': hashOf('Engine.Gone', '2.0.0'),
    });
    expect(codes(back)).toEqual([]);
    expect(serve.served()).toContain('GET /flat/engine.gone/2.0.0/engine.gone.2.0.0.nupkg 200');
  });

  it('NuGet.Protocol reads every version with the listed, deprecation and vulnerability state its latest leaf gave', async () => {
    const reading = await probeFeed(feedUrl, IDS);
    expect(reading.resources).toEqual({
      findPackageById: 'HttpFileSystemBasedFindPackageByIdResource',
      packageMetadata: 'PackageMetadataResourceV3',
      vulnerabilityInfo: 'VulnerabilityInfoResourceV3',
    });
    expect(reading.vulnerabilityErrors).toEqual([]);
    const many = JSON.parse(readFileSync(join(dir, 'feed/registration/engine.many/index.json'), 'utf8')) as {
      items: { '@id': string; count: number; items?: unknown }[];
    };
    expect(many.items.map((page) => [page['@id'], page.count, page.items])).toEqual(
      [0, 1, 2].map((n) => [`${base}registration/engine.many/page/${n}.json`, [64, 64, 2][n], undefined]),
    );
    const expected = [...now.values()].map((spec) => {
      const leaf = built.latest(spec.id, spec.version);
      const vulnerabilities = spec.vulnerabilities?.map((v) => ({ url: v.advisoryUrl, severity: Number(v.severity) }));
      return {
        id: spec.id,
        fullVersion: spec.version,
        inFlat: true,
        inRegistration: true,
        listed: spec.listed ?? true,
        deprecation: spec.deprecation ? { message: null, alternatePackage: null, ...spec.deprecation } : null,
        vulnerabilities: vulnerabilities?.map(({ url, severity }) => ({ advisoryUrl: url, severity })) ?? null,
        audit: vulnerabilities ?? null,
        download: { found: true, size: leaf.package!.bytes.length, sha512: hashOf(spec.id, spec.version) },
        nuspecDependencies: (spec.dependencies ?? []).map((d) => `net10.0:${d.id}:${d.range}`),
      };
    });
    const read = reading.versions.map((version) => ({
      id: version.id,
      fullVersion: version.fullVersion,
      inFlat: version.inFlat,
      inRegistration: version.inRegistration,
      listed: version.listed,
      deprecation: version.deprecation,
      vulnerabilities: version.vulnerabilities,
      // The probe gives [] for a version of an id with advisories for other versions only.
      audit: version.audit?.length ? version.audit.map(({ url, severity }) => ({ url, severity })) : null,
      download: version.download?.found
        ? { found: true, size: version.download.size, sha512: version.download.sha512 }
        : version.download,
      nuspecDependencies: version.download?.found ? version.download.nuspec?.dependencies : undefined,
    }));
    const order = (a: { id: string; fullVersion: string }, b: { id: string; fullVersion: string }) =>
      `${a.id} ${a.fullVersion}` < `${b.id} ${b.fullVersion}` ? -1 : 1;
    expect(read.sort(order)).toEqual(expected.sort(order));
  });
});
