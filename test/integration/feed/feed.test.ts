/**
 * The private feed (issue 33) on S3 + DynamoDB Local and on a folder, in process: a catalog of real packages (a
 * dependency graph, an unlisted, a deprecated and a vulnerable version, SemVer 2, a byte-order-mark leaf) is mirrored,
 * its latest view kept and the feed kept over it. The packages are the leaves' bytes; the documents have the shapes
 * NuGet's own code accepted (FINDINGS of the interop research: absolute URLs, `listed` written, `{}` pages); an
 * unlist, a deprecation, a vulnerability and a delete reach the feed in the one batch of their commit; a re-add stores
 * the package again; a package the source does not serve yet waits and is stored once served; bytes that are not the
 * leaf's are quarantined outside `feed/`; a package's key is the path NuGet asks for (the id and the normalized version
 * lowercased, build metadata dropped). Every write is checked for the order a client relies on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalFeedStorage, S3FeedStorage, type FeedStorage } from '../../../lambda/feed/index.js';
import type { LocalStore } from '../../../lambda/stores/local-store.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { FeedCatalog, mirrorCommits, OrderCheckedStorage, runFeed, type FeedPlace } from '../../../testkit/feed-kit.js';
import { openViewTarget, VIEW_KINDS, type ViewTestTarget } from '../../../testkit/view-harness.js';

const BASE = 'https://feed.example.test/nuget/';
const VULNERABLE = { advisoryUrl: 'https://example.com/advisories/GHSA-c-1', severity: '2' } as const;

describe.each(VIEW_KINDS)('the private feed: %s', (kind) => {
  const prefix = 'm/';
  const built = new FeedCatalog();
  let replica: CatalogReplica;
  let target: ViewTestTarget;
  let checked: OrderCheckedStorage;
  let place: FeedPlace;
  let now = Date.parse('2026-01-01T00:00:00Z');

  const json = async (key: string): Promise<any> => {
    const stored = await place.storage.read(`${prefix}${key}`);
    return stored === undefined ? undefined : JSON.parse(stored.bytes.toString('utf8'));
  };
  const bytes = async (key: string): Promise<Buffer | undefined> =>
    (await place.storage.read(`${prefix}${key}`))?.bytes;
  const feed = (batchSize?: number) =>
    runFeed(place, replica.serviceIndexUrl, BASE, { now: () => now, ...(batchSize ? { batchSize } : {}) });
  const registration = async (id: string): Promise<Map<string, any>> => {
    const index = await json(`feed/registration/${id}/index.json`);
    return new Map(
      index.items.flatMap((page: any) => page.items).map((item: any) => [item.catalogEntry.version, item]),
    );
  };

  beforeAll(async () => {
    built.commit([
      { id: 'Demo.C', version: '0.9.0', listed: false },
      { id: 'Demo.C', version: '1.0.0', vulnerabilities: [VULNERABLE] },
      { id: 'Demo.C', version: '2.0.0-rc.1' },
      {
        id: 'Demo.B',
        version: '0.5.0',
        deprecation: {
          reasons: ['Legacy'],
          message: 'Use 1.x',
          alternatePackage: { id: 'Demo.B', range: '[1.0.0, )' },
        },
      },
      { id: 'Demo.B', version: '1.0.0', dependencies: [{ id: 'Demo.C', range: '[1.0.0, )' }] },
    ]);
    built.commit([
      { id: 'Demo.A', version: '1.0.0', dependencies: [{ id: 'Demo.B', range: '[1.0.0, )' }] },
      { id: 'Demo.A', version: '2.0.0-beta.1+sha.abc', bom: true },
      { id: 'Gone.Soon', version: '1.0.0' },
    ]);
    replica = await CatalogReplica.start({ catalog: built.catalog });
    target = await openViewTarget(kind, prefix);
    const storage: FeedStorage =
      kind === 'local folder'
        ? new LocalFeedStorage(target.mirror.where, target.store as LocalStore)
        : new S3FeedStorage(target.harness!.bucket, target.harness!.clients.s3);
    checked = new OrderCheckedStorage(storage, `${prefix}feed/`);
    place = { ...target, storage: checked };
    await mirrorCommits(place, built.catalog.commits);
  });
  afterAll(async () => {
    await replica?.stop();
    target?.close();
  });

  it("stores every package as its leaf's bytes, and writes the documents NuGet reads", async () => {
    const run = await feed();
    expect(run).toMatchObject({ commits: 2, stored: 8, waiting: 0, quarantined: 0 });
    for (const [id, version, lower] of [
      ['Demo.C', '0.9.0', '0.9.0'],
      ['Demo.A', '2.0.0-beta.1+sha.abc', '2.0.0-beta.1'],
      ['Gone.Soon', '1.0.0', '1.0.0'],
    ] as const) {
      const key = `feed/flat/${id.toLowerCase()}/${lower}/${id.toLowerCase()}.${lower}.nupkg`;
      expect((await bytes(key))?.equals(built.latest(id, version).package!.bytes), key).toBe(true);
    }
    expect(await json('feed/flat/demo.c/index.json')).toEqual({ versions: ['0.9.0', '1.0.0', '2.0.0-rc.1'] });
    expect(await json('feed/flat/demo.a/index.json')).toEqual({ versions: ['1.0.0', '2.0.0-beta.1'] });

    const service = await json('feed/index.json');
    expect(service.resources.map((r: any) => [r['@type'], r['@id']])).toEqual([
      ['PackageBaseAddress/3.0.0', `${BASE}flat/`],
      ['RegistrationsBaseUrl/3.6.0', `${BASE}registration/`],
      ['VulnerabilityInfo/6.7.0', `${BASE}vulnerabilities/index.json`],
    ]);

    const c = await json('feed/registration/demo.c/index.json');
    expect(c).toMatchObject({ '@id': `${BASE}registration/demo.c/index.json`, count: 1 });
    expect(c.items[0]).toMatchObject({ '@type': 'catalog:CatalogPage', count: 3, lower: '0.9.0', upper: '2.0.0-rc.1' });
    const items = await registration('demo.c');
    expect(items.get('0.9.0').catalogEntry.listed).toBe(false);
    expect(items.get('2.0.0-rc.1').catalogEntry.listed).toBe(true);
    expect(items.get('1.0.0').catalogEntry.vulnerabilities).toMatchObject([VULNERABLE]);
    expect(items.get('1.0.0').packageContent).toBe(`${BASE}flat/demo.c/1.0.0/demo.c.1.0.0.nupkg`);
    expect(items.get('1.0.0').catalogEntry.packageContent).toBe(items.get('1.0.0').packageContent);
    expect(items.get('1.0.0').catalogEntry).not.toHaveProperty('packageEntries');
    expect(items.get('1.0.0').catalogEntry).not.toHaveProperty('@context');
    expect((await registration('demo.b')).get('0.5.0').catalogEntry.deprecation).toMatchObject({ reasons: ['Legacy'] });
    expect((await registration('demo.b')).get('1.0.0').catalogEntry.dependencyGroups[0].dependencies[0]).toMatchObject({
      id: 'Demo.C',
      range: '[1.0.0, )',
    });
    // The full version (build metadata) in the entry; the normalized one in the page's bounds and the flat index.
    expect([...(await registration('demo.a')).keys()]).toEqual(['1.0.0', '2.0.0-beta.1+sha.abc']);

    const vulnerabilities = await json('feed/vulnerabilities/index.json');
    expect(vulnerabilities).toHaveLength(16);
    expect(vulnerabilities[0]).toMatchObject({ '@name': 'page-0', '@id': `${BASE}vulnerabilities/page-0.json` });
    const pages = await Promise.all(
      vulnerabilities.map((_: unknown, n: number) => json(`feed/vulnerabilities/page-${n}.json`)),
    );
    expect(pages.filter((page) => Object.keys(page).length > 0)).toEqual([
      { 'demo.c': [{ url: VULNERABLE.advisoryUrl, severity: 2, versions: '[1.0.0, 1.0.0]' }] },
    ]);
    expect(pages.filter((page) => Object.keys(page).length === 0)).toHaveLength(15);
    // The feed's bookkeeping is beside feed/, never under it.
    expect(await json('feed-state/settings.json')).toEqual({ baseUrl: BASE });
    expect(await json('feed-state/packages/demo.c.json')).toMatchObject({ id: 'Demo.C', baseUrl: BASE });
    expect(checked.violations).toEqual([]);
    // Nothing new: nothing written again.
    expect(await feed()).toMatchObject({ commits: 0, stored: 0, documents: 0 });
  });

  it('an unlist, a deprecation, a vulnerability and a delete reach the feed in the batch of their commit; a re-add stores again', async () => {
    const commit = built.commit([
      { id: 'Demo.C', version: '1.0.0', listed: false, vulnerabilities: [VULNERABLE] },
      {
        id: 'Demo.A',
        version: '1.0.0',
        deprecation: { reasons: ['CriticalBugs'] },
        dependencies: [{ id: 'Demo.B', range: '[1.0.0, )' }],
      },
      {
        id: 'Demo.B',
        version: '1.0.0',
        vulnerabilities: [{ advisoryUrl: 'https://example.com/b', severity: '3' }],
        dependencies: [{ id: 'Demo.C', range: '[1.0.0, )' }],
      },
      { id: 'Gone.Soon', version: '1.0.0', delete: true },
    ]);
    await mirrorCommits(place, [commit]);
    expect(await feed(1)).toMatchObject({ commits: 1, stored: 0, removed: 1 });
    expect((await registration('demo.c')).get('1.0.0').catalogEntry.listed).toBe(false);
    expect(await json('feed/flat/demo.c/index.json')).toEqual({ versions: ['0.9.0', '1.0.0', '2.0.0-rc.1'] });
    expect((await registration('demo.a')).get('1.0.0').catalogEntry.deprecation).toMatchObject({
      reasons: ['CriticalBugs'],
    });
    expect((await registration('demo.b')).get('1.0.0').catalogEntry.vulnerabilities).toMatchObject([{ severity: '3' }]);
    const pages = await Promise.all(Array.from({ length: 16 }, (_, n) => json(`feed/vulnerabilities/page-${n}.json`)));
    expect(Object.assign({}, ...pages)).toEqual({
      'demo.b': [{ url: 'https://example.com/b', severity: 3, versions: '[1.0.0, 1.0.0]' }],
      'demo.c': [{ url: VULNERABLE.advisoryUrl, severity: 2, versions: '[1.0.0, 1.0.0]' }],
    });
    // Deleted: no version list, no registration, no package (a 404, as for an id the source never had).
    expect(await bytes('feed/flat/gone.soon/index.json')).toBeUndefined();
    expect(await bytes('feed/registration/gone.soon/index.json')).toBeUndefined();
    expect(await bytes('feed/flat/gone.soon/1.0.0/gone.soon.1.0.0.nupkg')).toBeUndefined();

    const again = built.commit([{ id: 'Gone.Soon', version: '1.0.0' }]);
    await mirrorCommits(place, [again]);
    expect(await feed(1)).toMatchObject({ commits: 1, stored: 1 });
    expect(await json('feed/flat/gone.soon/index.json')).toEqual({ versions: ['1.0.0'] });
    expect(
      (await bytes('feed/flat/gone.soon/1.0.0/gone.soon.1.0.0.nupkg'))?.equals(
        built.latest('Gone.Soon', '1.0.0').package!.bytes,
      ),
    ).toBe(true);
    expect(checked.violations).toEqual([]);
  });

  it("a package the source does not serve yet waits and is stored once served; bytes not the leaf's are quarantined", async () => {
    const commit = built.commit([
      { id: 'Lagging.Pkg', version: '1.0.0' },
      { id: 'Bad.Pkg', version: '1.0.0' },
      { id: 'Demo.C', version: '3.0.0' },
    ]);
    replica.packages.withhold('Lagging.Pkg', '1.0.0');
    replica.packages.corrupt('Bad.Pkg', '1.0.0');
    await mirrorCommits(place, [commit]);
    // The batch goes on: the other package of the commit is in, the cursor moves past the commit.
    expect(await feed()).toMatchObject({ commits: 1, stored: 1, waiting: 1, quarantined: 1 });
    expect(await json('feed/flat/demo.c/index.json')).toEqual({ versions: ['0.9.0', '1.0.0', '2.0.0-rc.1', '3.0.0'] });
    expect(await bytes('feed/flat/lagging.pkg/index.json')).toBeUndefined();
    expect(await bytes('feed/flat/lagging.pkg/1.0.0/lagging.pkg.1.0.0.nupkg')).toBeUndefined();
    expect(await json('feed-state/waiting/lagging.pkg.json')).toMatchObject({ id: 'Lagging.Pkg' });
    expect(await bytes('feed/flat/bad.pkg/1.0.0/bad.pkg.1.0.0.nupkg')).toBeUndefined();
    expect(await bytes('feed/flat/bad.pkg/index.json')).toBeUndefined();
    const record = await json('feed-state/quarantine/bad.pkg/1.0.0.json');
    expect(record).toMatchObject({
      id: 'Bad.Pkg',
      version: '1.0.0',
      reason: 'the bytes served are not what the leaf says',
    });
    expect(record.actual.size).toBe(record.expected.size);
    expect(record.actual.hash).not.toBe(record.expected.hash);

    // Not due yet: not asked again. Once due, and served: stored, listed, no longer waiting.
    replica.packages.release('Lagging.Pkg', '1.0.0');
    expect(await feed()).toMatchObject({ commits: 0, stored: 0 });
    now += 61_000;
    expect(await feed()).toMatchObject({ commits: 0, stored: 1, waiting: 0 });
    expect(await json('feed/flat/lagging.pkg/index.json')).toEqual({ versions: ['1.0.0'] });
    expect(await bytes('feed-state/waiting/lagging.pkg.json')).toBeUndefined();
    // The quarantined one is not fetched again for the same leaf.
    now += 24 * 3600_000;
    expect(await feed()).toMatchObject({ stored: 0, quarantined: 0 });
    expect(checked.violations).toEqual([]);
    // A waiting marker that is not JSON stops the run naming its key; nothing is lost (the cursor stays), and the
    // run goes on once it is removed.
    const broken = `${prefix}feed-state/waiting/broken.json`;
    await place.storage.put(broken, Buffer.from('{"id": "Broken'), 'json');
    now += 61_000;
    await expect(feed()).rejects.toThrow(`${broken}: not valid JSON`);
    await place.storage.delete(broken);
    now += 61_000;
    expect(await feed()).toMatchObject({ stored: 0 });
  });

  it('keys a package as NuGet asks for it: the id and normalized version lowercased (ToLowerInvariant), no build metadata', async () => {
    const commit = built.commit([
      { id: 'Upper.CASE.Id', version: '1.0.0-RC.1+Build.7' },
      { id: 'Upper.CASE.Id', version: '01.02.0.0-Beta' },
    ]);
    await mirrorCommits(place, [commit]);
    expect(await feed()).toMatchObject({ commits: 1, stored: 2, quarantined: 0 });
    for (const [version, lower] of [
      ['1.0.0-RC.1+Build.7', '1.0.0-rc.1'],
      ['01.02.0.0-Beta', '1.2.0-beta'],
    ] as const) {
      const key = `feed/flat/upper.case.id/${lower}/upper.case.id.${lower}.nupkg`;
      expect((await bytes(key))?.equals(built.latest('Upper.CASE.Id', version).package!.bytes), key).toBe(true);
      expect((await registration('upper.case.id')).get(version)?.packageContent).toBe(
        `${BASE}flat/upper.case.id/${lower}/upper.case.id.${lower}.nupkg`,
      );
    }
    expect(await json('feed/flat/upper.case.id/index.json')).toEqual({ versions: ['1.0.0-rc.1', '1.2.0-beta'] });
    expect(checked.violations).toEqual([]);
  });
});
