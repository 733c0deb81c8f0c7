/** The real catalog documents under test/fixtures: every one parses, and the leaves match their page items. */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectSourceKind, SourceKind } from '../../lambda/catalog/index.js';
import { parseCatalogIndex, parseCatalogPage, parseLeaf, parseSource } from '../../lambda/catalog/parsers/index.js';
import { parseTimestamp } from '../../lambda/contract/time.js';
import { skipped, fixtures, ofKind, stripBom, itemFromLeaf, rejects, type Json, type Fixture } from './schema-kit.js';

describe('fixtures', () => {
  it('finds every catalog document, and skips only the kuuid, SigV4 and NuGet.Versioning vectors', () => {
    expect(skipped.sort()).toEqual(
      [
        'kuuid-vectors.json',
        path.join('nuget-versioning', 'versions.json'),
        path.join('sigv4', 'aws4-vectors.json'),
      ].sort(),
    );
    expect(ofKind('index')).toHaveLength(8);
    expect(ofKind('page')).toHaveLength(10);
    expect(ofKind('leaf')).toHaveLength(42);
    expect(fixtures.filter((fixture) => fixture.bom)).toHaveLength(13);
    expect(fixtures.filter((fixture) => fixture.bom).every((fixture) => fixture.kind === 'leaf')).toBe(true);
    const docs = fixtures.filter((fixture) => fixture.name.startsWith('docs.microsoft.com-nuget/'));
    expect(docs.map((fixture) => [path.basename(fixture.name), fixture.kind])).toEqual([
      ['catalog-index.json', 'index'],
      ['catalog-package-delete.json', 'leaf'],
      ['catalog-package-details.json', 'leaf'],
      ['catalog-page.json', 'page'],
    ]);
  });

  it.each(ofKind('index').map((fixture) => [fixture.name, fixture] as const))('index %s parses', (_, fixture) => {
    const index = parseCatalogIndex(fixture.bytes, fixture.url);
    const items = fixture.json['items'] as Json[];
    expect(index.commitId).toBe(fixture.json['commitId']);
    expect(index.commitTimeStamp).toBe(fixture.json['commitTimeStamp']);
    expect(index.commitTicks).toBe(parseTimestamp(fixture.json['commitTimeStamp'] as string));
    expect(index.count).toBe(fixture.json['count']);
    expect(index.items).toEqual(
      items.map((item) => ({
        url: item['@id'],
        commitId: item['commitId'],
        commitTimeStamp: item['commitTimeStamp'],
        commitTicks: parseTimestamp(item['commitTimeStamp'] as string),
        count: item['count'],
      })),
    );
    // Told by content, an index is a catalog index, whichever way it is read.
    expect(detectSourceKind(fixture.json, fixture.url)).toBe(SourceKind.catalogIndex);
    expect(parseSource(fixture.bytes, fixture.url)).toEqual({ kind: SourceKind.catalogIndex, catalogIndex: index });
  });

  it.each(ofKind('page').map((fixture) => [fixture.name, fixture] as const))('page %s parses', (_, fixture) => {
    const page = parseCatalogPage(fixture.bytes, fixture.url);
    const items = fixture.json['items'] as Json[];
    expect(page.commitTicks).toBe(parseTimestamp(fixture.json['commitTimeStamp'] as string));
    expect(page.count).toBe(fixture.json['count']);
    expect(page.parent).toBe(fixture.json['parent']);
    expect(page.items).toEqual(
      items.map((item) => ({
        url: item['@id'],
        type: (item['@type'] as string).replace('nuget:', ''),
        commitId: item['commitId'],
        commitTimeStamp: item['commitTimeStamp'],
        commitTicks: parseTimestamp(item['commitTimeStamp'] as string),
        id: item['nuget:id'],
        version: item['nuget:version'],
      })),
    );
  });

  it.each(ofKind('leaf').map((fixture) => [fixture.name, fixture] as const))(
    'leaf %s parses and keeps every property',
    (_, fixture) => {
      const expected = itemFromLeaf(fixture.json, fixture.url);
      const leaf = parseLeaf(fixture.bytes, fixture.url, expected);
      expect(leaf.document).toEqual(JSON.parse(stripBom(fixture.bytes.toString('utf8'))));
      expect(leaf.types).toEqual(([] as unknown[]).concat(fixture.json['@type']));
      expect(leaf.type).toBe(expected.type);
      expect(leaf.id).toBe(expected.id);
      expect(leaf.version).toBe(expected.version);
      expect(leaf.commitId).toBe(expected.commitId);
      expect(leaf.commitTicks).toBe(expected.commitTicks);
      // The same body as text (BOM and all) gives the same result.
      expect(parseLeaf(fixture.bytes.toString('utf8'), fixture.url, expected)).toEqual(leaf);
    },
  );

  it('parses the real leaves under the real page items that list them', () => {
    const leavesByUrl = new Map<string, Fixture[]>();
    for (const leaf of ofKind('leaf')) {
      const id = leaf.json['@id'];
      if (typeof id === 'string') leavesByUrl.set(id, [...(leavesByUrl.get(id) ?? []), leaf]);
    }
    let matched = 0;
    const mismatched: string[] = [];
    for (const pageFixture of ofKind('page')) {
      for (const item of parseCatalogPage(pageFixture.bytes, pageFixture.url).items) {
        for (const leaf of leavesByUrl.get(item.url) ?? []) {
          if ((leaf.json['id'] as string).toLowerCase() === item.id.toLowerCase()) {
            expect(parseLeaf(leaf.bytes, item.url, item).type).toBe(item.type);
            matched += 1;
          } else {
            // NgTests reuses one URL for two different packages across its small catalogs.
            rejects(() => parseLeaf(leaf.bytes, item.url, item), item.url, 'id: the leaf has');
            mismatched.push(`${path.basename(pageFixture.name)} -> ${path.basename(leaf.name)}`);
          }
        }
      }
    }
    expect(matched).toBe(22);
    // TestCatalogStorageWithPackageCreatedThenDeletedPageOtherPackage100Created.json sits at the URL
    // of otherpackage.1.0.0.json but says "id": "ListedPackage": a leaf that does not match its item.
    const reused = 'TestCatalogStorageWithPackageCreatedThenDeletedPageOtherPackage100Created.json';
    expect(mismatched).toEqual([
      `TestCatalogStorageWithPackageCreatedThenDeletedPage.json -> ${reused}`,
      `TestCatalogWithNonNormalizedDeletePage.json -> ${reused}`,
    ]);
  });

  it('keeps the 1900 published date of an unlisted package', () => {
    const fixture = fixtures.find((f) => f.name === 'docs.microsoft.com-nuget/catalog-package-details.json')!;
    const leaf = parseLeaf(fixture.bytes, fixture.url, itemFromLeaf(fixture.json, fixture.url));
    expect(leaf.document['published']).toBe('1900-01-01T00:00:00Z');
  });
});
