/**
 * The test kit's package files and the catalog replica's flat container (`PackageBaseAddress/3.0.0`), over real HTTP:
 * every details leaf of a catalog with packages gives the true hash and size of the bytes served for it, deletes and
 * re-adds are followed, and a package can be withheld (a CDN behind the catalog) or corrupted on demand. NuGet's own
 * reading of the same packages is in the interoperability suite (test/interop/replica-packages.test.ts).
 */
import { createHash } from 'node:crypto';
import { strFromU8, unzipSync } from 'fflate';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { attachPackages } from '../../testkit/catalog-packages.js';
import {
  generateCatalog,
  leafBody,
  type GeneratedCatalog,
  type GeneratedLeaf,
} from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { FlatContainer } from '../../testkit/flat-container.js';
import { get, getJson } from './replica-kit.js';

const sha512 = (bytes: Buffer): string => createHash('sha512').update(bytes).digest('base64');
const identity = (leaf: GeneratedLeaf): string =>
  `${leaf.id.toLowerCase()}/${leaf.version.split('+')[0]!.toLowerCase()}`;

describe('CatalogReplica serving the packages of a generated catalog', () => {
  let catalog: GeneratedCatalog;
  let replica: CatalogReplica;
  /** Per identity, the newest leaf: what the flat container must show. */
  const newest = new Map<string, GeneratedLeaf>();

  beforeAll(async () => {
    catalog = generateCatalog({ commits: 40, seed: 33, deleteRatio: 0.25, semver2Ratio: 0.3 });
    attachPackages(catalog, {
      dependencies: (leaf) => (leaf.id.length % 2 === 0 ? [{ id: 'Dep.Of.Even', range: '[1.0.0, )' }] : []),
    });
    catalog.commits[1]!.leaves[0]!.deprecation = {
      reasons: ['Legacy'],
      message: 'Use another.',
      alternatePackage: { id: 'Other', range: '[2.0.0, )' },
    };
    catalog.commits[1]!.leaves[0]!.vulnerabilities = [
      { advisoryUrl: 'https://example.com/advisories/1', severity: '2' },
    ];
    for (const commit of catalog.commits) for (const leaf of commit.leaves) newest.set(identity(leaf), leaf);
    replica = await CatalogReplica.start({ catalog });
  });
  afterAll(() => replica.stop());
  afterEach(() => replica.packages.reset());

  it('serves each held package at its flat path, with the hash and size its newest details leaf gives', async () => {
    const held = [...newest.values()].filter((leaf) => leaf.type === 'PackageDetails');
    const deleted = [...newest.values()].filter((leaf) => leaf.type === 'PackageDelete');
    expect(held.length).toBeGreaterThan(20);
    expect(deleted.length).toBeGreaterThan(3);
    for (const leaf of held) {
      const { status, body } = await get(`${replica.origin}${FlatContainer.packagePath(leaf.id, leaf.version)}`);
      expect(status, leaf.path).toBe(200);
      const details = JSON.parse(leafBody(catalog, leaf, replica.origin)) as {
        packageHash: string;
        packageSize: number;
        packageHashAlgorithm: string;
      };
      expect(details.packageHashAlgorithm).toBe('SHA512');
      expect([details.packageHash, details.packageSize], leaf.path).toEqual([sha512(body), body.length]);
      const files = unzipSync(body);
      expect(Object.keys(files).sort()).toEqual(
        [`${leaf.id}.nuspec`, '[Content_Types].xml', '_rels/.rels', 'lib/net10.0/_._'].sort(),
      );
      const nuspec = strFromU8(files[`${leaf.id}.nuspec`]!);
      expect(nuspec).toContain(`<id>${leaf.id}</id>`);
      expect(nuspec).toContain(`<version>${leaf.version}</version>`);
      expect(nuspec.includes('Dep.Of.Even'), leaf.id).toBe(leaf.id.length % 2 === 0);
    }
    for (const leaf of deleted) {
      expect(
        (await get(`${replica.origin}${FlatContainer.packagePath(leaf.id, leaf.version)}`)).status,
        leaf.path,
      ).toBe(404);
    }
  });

  it("lists each id's held versions, normalized and lowercased, in NuGet order; an id with none is a 404", async () => {
    const ids = new Set([...newest.values()].map((leaf) => leaf.id.toLowerCase()));
    for (const id of ids) {
      const held = [...newest.values()].filter(
        (leaf) => leaf.id.toLowerCase() === id && leaf.type === 'PackageDetails',
      );
      const url = `${replica.origin}${FlatContainer.indexPath(id)}`;
      if (held.length === 0) {
        expect((await get(url)).status, id).toBe(404);
        continue;
      }
      const { versions } = await getJson<{ versions: string[] }>(url);
      expect([...versions].sort(), id).toEqual(
        held
          .map(identity)
          .map((key) => key.slice(id.length + 1))
          .sort(),
      );
    }
  });

  it('gives a details leaf its deprecation and vulnerabilities as nuget.org writes them', () => {
    const leaf = catalog.commits[1]!.leaves[0]!;
    const body = JSON.parse(leafBody(catalog, leaf, replica.origin)) as Record<string, unknown>;
    const url = `${replica.origin}${leaf.path}`;
    expect(body.deprecation).toEqual({
      '@id': `${url}#deprecation`,
      reasons: ['Legacy'],
      message: 'Use another.',
      alternatePackage: { id: 'Other', range: '[2.0.0, )' },
    });
    expect(body.vulnerabilities).toEqual([
      {
        '@id': `${url}#vulnerability/GitHub/1`,
        '@type': 'Vulnerability',
        advisoryUrl: 'https://example.com/advisories/1',
        severity: '2',
      },
    ]);
  });

  it('withholds a package until released, and serves other bytes than the hash on demand', async () => {
    const leaf = [...newest.values()].find((l) => l.type === 'PackageDetails')!;
    const url = `${replica.origin}${FlatContainer.packagePath(leaf.id, leaf.version)}`;
    const index = `${replica.origin}${FlatContainer.indexPath(leaf.id)}`;
    const original = (await get(url)).body;

    replica.packages.withhold(leaf.id, leaf.version);
    expect((await get(url)).status).toBe(404);
    const listed = await get(index);
    if (listed.status === 200) expect(listed.body.toString()).not.toContain(`"${identity(leaf).split('/')[1]}"`);
    replica.packages.release(leaf.id, leaf.version);
    expect((await get(url)).body.equals(original)).toBe(true);

    replica.packages.corrupt(leaf.id, leaf.version);
    const corrupted = (await get(url)).body;
    expect(corrupted.length).toBe(original.length);
    expect(sha512(corrupted)).not.toBe(sha512(original));
  });

  it('serves no packages for leaves without a package file', async () => {
    const plain = generateCatalog({ commits: 3, seed: 2 });
    const bare = await CatalogReplica.start({ catalog: plain });
    try {
      const leaf = plain.commits[0]!.leaves[0]!;
      expect((await get(`${bare.origin}${FlatContainer.packagePath(leaf.id, leaf.version)}`)).status).toBe(404);
      expect(bare.packages.served()).toEqual([]);
    } finally {
      await bare.stop();
    }
  });
});
