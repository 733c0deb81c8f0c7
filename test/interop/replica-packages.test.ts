/**
 * NuGet.Protocol reads the test kit's catalog replica as a package source: its flat container (`PackageBaseAddress/3.0.0`)
 * serves the `.nupkg` of every package a generated catalog holds, whose bytes are what the details leaves say
 * (`packageHash`, `packageSize`) and whose nuspec is the leaf's id, version and dependencies. So the feed's consumer,
 * which downloads from there, is tested against packages NuGet itself accepts; a withheld or corrupted package is
 * seen by NuGet as the consumer must see it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachPackages } from '../../testkit/catalog-packages.js';
import {
  generateCatalog,
  leafBody,
  type GeneratedCatalog,
  type GeneratedLeaf,
} from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { probeFeed, type FeedReading } from './probe-kit.js';

const dependenciesOf = (leaf: GeneratedLeaf): { id: string; range: string }[] =>
  leaf.id.length % 2 === 0 ? [{ id: 'Interop.Dependency', range: '[1.0.0, )' }] : [];

describe("the catalog replica's packages, read by NuGet.Protocol", () => {
  let catalog: GeneratedCatalog;
  let replica: CatalogReplica;
  /** Per lower id + identity, the newest leaf. */
  const newest = new Map<string, GeneratedLeaf>();
  const identity = (id: string, version: string): string =>
    `${id.toLowerCase()}|${version.split('+')[0]!.toLowerCase()}`;
  let reading: FeedReading;
  let withheld: GeneratedLeaf;
  let corrupted: GeneratedLeaf;

  beforeAll(async () => {
    catalog = generateCatalog({ commits: 30, seed: 33, deleteRatio: 0.2, semver2Ratio: 0.3 });
    attachPackages(catalog, { dependencies: dependenciesOf });
    for (const commit of catalog.commits)
      for (const leaf of commit.leaves) newest.set(identity(leaf.id, leaf.version), leaf);
    replica = await CatalogReplica.start({ catalog });
    const held = [...newest.values()].filter((leaf) => leaf.type === 'PackageDetails');
    [withheld, corrupted] = [held[0]!, held[1]!];
    replica.packages.withhold(withheld.id, withheld.version);
    replica.packages.corrupt(corrupted.id, corrupted.version);
    const ids = [...new Set([...newest.values()].map((leaf) => leaf.id))];
    reading = await probeFeed(replica.serviceIndexUrl, ids);
  });
  afterAll(() => replica?.stop());

  it("finds the flat container in the replica's service index", () => {
    expect(reading.resources.findPackageById).toBe('HttpFileSystemBasedFindPackageByIdResource');
  });

  it('lists exactly the packages the catalog holds now (deleted ones gone, withheld ones not yet there)', () => {
    const expected = [...newest.values()]
      .filter((leaf) => leaf.type === 'PackageDetails' && leaf !== withheld)
      .map((leaf) => identity(leaf.id, leaf.version))
      .sort();
    const listed = reading.ids.flatMap((entry) => entry.flat.map((version) => identity(entry.id, version))).sort();
    expect(listed).toEqual(expected);
    expect([...newest.values()].some((leaf) => leaf.type === 'PackageDelete')).toBe(true);
  });

  it("downloads each package with the hash and size its leaf gives, and reads the leaf's identity and dependencies in it", () => {
    expect(reading.versions.length).toBeGreaterThan(15);
    for (const version of reading.versions) {
      const leaf = newest.get(identity(version.id, version.version))!;
      const details = JSON.parse(leafBody(catalog, leaf, replica.origin)) as {
        packageHash: string;
        packageSize: number;
      };
      const download = version.download;
      expect(download?.found, `${version.id} ${version.version}`).toBe(true);
      if (!download?.found) continue;
      if (leaf === corrupted) {
        expect(download.size).toBe(details.packageSize);
        expect(download.sha512).not.toBe(details.packageHash);
        continue;
      }
      expect([download.sha512, download.size], `${version.id} ${version.version}`).toEqual([
        details.packageHash,
        details.packageSize,
      ]);
      expect(download.nuspec).toEqual({
        id: leaf.id,
        version: leaf.version,
        dependencies: dependenciesOf(leaf).map((d) => `net10.0:${d.id}:${d.range}`),
      });
    }
  });
});
