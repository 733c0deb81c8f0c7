/**
 * The test kit's catalog generator: deterministic per seed, exact time strictly increasing, nuget.org-shaped
 * commits and leaf bodies, so the sync tests can trust what they are served.
 */
import { describe, expect, it } from 'vitest';
import { appendCommits, generateCatalog, leafBody } from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { renderLeafBody } from '../../testkit/leaf-body.js';
import { versionIdentity } from '../../testkit/package-identities.js';
import { get, ticks } from './replica-kit.js';

describe('generateCatalog', () => {
  const options = {
    commits: 300,
    seed: 7,
    sameMillisecondPairs: 12,
    trimTrailingZeros: true,
    deleteRatio: 0.15,
    semver2Ratio: 0.3,
    nonNormalizedDeleteRatio: 0.5,
  };
  const catalog = generateCatalog(options);

  it('is deterministic for a seed, and differs between seeds', () => {
    expect(generateCatalog(options)).toEqual(catalog);
    expect(generateCatalog({ ...options, seed: 8 }).commits[0]!.commitId).not.toBe(catalog.commits[0]!.commitId);
  });

  it('starts at the start timestamp, verbatim, and commits strictly increase in exact time', () => {
    expect(catalog.commits).toHaveLength(300);
    expect(catalog.commits[0]!.timestamp).toBe('2017-10-31T23:30:32.4197849Z');
    for (let i = 1; i < catalog.commits.length; i++) {
      expect(ticks(catalog.commits[i]!.timestamp)).toBeGreaterThan(ticks(catalog.commits[i - 1]!.timestamp));
    }
  });

  it('puts exactly the requested pairs of consecutive commits inside one millisecond', () => {
    const sameMs = catalog.commits.filter(
      (c, i) => i > 0 && ticks(c.timestamp) / 10_000n === ticks(catalog.commits[i - 1]!.timestamp) / 10_000n,
    );
    expect(sameMs).toHaveLength(12);
    expect(generateCatalog({ commits: 2, sameMillisecondPairs: 1 }).commits.map((c) => c.timestamp)[1]).toMatch(
      /^2017-10-31T23:30:32\.419\d{4}Z$/,
    );
    expect(() => generateCatalog({ commits: 3, sameMillisecondPairs: 2 })).toThrow(/cannot fit/);
  });

  it('serves some timestamps with fewer than seven fractional digits only when asked', () => {
    const digits = catalog.commits.map((c) => /(?:\.(\d+))?Z$/.exec(c.timestamp)![1]?.length ?? 0);
    expect(digits.some((d) => d === 6)).toBe(true);
    expect(digits.some((d) => d === 0)).toBe(true);
    expect(catalog.commits.every((c) => !/\.\d*0Z$/.test(c.timestamp))).toBe(true);
    const untrimmed = generateCatalog({ commits: 100, seed: 7 });
    expect(untrimmed.commits.every((c) => /\.\d{7}Z$/.test(c.timestamp))).toBe(true);
  });

  it('has at most one leaf per id + version in a commit, unique paths, nuget.org-shaped', () => {
    const paths = new Set<string>();
    for (const commit of catalog.commits) {
      const identities = commit.leaves.map((l) => `${l.id.toLowerCase()}/${versionIdentity(l.version)}`);
      expect(new Set(identities).size).toBe(identities.length);
      expect(commit.leaves.length).toBeGreaterThanOrEqual(1);
      expect(commit.leaves.length).toBeLessThanOrEqual(4);
      const folder = commit.timestamp.slice(0, 19).replace(/[-T:]/g, '.');
      for (const leaf of commit.leaves) {
        expect(paths.has(leaf.path)).toBe(false);
        paths.add(leaf.path);
        expect(leaf.path).toBe(
          `/v3/catalog0/data/${folder}/${leaf.id.toLowerCase()}.${leaf.version.split('+')[0]!.toLowerCase()}.json`,
        );
      }
      expect(commit.commitId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
  });

  it('has mixed-case ids, SemVer 2.0.0 versions, unlisted packages and deletes of pushed packages', () => {
    const leaves = catalog.commits.flatMap((c) => c.leaves);
    expect(leaves.every((l) => /[A-Z]/.test(l.id))).toBe(true);
    expect(leaves.some((l) => /^\d+\.\d+\.\d+-[A-Z][^+]*\+/.test(l.version))).toBe(true);
    expect(leaves.some((l) => l.type === 'PackageDetails' && l.listed === false)).toBe(true);
    expect(leaves.some((l) => l.type === 'PackageDelete' && /^\d+\.\d+$/.test(l.version))).toBe(true);
    const live = new Set<string>();
    let deletes = 0;
    for (const leaf of leaves) {
      const key = `${leaf.id.toLowerCase()}/${versionIdentity(leaf.version)}`;
      if (leaf.type === 'PackageDelete') {
        expect(live.has(key), `${leaf.id} ${leaf.version} deleted but not pushed`).toBe(true);
        live.delete(key);
        deletes++;
      } else {
        live.add(key);
      }
    }
    expect(deletes / leaves.length).toBeGreaterThan(0.05);
  });

  it('renders leaf bodies like nuget.org, with everything a client must keep', () => {
    const origin = 'http://127.0.0.1:1';
    const commit = catalog.commits.find((c) => c.leaves.some((l) => l.type === 'PackageDelete'))!;
    for (const leaf of commit.leaves) {
      const text = leafBody(catalog, leaf, origin);
      expect(leafBody(catalog, leaf, origin)).toBe(text);
      const json = JSON.parse(text) as Record<string, unknown>;
      expect(json['@id']).toBe(`${origin}${leaf.path}`);
      expect(json['@type']).toEqual([leaf.type, 'catalog:Permalink']);
      expect(json['catalog:commitId']).toBe(commit.commitId);
      expect(json['catalog:commitTimeStamp']).toBe(commit.timestamp);
      expect(json.id).toBe(leaf.id);
      expect(json.version).toBe(leaf.version);
      expect(typeof json.published).toBe('string');
      if (leaf.type === 'PackageDelete') {
        expect(json.originalId).toBe(leaf.id);
      } else {
        expect(Buffer.from(json.packageHash as string, 'base64')).toHaveLength(64);
        expect(json.packageHashAlgorithm).toBe('SHA512');
        expect(typeof json.packageSize).toBe('number');
        expect(json.futureProperty).toBeDefined();
        expect(text).toContain('"weight": 1.50');
        if (leaf.listed === false) expect(json.published).toBe('1900-01-01T00:00:00Z');
      }
      expect(text).toMatch(/^\{\n {2}"@id": /);
    }
    const custom = { ...commit.leaves[0]!, body: '{"exactly":"this"}' };
    expect(leafBody({ commits: [{ ...commit, leaves: [custom] }] }, custom, origin)).toBe('{"exactly":"this"}');
  });

  it('appendCommits grows the catalog after its last commit, deterministically', () => {
    const grown = generateCatalog({ commits: 20, seed: 3, deleteRatio: 0.3 });
    const again = generateCatalog({ commits: 20, seed: 3, deleteRatio: 0.3 });
    const last = ticks(grown.commits.at(-1)!.timestamp);
    const added = appendCommits(grown, 30, 99);
    expect(appendCommits(again, 30, 99)).toEqual(added);
    expect(grown.commits).toHaveLength(50);
    expect(grown.commits.slice(20)).toEqual(added);
    expect(ticks(added[0]!.timestamp)).toBeGreaterThan(last);
    const paths = grown.commits.flatMap((c) => c.leaves.map((l) => l.path));
    expect(new Set(paths).size).toBe(paths.length);
  });

  it('bomRatio: that share of leaves served after a UTF-8 byte-order mark, the rest unchanged; 0 draws nothing', async () => {
    const plain = generateCatalog({ commits: 40, seed: 5 });
    expect(generateCatalog({ commits: 40, seed: 5, bomRatio: 0 })).toEqual(plain);
    const marked = generateCatalog({ commits: 40, seed: 5, bomRatio: 0.4 });
    const leaves = marked.commits.flatMap((commit) => commit.leaves);
    const withBom = leaves.filter((leaf) => leaf.bom === true);
    expect(withBom.length / leaves.length).toBeGreaterThan(0.2);
    expect(withBom.length).toBeLessThan(leaves.length);
    const replica = await CatalogReplica.start({ catalog: marked });
    try {
      for (const leaf of [withBom[0]!, leaves.find((l) => l.bom !== true)!]) {
        const served = (await get(replica.leafUrl(leaf))).body;
        const commit = marked.commits.find((c) => c.leaves.includes(leaf))!;
        const json = Buffer.from(renderLeafBody(commit, { ...leaf, bom: false }, replica.origin));
        // The bytes EF BB BF, then the JSON a leaf without the mark has.
        expect(served.equals(leaf.bom ? Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), json]) : json), leaf.path).toBe(
          true,
        );
      }
    } finally {
      await replica.stop();
    }
  });
});
