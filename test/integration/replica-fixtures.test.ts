/**
 * The test kit's catalog replica serving the NuGetGallery fixture catalogs: each file at its @id with the base
 * URL rewritten, otherwise byte for byte.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { FIXTURES, get, getJson, type Index, type Page } from './replica-kit.js';

describe('CatalogReplica serving a fixture catalog', () => {
  const files = [
    'TestCatalogWithNonNormalizedDeleteIndex.json',
    'TestCatalogWithNonNormalizedDeletePage.json',
    'TestCatalogWithNonNormalizedDeleteOtherPackage100.json',
    'TestCatalogWithNonNormalizedDeleteOtherPackageDelete.json',
  ];

  it('serves each file at its @id with the base URL rewritten, otherwise byte for byte', async () => {
    const replica = await CatalogReplica.startFromFixtures(FIXTURES, 'http://tempuri.org/', {
      prefix: 'TestCatalogWithNonNormalizedDelete',
    });
    try {
      expect(replica.catalogIndexUrl).toBe(`${replica.origin}/index.json`);
      const services = await getJson<{ resources: { '@id': string; '@type': string }[] }>(replica.serviceIndexUrl);
      expect(services.resources.find((r) => r['@type'] === 'Catalog/3.0.0')!['@id']).toBe(replica.catalogIndexUrl);
      const index = await getJson<Index>(replica.catalogIndexUrl);
      expect(index.items.map((i) => i['@id'])).toEqual([`${replica.origin}/page0.json`]);
      const page = await getJson<Page>(index.items[0]!['@id']);
      expect(page.items.map((i) => i['nuget:version']).sort()).toEqual(['1.0', '1.0.0']);
      for (const item of page.items) {
        const { status, body } = await get(item['@id']);
        expect(status).toBe(200);
        const fixtureId = item['@id'].replace(`${replica.origin}/`, 'http://tempuri.org/');
        const file = files.find(
          (f) => (JSON.parse(readFileSync(join(FIXTURES, f), 'utf8')) as { '@id': string })['@id'] === fixtureId,
        )!;
        const expected = readFileSync(join(FIXTURES, file), 'utf8')
          .split('http://tempuri.org/')
          .join(`${replica.origin}/`);
        expect(body.toString('utf8')).toBe(expected);
        expect(body.includes('tempuri')).toBe(false);
      }
      expect(replica.pagePaths()).toEqual(['/page0.json']);
      expect(replica.commitsOnPage(0)).toBe(2);
    } finally {
      await replica.stop();
    }
  });

  it('keeps foreign URLs of a leaf as they are', async () => {
    const replica = await CatalogReplica.startFromFixtures(FIXTURES, 'http://tempuri.org/', {
      prefix: 'TestCatalogStorageWithSemVer2',
    });
    try {
      const leafPath = '/data/2015.10.12.10.08.54/testpackage.semver2.1.0.0-alpha.1.json';
      const { body } = await get(`${replica.origin}${leafPath}`);
      const file = readFileSync(join(FIXTURES, 'TestCatalogStorageWithSemVer2Package.json'), 'utf8');
      expect(body.toString('utf8')).toBe(file.split('http://tempuri.org/').join(`${replica.origin}/`));
      expect(body.toString()).toContain('http://example/data/');
    } finally {
      await replica.stop();
    }
  });

  it('keeps a UTF-8 byte-order mark', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'replica-bom-'));
    try {
      for (const name of files) writeFileSync(join(dir, name), readFileSync(join(FIXTURES, name)));
      const leafFile = 'TestCatalogWithNonNormalizedDeleteOtherPackageDelete.json';
      writeFileSync(
        join(dir, leafFile),
        Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), readFileSync(join(FIXTURES, leafFile))]),
      );
      const replica = await CatalogReplica.startFromFixtures(dir, 'http://tempuri.org/', { files });
      try {
        const { body } = await get(`${replica.origin}/data/2015.10.13.06.40.07/otherpackage.1.0.json`);
        expect([...body.subarray(0, 4)]).toEqual([0xef, 0xbb, 0xbf, 0x7b]);
      } finally {
        await replica.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a directory of several catalogs unless one is selected', async () => {
    await expect(CatalogReplica.startFromFixtures(FIXTURES, 'http://tempuri.org/')).rejects.toThrow(/both claim/);
    const selected = await CatalogReplica.startFromFixtures(FIXTURES, 'http://tempuri.org/', { files });
    await selected.stop();
    await expect(CatalogReplica.startFromFixtures(FIXTURES, 'http://example/', { files })).rejects.toThrow(/not under/);
  });
});
