/**
 * The latest view over real nuget.org catalog documents (the NuGetGallery NgTests catalogs in test/fixtures/): the
 * follower mirrors each catalog into a folder, `catalog-sync view` builds the view, and it must equal the view
 * worked out from the fixture pages and leaves alone: a non-normalized delete (`1.0`) tombstones `1.0.0`, a package
 * commit then a two-package commit, SemVer 2.0.0 versions, listed from the leaves (or `published` in 1900). Rebuild: same bytes.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commitKeyOf, leafKey } from '../../../lambda/contract/keys.js';
import { formatTimestamp, parseTimestamp } from '../../../lambda/contract/time.js';
import { compareVersions } from '../../../lambda/contract/version-order.js';
import { LocalStore } from '../../../lambda/stores/local-store.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import type { FixtureSelection } from '../../../testkit/fixture-source.js';
import { runCli } from '../../../testkit/cli-process.js';
import { versionIdentity } from '../../../testkit/package-identities.js';
import { FIXTURES } from '../replica-kit.js';

interface Item {
  '@id': string;
  '@type': string;
  commitTimeStamp: string;
  'nuget:id': string;
  'nuget:version': string;
}

/** The fixture documents of a catalog, by `@id`. */
function documentsOf(selection: FixtureSelection): Map<string, Record<string, unknown>> {
  const documents = new Map<string, Record<string, unknown>>();
  for (const name of readdirSync(FIXTURES).filter(
    (file) => (selection.files?.includes(file) ?? file.startsWith(selection.prefix!)) && file.endsWith('.json'),
  )) {
    const document = JSON.parse(readFileSync(join(FIXTURES, name), 'utf8').replace(/^\uFEFF/, '')) as Record<
      string,
      unknown
    >;
    documents.set(document['@id'] as string, document);
  }
  return documents;
}

/** The view worked out from the fixture pages and leaves. */
function expectedFrom(documents: Map<string, Record<string, unknown>>): Map<string, unknown> {
  const items = [...documents.values()]
    .filter((d) => d['@type'] === 'CatalogPage')
    .flatMap((page) => page['items'] as Item[]);
  items.sort((a, b) => compareTicks(a.commitTimeStamp, b.commitTimeStamp));
  const packages = new Map<
    string,
    { id: string; commitKey: string; commitTimeStamp: string; versions: Map<string, Record<string, unknown>> }
  >();
  for (const item of items) {
    const id = item['nuget:id'];
    const commitKey = commitKeyOf(item.commitTimeStamp);
    const commitTimeStamp = formatTimestamp(parseTimestamp(item.commitTimeStamp));
    const known = packages.get(id.toLowerCase()) ?? { id, commitKey, commitTimeStamp, versions: new Map() };
    const version = versionIdentity(item['nuget:version']);
    const entry: Record<string, unknown> = {
      version,
      type: item['@type'] === 'nuget:PackageDelete' ? 'delete' : 'details',
      leaf: leafKey('', commitKey, id, item['nuget:version']),
      commitKey,
      commitTimeStamp,
    };
    if (entry['type'] === 'details') {
      const leaf = documents.get(item['@id'])!;
      entry['listed'] =
        typeof leaf['listed'] === 'boolean' ? leaf['listed'] : !String(leaf['published']).startsWith('1900-');
    }
    known.versions.set(version, entry);
    packages.set(id.toLowerCase(), { id, commitKey, commitTimeStamp, versions: known.versions });
  }
  return new Map(
    [...packages].map(([id, p]) => [
      id,
      {
        id: p.id,
        commitKey: p.commitKey,
        commitTimeStamp: p.commitTimeStamp,
        versions: [...p.versions.values()].sort((a, b) =>
          compareVersions(a['version'] as string, b['version'] as string),
        ),
      },
    ]),
  );
}

function compareTicks(a: string, b: string): number {
  const [x, y] = [parseTimestamp(a), parseTimestamp(b)];
  return x < y ? -1 : x > y ? 1 : 0;
}

describe('latest view over the NuGetGallery fixture catalogs', () => {
  const twoCommits = ['TestCatalogWithCommitThenTwoPackageCommit', 'TestCatalogStorageWithThreePackages'];
  it.each<[string, FixtureSelection]>([
    ['TestCatalogWithNonNormalizedDelete', { prefix: 'TestCatalogWithNonNormalizedDelete' }],
    ['TestCatalogStorageWithSemVer2', { prefix: 'TestCatalogStorageWithSemVer2' }],
    [
      twoCommits[0]!,
      {
        files: [
          ...['Index', 'Page', 'AnotherPackage100'].map((f) => `${twoCommits[0]}${f}.json`),
          ...['ListedPackage100', 'ListedPackage101', 'UnlistedPackage100'].map((f) => `${twoCommits[1]}${f}.json`),
        ],
      },
    ],
  ])('%s', async (name, selection) => {
    const replica = await CatalogReplica.startFromFixtures(FIXTURES, 'http://tempuri.org/', selection);
    const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-view-fixtures-'));
    try {
      const run = await runCli(['run', '--source', replica.serviceIndexUrl, '--data-dir', dir, '--json']);
      expect(run.code, run.stderr).toBe(0);
      const view = await runCli(['view', '--data-dir', dir, '--json']);
      expect(view.code, view.stderr).toBe(0);
      const store = new LocalStore(dir);
      const stored = new Map<string, Buffer>();
      for await (const key of store.listKeys('packages/')) stored.set(key, (await store.getBytes(key))!);
      const expected = expectedFrom(documentsOf(selection));
      expect(stored.size).toBe(expected.size);
      // What each catalog is here for, so the reference cannot quietly agree on less.
      const all = JSON.stringify([...expected.values()]);
      if (name === 'TestCatalogWithNonNormalizedDelete')
        expect((expected.get('otherpackage') as { versions: unknown[] }).versions).toMatchObject([
          { version: '1.0.0', type: 'delete' },
        ]);
      if (selection.files) expect(all).toContain('"listed":false');
      if (name === 'TestCatalogStorageWithSemVer2') expect(all).toContain('"version":"1.0.0-alpha.1"');
      for (const [id, index] of expected)
        expect(
          JSON.parse(stored.get(`packages/${encodeURIComponent(id).toLowerCase()}/index.json`)!.toString('utf8')),
        ).toEqual(index);
      rmSync(join(dir, 'packages'), { recursive: true });
      expect((await runCli(['view', '--data-dir', dir, '--rebuild'])).code).toBe(0);
      for (const [key, bytes] of stored) expect((await store.getBytes(key))!.equals(bytes), key).toBe(true);
    } finally {
      await replica.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
