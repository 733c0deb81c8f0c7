import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidDocumentError } from '../../lambda/catalog/errors.js';
import { identityKeyProblem, MAX_PREFIX_BYTES } from '../../lambda/contract/identity.js';
import { leafKey, quarantineKey } from '../../lambda/contract/keys.js';
import {
  detectSourceKind,
  findCatalogUrl,
  LeafType,
  parseCatalogIndex,
  parseCatalogPage,
  parseJson,
  parseLeaf,
  parseServiceIndex,
  parseSource,
  SourceKind,
  type PageItem,
} from '../../lambda/catalog/index.js';
import { formatTimestamp, parseTimestamp } from '../../lambda/contract/time.js';

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

const FIXTURES = fileURLToPath(new URL('../fixtures', import.meta.url));

type Json = Record<string, unknown>;
type Kind = 'index' | 'page' | 'leaf';

interface Fixture {
  readonly name: string;
  readonly url: string;
  readonly bytes: Buffer;
  readonly json: Json;
  readonly kind: Kind;
  readonly bom: boolean;
}

function listJson(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return listJson(full);
    return entry.name.endsWith('.json') ? [full] : [];
  });
}

function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Told by content, as the brief asks: items with nuget:id = page, items = index, catalog:commitId = leaf. */
function kindOf(json: Json): Kind | undefined {
  if (Array.isArray(json['items'])) {
    return (json['items'] as Json[]).some((item) => 'nuget:id' in item) ? 'page' : 'index';
  }
  return 'catalog:commitId' in json ? 'leaf' : undefined;
}

const skipped: string[] = [];
const fixtures: Fixture[] = listJson(FIXTURES)
  .sort()
  .flatMap((file) => {
    const bytes = readFileSync(file);
    const json = JSON.parse(stripBom(bytes.toString('utf8'))) as Json;
    const kind = kindOf(json);
    const name = path.relative(FIXTURES, file);
    if (kind === undefined) {
      skipped.push(name);
      return [];
    }
    const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
    return [{ name, url: `https://fixtures.test/${name}`, bytes, json, kind, bom }];
  });
const ofKind = (kind: Kind): Fixture[] => fixtures.filter((fixture) => fixture.kind === kind);

/** The page item a leaf would have been listed under, built from the leaf itself. */
function itemFromLeaf(json: Json, url: string): PageItem {
  const types = ([] as unknown[]).concat(json['@type']);
  const commitTimeStamp = json['catalog:commitTimeStamp'] as string;
  return {
    url,
    type: types.some((type) => type === 'PackageDelete' || type === 'nuget:PackageDelete')
      ? LeafType.delete
      : LeafType.details,
    commitId: json['catalog:commitId'] as string,
    commitTimeStamp,
    commitTicks: parseTimestamp(commitTimeStamp),
    id: json['id'] as string,
    version: json['version'] as string,
  };
}

// ---------------------------------------------------------------------------------------------
// Helpers for broken documents
// ---------------------------------------------------------------------------------------------

const INDEX_URL = 'https://api.test/v3/catalog0/index.json';
const PAGE_URL = 'https://api.test/v3/catalog0/page7.json';
const LEAF_URL = 'https://api.test/v3/catalog0/data/2017.10.31.23.30.32/foo.1.0.0.json';
const SERVICE_URL = 'https://api.test/v3/index.json';

/** Runs `action`, which must throw an InvalidDocumentError whose message has the URL and every fragment. */
function rejects(action: () => unknown, url: string, ...fragments: string[]): InvalidDocumentError {
  let thrown: unknown;
  try {
    action();
  } catch (error) {
    thrown = error;
  }
  expect(thrown, 'expected an InvalidDocumentError').toBeInstanceOf(InvalidDocumentError);
  const error = thrown as InvalidDocumentError;
  expect(error.url).toBe(url);
  expect(error.message.startsWith(`${url}: `)).toBe(true);
  expect(error.message).toBe(`${url}: ${error.reason}`);
  for (const fragment of fragments) expect(error.message).toContain(fragment);
  return error;
}

const clone = <T>(value: T): T => structuredClone(value);
const body = (value: unknown): string => JSON.stringify(value);

const T0 = '2017-10-31T23:30:32.4197849Z';
const T0_PLUS_100NS = '2017-10-31T23:30:32.419785Z';
const T_EARLIER = '2017-10-31T22:31:22.5169519Z';
const T_LATER = '2017-11-01T00:00:00Z';

function validIndex(): Json {
  return {
    commitId: 'c-2',
    commitTimeStamp: T0,
    count: 2,
    items: [
      { '@id': 'https://api.test/v3/catalog0/page0.json', commitId: 'c-1', commitTimeStamp: T_EARLIER, count: 540 },
      { '@id': 'https://api.test/v3/catalog0/page1.json', commitId: 'c-2', commitTimeStamp: T0, count: 3 },
    ],
  };
}

function pageItem(n: number, overrides: Json = {}): Json {
  return {
    '@id': `https://api.test/v3/catalog0/data/x/pkg${n}.1.0.0.json`,
    '@type': 'nuget:PackageDetails',
    commitId: 'c-2',
    commitTimeStamp: T0,
    'nuget:id': `Pkg${n}`,
    'nuget:version': '1.0.0',
    ...overrides,
  };
}

function validPage(): Json {
  return {
    commitId: 'c-2',
    commitTimeStamp: T0,
    count: 3,
    parent: INDEX_URL,
    items: [pageItem(0), pageItem(1), pageItem(2, { commitId: 'c-1', commitTimeStamp: T_EARLIER })],
  };
}

function detailsLeaf(): Json {
  return {
    '@id': LEAF_URL,
    '@type': ['PackageDetails', 'catalog:Permalink'],
    'catalog:commitId': 'c-2',
    'catalog:commitTimeStamp': T0,
    id: 'Foo',
    published: '1900-01-01T00:00:00Z',
    version: '1.0.0',
    packageHash: '2edCwKLcbcgFJpsAwa883BLtOy8bZpWwbQpiIb71E74k5t2f2WzXEGWbPwntRleUEgSrcxJrh9Orm/TAmgO4NQ==',
    packageHashAlgorithm: 'SHA512',
    packageSize: 118348,
    someUndocumentedProperty: { nested: [1, 2, 3] },
  };
}

function deleteLeaf(): Json {
  return {
    '@id': LEAF_URL,
    '@type': ['PackageDelete', 'catalog:Permalink'],
    'catalog:commitId': 'c-2',
    'catalog:commitTimeStamp': T0,
    id: 'Foo',
    originalId: 'Foo',
    published: '2017-10-31T23:29:00Z',
    version: '1.0.0',
  };
}

function expectedItem(overrides: Partial<PageItem> = {}): PageItem {
  return {
    url: LEAF_URL,
    type: LeafType.details,
    commitId: 'c-2',
    commitTimeStamp: T0,
    commitTicks: parseTimestamp(T0),
    id: 'Foo',
    version: '1.0.0',
    ...overrides,
  };
}

function serviceIndex(types: (string | string[])[]): Json {
  return {
    version: '3.0.0',
    resources: types.map((type, n) => ({ '@id': `https://api.test/v3/resource${n}/`, '@type': type, comment: 'x' })),
  };
}

// ---------------------------------------------------------------------------------------------
// Real documents
// ---------------------------------------------------------------------------------------------

describe('fixtures', () => {
  it('finds every catalog document, and skips only the kuuid vectors', () => {
    expect(skipped).toEqual(['kuuid-vectors.json']);
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

// ---------------------------------------------------------------------------------------------
// JSON and top level
// ---------------------------------------------------------------------------------------------

describe('bodies that are not JSON objects', () => {
  const parsers = [
    ['parseCatalogIndex', (b: string | Uint8Array) => parseCatalogIndex(b, PAGE_URL), 'catalog index'],
    ['parseCatalogPage', (b: string | Uint8Array) => parseCatalogPage(b, PAGE_URL), 'catalog page'],
    ['parseLeaf', (b: string | Uint8Array) => parseLeaf(b, PAGE_URL, expectedItem()), 'catalog leaf'],
    ['parseServiceIndex', (b: string | Uint8Array) => parseServiceIndex(b, PAGE_URL), 'service index'],
  ] as const;

  it.each(parsers)('%s rejects text that is not JSON', (_, parse) => {
    rejects(() => parse('<html>503 Service Unavailable</html>'), PAGE_URL, 'not valid JSON');
  });

  it.each(parsers)('%s rejects truncated JSON', (_, parse) => {
    const error = rejects(() => parse(body(validPage()).slice(0, 100)), PAGE_URL, 'not valid JSON: ');
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  it.each(parsers)('%s rejects an empty body', (_, parse) => {
    rejects(() => parse(''), PAGE_URL, 'not valid JSON: the body is empty');
    rejects(() => parse(new Uint8Array()), PAGE_URL, 'not valid JSON: the body is empty');
    rejects(() => parse(Buffer.from([0xef, 0xbb, 0xbf])), PAGE_URL, 'not valid JSON: the body is empty');
    rejects(() => parse(' \n'), PAGE_URL, 'not valid JSON: the body is empty');
  });

  it.each(parsers)('%s rejects null, an array, a number and a string at the top level', (_, parse, kind) => {
    rejects(() => parse('null'), PAGE_URL, `expected the ${kind} to be a JSON object, got null`);
    rejects(() => parse('[{"items": []}]'), PAGE_URL, `expected the ${kind} to be a JSON object, got array`);
    rejects(() => parse('42'), PAGE_URL, `expected the ${kind} to be a JSON object, got number`);
    rejects(() => parse('"items"'), PAGE_URL, `expected the ${kind} to be a JSON object, got string`);
  });

  it('rejects bytes that are not UTF-8', () => {
    rejects(() => parseCatalogPage(Buffer.from([0x7b, 0xff, 0x7d]), PAGE_URL), PAGE_URL, 'not valid UTF-8');
  });

  it('strips exactly one BOM, from bytes and from text', () => {
    const page = body(validPage());
    expect(parseCatalogPage(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(page)]), PAGE_URL).items)
      .toHaveLength(3);
    expect(parseCatalogPage(`\uFEFF${page}`, PAGE_URL).items).toHaveLength(3);
    rejects(() => parseCatalogPage(`\uFEFF\uFEFF${page}`, PAGE_URL), PAGE_URL, 'not valid JSON');
  });

  it('parseJson returns the parsed value', () => {
    expect(parseJson('\uFEFF[1,2]', PAGE_URL)).toEqual([1, 2]);
  });
});

// ---------------------------------------------------------------------------------------------
// Catalog index
// ---------------------------------------------------------------------------------------------

describe('parseCatalogIndex', () => {
  it('accepts a valid index in any order, and an index without count', () => {
    const index = validIndex();
    (index['items'] as Json[]).reverse();
    delete index['count'];
    const parsed = parseCatalogIndex(body(index), INDEX_URL);
    expect(parsed.count).toBeUndefined();
    expect(parsed.items.map((entry) => entry.url)).toEqual([
      'https://api.test/v3/catalog0/page1.json',
      'https://api.test/v3/catalog0/page0.json',
    ]);
  });

  it('rejects a missing items array', () => {
    const index = validIndex();
    delete index['items'];
    rejects(() => parseCatalogIndex(body(index), INDEX_URL), INDEX_URL, 'items: missing (expected array)');
  });

  it('rejects items that are not an array', () => {
    const index = { ...validIndex(), items: { '@id': 'https://api.test/page0.json' } };
    rejects(() => parseCatalogIndex(body(index), INDEX_URL), INDEX_URL, 'items: expected array, got object');
  });

  it('rejects an entry that is not an object', () => {
    const index = validIndex();
    (index['items'] as unknown[])[1] = 'https://api.test/page1.json';
    rejects(() => parseCatalogIndex(body(index), INDEX_URL), INDEX_URL, 'items[1]: expected object, got string');
  });

  it('rejects a page entry without @id', () => {
    const index = validIndex();
    delete (index['items'] as Json[])[1]!['@id'];
    rejects(() => parseCatalogIndex(body(index), INDEX_URL), INDEX_URL, 'items[1]["@id"]: missing (expected string)');
  });

  it.each([
    ['not a URL', 'not a url', 'expected an absolute http(s) URL, got the relative reference "not a url"'],
    ['relative', 'page0.json', 'expected an absolute http(s) URL, got the relative reference "page0.json"'],
    ['root-relative', '/v3/catalog0/page0.json', 'expected an absolute http(s) URL, got the relative reference'],
    ['protocol-relative', '//api.test/page0.json', 'expected an absolute http(s) URL, got the relative reference'],
    ['ftp', 'ftp://api.test/page0.json', 'expected an http or https URL, got the ftp: URL "ftp://api.test/page0.json"'],
    ['javascript', 'javascript:alert(1)', 'expected an http or https URL, got the javascript: URL'],
    ['hostless', 'http://', 'not a valid URL: "http://"'],
    ['with a space', 'https://api.test/page 0.json', 'URL contains whitespace or control characters'],
    ['a number', 7, 'expected string, got number'],
  ])('rejects an @id that is %s', (_, id, message) => {
    const index = validIndex();
    (index['items'] as Json[])[0]!['@id'] = id;
    rejects(() => parseCatalogIndex(body(index), INDEX_URL), INDEX_URL, `items[0]["@id"]: ${message}`);
  });

  it('accepts http and https @ids in any letter case', () => {
    const index = validIndex();
    (index['items'] as Json[])[0]!['@id'] = 'HTTP://api.test/v3/catalog0/page0.json';
    expect(parseCatalogIndex(body(index), INDEX_URL).items[0]!.url).toBe('HTTP://api.test/v3/catalog0/page0.json');
  });

  it('rejects a missing commitTimeStamp, on the index and on an entry', () => {
    const index = validIndex();
    delete index['commitTimeStamp'];
    rejects(() => parseCatalogIndex(body(index), INDEX_URL), INDEX_URL, 'commitTimeStamp: missing (expected string)');
    const entry = validIndex();
    delete (entry['items'] as Json[])[0]!['commitTimeStamp'];
    rejects(
      () => parseCatalogIndex(body(entry), INDEX_URL),
      INDEX_URL,
      'items[0].commitTimeStamp: missing (expected string)',
    );
  });

  it.each([
    ['month 13', '2017-13-01T00:00:00Z', 'invalid timestamp "2017-13-01T00:00:00Z": month 13 is out of range'],
    ['no zone', '2017-10-31T23:30:32.4197849', 'invalid timestamp "2017-10-31T23:30:32.4197849": expected'],
    ['8 fractional digits', '2017-10-31T23:30:32.41978491Z', 'invalid timestamp "2017-10-31T23:30:32.41978491Z"'],
    ['a date only', '2017-10-31', 'invalid timestamp "2017-10-31"'],
  ])('rejects an entry commitTimeStamp with %s', (_, text, message) => {
    const index = validIndex();
    (index['items'] as Json[])[0]!['commitTimeStamp'] = text;
    rejects(() => parseCatalogIndex(body(index), INDEX_URL), INDEX_URL, `items[0].commitTimeStamp: ${message}`);
  });

  it('rejects a commitTimeStamp that is a number', () => {
    const index = { ...validIndex(), commitTimeStamp: 1509492632419 };
    rejects(() => parseCatalogIndex(body(index), INDEX_URL), INDEX_URL, 'commitTimeStamp: expected string, got number');
  });

  it('gives the message of the brief for month 13 on a page', () => {
    const page = validPage();
    (page['items'] as Json[])[1]!['commitTimeStamp'] = '2017-13-01T00:00:00Z';
    const error = rejects(() => parseCatalogPage(body(page), PAGE_URL), PAGE_URL);
    expect(error.message).toBe(
      `${PAGE_URL}: items[1].commitTimeStamp: invalid timestamp "2017-13-01T00:00:00Z": month 13 is out of range`,
    );
  });

  it.each([
    ['negative', -1, 'must not be negative, got -1'],
    ['not an integer', 2.5, 'expected an integer, got 2.5'],
    ['a string', '540', 'expected number, got string'],
  ])('rejects a count that is %s', (_, count, message) => {
    const entry = validIndex();
    (entry['items'] as Json[])[0]!['count'] = count;
    rejects(() => parseCatalogIndex(body(entry), INDEX_URL), INDEX_URL, `items[0].count: ${message}`);
    const index = { ...validIndex(), count };
    rejects(() => parseCatalogIndex(body(index), INDEX_URL), INDEX_URL, `count: ${message}`);
  });

  it('rejects an entry without count', () => {
    const index = validIndex();
    delete (index['items'] as Json[])[0]!['count'];
    rejects(() => parseCatalogIndex(body(index), INDEX_URL), INDEX_URL, 'items[0].count: missing (expected number)');
  });

  it('rejects an entry with embedded items', () => {
    const index = validIndex();
    (index['items'] as Json[])[1]!['items'] = [pageItem(0)];
    rejects(() => parseCatalogIndex(body(index), INDEX_URL), INDEX_URL, 'items[1].items: ', 'must not embed items');
  });

  it('rejects the same page listed twice', () => {
    const index = validIndex();
    (index['items'] as Json[]).push({ ...(index['items'] as Json[])[0]! });
    rejects(
      () => parseCatalogIndex(body(index), INDEX_URL),
      INDEX_URL,
      'items[2]["@id"]: duplicate of items[0]: "https://api.test/v3/catalog0/page0.json"',
    );
  });

  it('rejects an entry newer than the index, to the tick', () => {
    const index = validIndex();
    (index['items'] as Json[])[1]!['commitTimeStamp'] = T0_PLUS_100NS;
    rejects(
      () => parseCatalogIndex(body(index), INDEX_URL),
      INDEX_URL,
      `items[1].commitTimeStamp: "${T0_PLUS_100NS}" is after the index's commitTimeStamp "${T0}"`,
      'inconsistent',
    );
  });

  it('compares commit times as ticks, not as text', () => {
    // The same instant written with an offset and with dropped zeros is not newer.
    const index = validIndex();
    index['commitTimeStamp'] = '2017-11-01T01:30:32.4197849+02:00';
    (index['items'] as Json[])[1]!['commitTimeStamp'] = '2017-10-31T23:30:32.4197849Z';
    expect(parseCatalogIndex(body(index), INDEX_URL).commitTicks).toBe(parseTimestamp(T0));
  });

  it('lists at most three problems and counts the rest', () => {
    const index = validIndex();
    const items = index['items'] as Json[];
    for (let n = 0; n < 10; n++) items.push({ '@id': `page${n}.json`, commitId: 'c', commitTimeStamp: T0, count: 1 });
    const error = rejects(() => parseCatalogIndex(body(index), INDEX_URL), INDEX_URL, '; and 7 more problems');
    expect(error.reason.split('; ')).toHaveLength(4);
    expect(error.cause).toBeDefined();
  });

  it('keeps messages short when the input is huge', () => {
    const index = validIndex();
    (index['items'] as Json[])[0]!['commitTimeStamp'] = 'x'.repeat(1_000_000);
    const error = rejects(() => parseCatalogIndex(body(index), INDEX_URL), INDEX_URL, 'characters)');
    expect(error.message.length).toBeLessThan(500);
  });

  it('parses a 25,000-entry index (its speed is measured in bench/, not here)', () => {
    const base = parseTimestamp('2015-02-01T06:30:11.7477681Z');
    const items = Array.from({ length: 25_000 }, (_, n) => ({
      '@id': `https://api.nuget.org/v3/catalog0/page${n}.json`,
      commitId: `00000000-0000-0000-0000-${String(n).padStart(12, '0')}`,
      commitTimeStamp: formatTimestamp(base + BigInt(n) * 12_345_678_901n),
      count: 550,
    }));
    const last = items[items.length - 1]!;
    const document = { commitId: last.commitId, commitTimeStamp: last.commitTimeStamp, count: 25_000, items };
    const bytes = Buffer.from(body(document));
    const index = parseCatalogIndex(bytes, INDEX_URL);
    expect(index.items).toHaveLength(25_000);
    expect(index.items[24_999]!.commitTicks).toBe(base + 24_999n * 12_345_678_901n);
  });
});

// ---------------------------------------------------------------------------------------------
// Catalog page
// ---------------------------------------------------------------------------------------------

describe('parseCatalogPage', () => {
  it('accepts a valid page', () => {
    const page = parseCatalogPage(body(validPage()), PAGE_URL);
    expect(page.parent).toBe(INDEX_URL);
    expect(page.items.map((item) => item.type)).toEqual([LeafType.details, LeafType.details, LeafType.details]);
  });

  it.each([
    ['nuget:PackageDelete', LeafType.delete],
    ['PackageDelete', LeafType.delete],
    ['PackageDetails', LeafType.details],
    [['nuget:PackageDetails'], LeafType.details],
    [['catalog:Permalink', 'nuget:PackageDelete'], LeafType.delete],
  ])('accepts the item @type %j', (type, expected) => {
    const page = validPage();
    (page['items'] as Json[])[0]!['@type'] = type;
    expect(parseCatalogPage(body(page), PAGE_URL).items[0]!.type).toBe(expected);
  });

  it.each([
    ['unknown', 'nuget:PackageEdit', 'expected PackageDetails or PackageDelete, got ["nuget:PackageEdit"]'],
    ['both', ['nuget:PackageDetails', 'nuget:PackageDelete'], 'has both PackageDetails and PackageDelete'],
    ['empty', [], 'expected PackageDetails or PackageDelete, got []'],
    ['a number', 3, 'expected a string or an array of strings'],
  ])('rejects an item @type that is %s', (_, type, message) => {
    const page = validPage();
    (page['items'] as Json[])[2]!['@type'] = type;
    rejects(() => parseCatalogPage(body(page), PAGE_URL), PAGE_URL, `items[2]["@type"]: ${message}`);
  });

  it.each([
    ['@type', 'items[1]["@type"]: missing'],
    ['nuget:id', 'items[1]["nuget:id"]: missing (expected string)'],
    ['nuget:version', 'items[1]["nuget:version"]: missing (expected string)'],
    ['commitId', 'items[1].commitId: missing (expected string)'],
    ['commitTimeStamp', 'items[1].commitTimeStamp: missing (expected string)'],
    ['@id', 'items[1]["@id"]: missing (expected string)'],
  ])('rejects an item without %s', (field, message) => {
    const page = validPage();
    delete (page['items'] as Json[])[1]![field];
    rejects(() => parseCatalogPage(body(page), PAGE_URL), PAGE_URL, message);
  });

  it('rejects an empty nuget:id', () => {
    const page = validPage();
    (page['items'] as Json[])[1]!['nuget:id'] = '';
    rejects(() => parseCatalogPage(body(page), PAGE_URL), PAGE_URL, 'items[1]["nuget:id"]: must not be empty');
  });

  it('rejects a parent that is not a URL', () => {
    const page = { ...validPage(), parent: 'index.json' };
    rejects(() => parseCatalogPage(body(page), PAGE_URL), PAGE_URL, 'parent: expected an absolute http(s) URL');
  });

  it('rejects a missing or non-array items', () => {
    const page = validPage();
    delete page['items'];
    rejects(() => parseCatalogPage(body(page), PAGE_URL), PAGE_URL, 'items: missing (expected array)');
    const notArray = { ...validPage(), items: 'none' };
    rejects(() => parseCatalogPage(body(notArray), PAGE_URL), PAGE_URL, 'items: expected array, got string');
  });

  it('rejects an item newer than its page, to the tick', () => {
    const page = validPage();
    for (const item of page['items'] as Json[]) if (item['commitId'] === 'c-2') item['commitTimeStamp'] = T0_PLUS_100NS;
    rejects(
      () => parseCatalogPage(body(page), PAGE_URL),
      PAGE_URL,
      `items[0].commitTimeStamp: "${T0_PLUS_100NS}" is after the page's commitTimeStamp "${T0}"`,
    );
  });

  it('rejects two commits at one timestamp', () => {
    const page = validPage();
    (page['items'] as Json[])[1]!['commitId'] = 'c-other';
    rejects(
      () => parseCatalogPage(body(page), PAGE_URL),
      PAGE_URL,
      'items[1].commitId: "c-other" differs from items[0].commitId "c-2"',
      'one commit per timestamp',
    );
  });

  it('tells commits 100 ns apart as different timestamps', () => {
    const page = validPage();
    (page['items'] as Json[])[2]!['commitTimeStamp'] = '2017-10-31T23:30:32.4197848Z';
    expect(parseCatalogPage(body(page), PAGE_URL).items[2]!.commitTicks).toBe(parseTimestamp(T0) - 1n);
  });

  it('rejects one commit at two timestamps', () => {
    const page = validPage();
    (page['items'] as Json[])[2]!['commitId'] = 'c-2';
    rejects(
      () => parseCatalogPage(body(page), PAGE_URL),
      PAGE_URL,
      `items[2].commitTimeStamp: "${T_EARLIER}" differs from items[0].commitTimeStamp "${T0}" in the same commit "c-2"`,
    );
  });

  it('accepts one commit written with two spellings of its timestamp', () => {
    const page = validPage();
    (page['items'] as Json[])[1]!['commitTimeStamp'] = '2017-11-01T00:30:32.4197849+01:00';
    expect(parseCatalogPage(body(page), PAGE_URL).items[1]!.commitTicks).toBe(parseTimestamp(T0));
  });

  it('rejects the same id and version twice in one commit, naming both URLs', () => {
    const page = validPage();
    const items = page['items'] as Json[];
    items.push(pageItem(9, { 'nuget:id': 'PKG0', 'nuget:version': '1.0.0+build.5' }));
    const error = rejects(
      () => parseCatalogPage(body(page), PAGE_URL),
      PAGE_URL,
      'items[3]: PKG0 1.0.0+build.5 appears twice in commit "c-2"',
      items[0]!['@id'] as string,
      items[3]!['@id'] as string,
    );
    expect(error.reason).not.toContain('; and');
  });

  it('accepts the same id and version in different commits', () => {
    const page = validPage();
    (page['items'] as Json[])[2]!['nuget:id'] = 'pkg0';
    expect(parseCatalogPage(body(page), PAGE_URL).items).toHaveLength(3);
  });

  it('rejects the same leaf URL twice', () => {
    const page = validPage();
    const items = page['items'] as Json[];
    items[1]!['@id'] = items[0]!['@id'];
    rejects(() => parseCatalogPage(body(page), PAGE_URL), PAGE_URL, 'items[1]["@id"]: duplicate of items[0]');
  });

  it('stays linear and keeps its message short on a hostile page', () => {
    const n = 20_000;
    const items = Array.from({ length: n }, (_, i) => pageItem(i, { commitId: `c-${i}` }));
    const error = rejects(() => parseCatalogPage(body({ ...validPage(), items }), PAGE_URL), PAGE_URL);
    expect(error.reason).toContain(`; and ${n - 1 - 3} more problems`);
    expect(error.message.length).toBeLessThan(1_500);
  });

  it('accepts random valid pages in any order, keeping count and ticks', () => {
    const MAX_TICKS = parseTimestamp('9999-12-31T23:59:59.9999999Z');
    const commits = fc.uniqueArray(fc.bigInt({ min: 0n, max: MAX_TICKS }), { minLength: 1, maxLength: 8 });
    const leaf = fc.record({
      id: fc.stringMatching(/^[A-Za-z][A-Za-z0-9._-]{0,20}$/),
      version: fc.tuple(fc.nat(20), fc.nat(20), fc.nat(20)).map((parts) => parts.join('.')),
      type: fc.constantFrom('nuget:PackageDetails', 'nuget:PackageDelete', 'PackageDetails', ['nuget:PackageDelete']),
      trim: fc.boolean(),
    });
    const arbitrary = fc
      .tuple(commits, fc.array(fc.tuple(fc.nat(), leaf), { minLength: 1, maxLength: 60 }), fc.nat(1_000))
      .chain(([ticksList, leaves, later]) => {
        const items: Json[] = [];
        const seen = new Set<string>();
        leaves.forEach(([pick, spec], n) => {
          const ticks = ticksList[pick % ticksList.length]!;
          const identity = `${ticks}/${spec.id.toLowerCase()}/${spec.version}`;
          if (seen.has(identity)) return;
          seen.add(identity);
          const text = formatTimestamp(ticks);
          items.push({
            '@id': `https://api.test/data/${n}/${spec.id.toLowerCase()}.${spec.version}.json`,
            '@type': spec.type,
            commitId: `commit-${ticks}`,
            // nuget.org drops trailing zeros of the fraction; both forms must give the same ticks.
            commitTimeStamp: spec.trim ? text.replace(/\.?0+Z$/, 'Z') : text,
            'nuget:id': spec.id,
            'nuget:version': spec.version,
          });
        });
        const newest = items.reduce((max, item) => {
          const ticks = parseTimestamp(item['commitTimeStamp'] as string);
          return ticks > max ? ticks : max;
        }, 0n);
        const pageTicks = newest + BigInt(later) <= MAX_TICKS ? newest + BigInt(later) : newest;
        return fc.shuffledSubarray(items, { minLength: items.length, maxLength: items.length }).map((shuffled) => ({
          commitId: 'page-commit',
          commitTimeStamp: formatTimestamp(pageTicks),
          count: shuffled.length,
          items: shuffled,
        }));
      });
    fc.assert(
      fc.property(arbitrary, (document) => {
        const page = parseCatalogPage(body(document), PAGE_URL);
        expect(page.items).toHaveLength(document.items.length);
        expect(page.count).toBe(document.items.length);
        page.items.forEach((item, n) => {
          const source = document.items[n]!;
          expect(item.url).toBe(source['@id']);
          expect(item.commitTicks).toBe(parseTimestamp(source['commitTimeStamp'] as string));
          expect(formatTimestamp(item.commitTicks)).toBe(
            formatTimestamp(parseTimestamp(source['commitTimeStamp'] as string)),
          );
        });
      }),
      { numRuns: 200 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Leaf
// ---------------------------------------------------------------------------------------------

describe('parseLeaf', () => {
  it('accepts a details leaf and keeps undocumented properties', () => {
    const leaf = parseLeaf(body(detailsLeaf()), LEAF_URL, expectedItem());
    expect(leaf).toEqual({
      types: ['PackageDetails', 'catalog:Permalink'],
      type: LeafType.details,
      id: 'Foo',
      version: '1.0.0',
      commitId: 'c-2',
      commitTimeStamp: T0,
      commitTicks: parseTimestamp(T0),
      document: detailsLeaf(),
    });
  });

  it('accepts a delete leaf and a single-string @type', () => {
    const document = { ...deleteLeaf(), '@type': 'nuget:PackageDelete' };
    const leaf = parseLeaf(body(document), LEAF_URL, expectedItem({ type: LeafType.delete }));
    expect(leaf.types).toEqual(['nuget:PackageDelete']);
    expect(leaf.type).toBe(LeafType.delete);
  });

  const common = ['@type', 'catalog:commitId', 'catalog:commitTimeStamp', 'id', 'published', 'version'];
  const pathOf = (field: string): string => (/^[A-Za-z_$][\w$]*$/.test(field) ? field : `["${field}"]`);

  it.each([...common, 'packageHash', 'packageHashAlgorithm', 'packageSize'])(
    'rejects a details leaf without %s',
    (field) => {
      const document = detailsLeaf();
      delete document[field];
      rejects(() => parseLeaf(body(document), LEAF_URL, expectedItem()), LEAF_URL, `${pathOf(field)}: missing`);
    },
  );

  it.each(common)('rejects a delete leaf without %s', (field) => {
    const document = deleteLeaf();
    delete document[field];
    rejects(
      () => parseLeaf(body(document), LEAF_URL, expectedItem({ type: LeafType.delete })),
      LEAF_URL,
      `${pathOf(field)}: missing`,
    );
  });

  it('lists every missing property of an empty object, three at most', () => {
    const error = rejects(() => parseLeaf('{}', LEAF_URL, expectedItem()), LEAF_URL, '; and 3 more problems');
    expect(error.reason.startsWith('["@type"]: missing')).toBe(true);
  });

  it('rejects a leaf with a wrong @type', () => {
    const document = { ...detailsLeaf(), '@type': ['PackageEdit', 'catalog:Permalink'] };
    rejects(
      () => parseLeaf(body(document), LEAF_URL, expectedItem()),
      LEAF_URL,
      '["@type"]: expected PackageDetails or PackageDelete, got ["PackageEdit","catalog:Permalink"]',
    );
  });

  it('rejects a leaf whose @type has both types', () => {
    const document = { ...detailsLeaf(), '@type': ['PackageDetails', 'PackageDelete'] };
    rejects(() => parseLeaf(body(document), LEAF_URL, expectedItem()), LEAF_URL, '["@type"]: has both');
  });

  it('rejects a leaf whose type differs from the page item', () => {
    rejects(
      () => parseLeaf(body(deleteLeaf()), LEAF_URL, expectedItem()),
      LEAF_URL,
      '["@type"]: the leaf has "PackageDelete" but the page item has "PackageDetails"',
    );
  });

  it('rejects a commit timestamp 100 ns away from the page item', () => {
    const document = { ...detailsLeaf(), 'catalog:commitTimeStamp': T0_PLUS_100NS };
    rejects(
      () => parseLeaf(body(document), LEAF_URL, expectedItem()),
      LEAF_URL,
      `["catalog:commitTimeStamp"]: the leaf has "${T0_PLUS_100NS}" but the page item has "${T0}"`,
    );
  });

  it('accepts the same commit time written differently', () => {
    const document = { ...detailsLeaf(), 'catalog:commitTimeStamp': '2017-10-31T23:30:32.4197849+00:00' };
    expect(parseLeaf(body(document), LEAF_URL, expectedItem()).commitTicks).toBe(parseTimestamp(T0));
  });

  it('rejects a commit id different from the page item', () => {
    const document = { ...detailsLeaf(), 'catalog:commitId': 'c-9' };
    rejects(
      () => parseLeaf(body(document), LEAF_URL, expectedItem()),
      LEAF_URL,
      '["catalog:commitId"]: the leaf has "c-9" but the page item has "c-2"',
    );
  });

  it('rejects an id different from the page item, but not a difference of case', () => {
    rejects(
      () => parseLeaf(body({ ...detailsLeaf(), id: 'Bar' }), LEAF_URL, expectedItem()),
      LEAF_URL,
      'id: the leaf has "Bar" but the page item has "Foo"',
    );
    expect(parseLeaf(body({ ...detailsLeaf(), id: 'FOO' }), LEAF_URL, expectedItem()).id).toBe('FOO');
  });

  it.each([
    ['1.0', '1.0.0'],
    ['1.0.0', '1.0'],
    ['1.0.0.0', '1.0.0'],
    ['01.0', '1.0.0'],
    ['1.0.0+sha.5', '1.0.0'],
    ['1.0.0-Beta.1', '1.0.0-beta.1+build'],
    ['1.0-RC', '1.0.0-rc'],
  ])('accepts the leaf version %s for the item version %s', (leafVersion, itemVersion) => {
    const document = { ...deleteLeaf(), version: leafVersion };
    const leaf = parseLeaf(body(document), LEAF_URL, expectedItem({ type: LeafType.delete, version: itemVersion }));
    expect(leaf.version).toBe(leafVersion);
  });

  it.each([
    ['1.0.1', '1.0.0'],
    ['1.0.0.1', '1.0.0'],
    ['1.0.0-beta', '1.0.0'],
    ['1.0.0-beta.1', '1.0.0-beta.2'],
  ])('rejects the leaf version %s for the item version %s', (leafVersion, itemVersion) => {
    const document = { ...detailsLeaf(), version: leafVersion };
    rejects(
      () => parseLeaf(body(document), LEAF_URL, expectedItem({ version: itemVersion })),
      LEAF_URL,
      `version: the leaf has "${leafVersion}" but the page item has "${itemVersion}"`,
    );
  });

  it('lists every field that differs from the page item', () => {
    const document = { ...detailsLeaf(), id: 'Bar', version: '2.0.0' };
    rejects(() => parseLeaf(body(document), LEAF_URL, expectedItem()), LEAF_URL, 'id: the leaf', '; version: the leaf');
  });

  it.each([
    ['not base64', 'not base64!', 'packageHash: expected standard base64'],
    ['base64url', 'abc_-w==', 'packageHash: expected standard base64'],
    ['badly padded', 'abc', 'packageHash: expected standard base64'],
    ['empty', '', 'packageHash: must not be empty'],
  ])('rejects a packageHash that is %s', (_, hash, message) => {
    const document = { ...detailsLeaf(), packageHash: hash };
    rejects(() => parseLeaf(body(document), LEAF_URL, expectedItem()), LEAF_URL, message);
  });

  it.each([
    ['negative', -1, 'packageSize: must not be negative, got -1'],
    ['fractional', 1.5, 'packageSize: expected an integer, got 1.5'],
    ['a string', '118348', 'packageSize: expected number, got string'],
  ])('rejects a packageSize that is %s', (_, size, message) => {
    const document = { ...detailsLeaf(), packageSize: size };
    rejects(() => parseLeaf(body(document), LEAF_URL, expectedItem()), LEAF_URL, message);
  });

  it('accepts a packageSize of 0 and any published date', () => {
    const document = { ...detailsLeaf(), packageSize: 0, published: '0001-01-01T00:00:00Z' };
    expect(parseLeaf(body(document), LEAF_URL, expectedItem()).document['packageSize']).toBe(0);
  });

  it('rejects an invalid published date', () => {
    const document = { ...detailsLeaf(), published: '1900-02-29T00:00:00Z' };
    const parse = (): unknown => parseLeaf(body(document), LEAF_URL, expectedItem());
    rejects(parse, LEAF_URL, 'published: invalid timestamp "1900-02-29T00:00:00Z": day 29 is out of range');
  });

  it.each([
    ['listed', 'yes', 'listed: expected boolean, got string'],
    ['isPrerelease', 1, 'isPrerelease: expected boolean, got number'],
    ['requireLicenseAcceptance', 'false', 'requireLicenseAcceptance: expected boolean, got string'],
    ['tags', 7, 'tags: expected a string or an array of strings'],
    ['tags', ['a', 7], 'tags: expected a string or an array of strings'],
    ['vulnerabilities', { severity: '1' }, 'vulnerabilities: expected array, got object'],
    ['vulnerabilities', [{ severity: '1' }], 'vulnerabilities[0].advisoryUrl: missing'],
    ['deprecation', { message: 'old' }, 'deprecation.reasons: missing (expected array)'],
    ['packageTypes', [{ version: '1.0.0' }], 'packageTypes[0].name: missing (expected string)'],
    ['dependencyGroups', [{ dependencies: 'none' }], 'dependencyGroups[0].dependencies: expected array, got string'],
    ['title', ['x'], 'title: expected string, got array'],
  ])('rejects a details leaf whose %s is %j', (field, value, message) => {
    const document = { ...detailsLeaf(), [field]: value };
    rejects(() => parseLeaf(body(document), LEAF_URL, expectedItem()), LEAF_URL, message);
  });

  it('accepts optional properties in their lenient forms', () => {
    const document = {
      ...detailsLeaf(),
      tags: 'one two',
      listed: null,
      vulnerabilities: [{ advisoryUrl: 'https://github.com/advisories/X', severity: '7' }],
      deprecation: { reasons: [] },
      packageTypes: [{ name: ' ' }],
      dependencyGroups: [{}, { dependencies: [{}, { id: '', range: 'not a range' }, { id: ' ' }] }],
    };
    expect(parseLeaf(body(document), LEAF_URL, expectedItem()).document).toEqual(document);
  });

  it('does not check details properties on a delete leaf', () => {
    const document = { ...deleteLeaf(), listed: 'whatever', packageSize: -1 };
    expect(parseLeaf(body(document), LEAF_URL, expectedItem({ type: LeafType.delete })).type).toBe(LeafType.delete);
  });
});

// ---------------------------------------------------------------------------------------------
// Service index and source kind
// ---------------------------------------------------------------------------------------------

describe('service index', () => {
  it('finds the Catalog/3.0.0 resource', () => {
    const document = serviceIndex(['SearchQueryService/3.5.0', 'Catalog/3.0.0', 'RegistrationsBaseUrl']);
    const parsed = parseServiceIndex(body(document), SERVICE_URL);
    expect(parsed.version).toBe('3.0.0');
    expect(parsed.resources).toHaveLength(3);
    expect(findCatalogUrl(parsed, SERVICE_URL)).toBe('https://api.test/v3/resource1/');
  });

  it('finds it among several types of one resource', () => {
    const document = serviceIndex(['PackageBaseAddress/3.0.0', ['Catalog/3.0.0', 'Other']]);
    const parsed = parseServiceIndex(body(document), SERVICE_URL);
    expect(findCatalogUrl(parsed, SERVICE_URL)).toBe('https://api.test/v3/resource1/');
  });

  it('says so when the source has no catalog, listing the types it has', () => {
    const types = [
      'SearchQueryService',
      'SearchQueryService/3.5.0',
      'PackagePublish/2.0.0',
      'RegistrationsBaseUrl',
      'SearchAutocompleteService',
      'ReportAbuseUriTemplate/3.0.0',
      'Catalog/2.0.0',
    ];
    const parsed = parseServiceIndex(body(serviceIndex(types)), SERVICE_URL);
    rejects(
      () => findCatalogUrl(parsed, SERVICE_URL),
      SERVICE_URL,
      'the service index has no Catalog/3.0.0 resource (it has "SearchQueryService", "SearchQueryService/3.5.0"',
      'and 2 more)',
    );
    const empty = parseServiceIndex(body({ version: '3.0.0', resources: [] }), SERVICE_URL);
    rejects(() => findCatalogUrl(empty, SERVICE_URL), SERVICE_URL, 'no Catalog/3.0.0 resource (it has no resources)');
  });

  it('rejects a service index without resources, or with a bad resource', () => {
    const parse = (document: unknown) => (): unknown => parseServiceIndex(body(document), SERVICE_URL);
    rejects(parse({ version: '3.0.0' }), SERVICE_URL, 'resources: missing (expected array)');
    const relative = { resources: [{ '@id': 'catalog0/index.json', '@type': 'Catalog/3.0.0' }] };
    rejects(parse(relative), SERVICE_URL, 'resources[0]["@id"]: expected an absolute http(s) URL');
    const untyped = { resources: [{ '@id': 'https://api.test/catalog0/index.json' }] };
    rejects(parse(untyped), SERVICE_URL, 'resources[0]["@type"]: missing (expected a string or an array of strings)');
  });

  it('detects the source kind by content', () => {
    expect(detectSourceKind(serviceIndex(['Catalog/3.0.0']), SERVICE_URL)).toBe(SourceKind.serviceIndex);
    expect(detectSourceKind(validIndex(), INDEX_URL)).toBe(SourceKind.catalogIndex);
    rejects(() => detectSourceKind({ version: '3.0.0' }, SERVICE_URL), SERVICE_URL, 'neither a service index');
    rejects(() => detectSourceKind({ resources: [], items: [] }, SERVICE_URL), SERVICE_URL, 'has both');
    rejects(() => detectSourceKind({ items: {} }, SERVICE_URL), SERVICE_URL, 'neither');
    rejects(() => detectSourceKind(null, SERVICE_URL), SERVICE_URL, 'got null');
    expect(() => detectSourceKind([])).toThrow(InvalidDocumentError);
  });

  it('parses a source document as whichever kind it is', () => {
    const service = parseSource(body(serviceIndex(['Catalog/3.0.0'])), SERVICE_URL);
    expect(service.kind).toBe(SourceKind.serviceIndex);
    const catalog = parseSource(body(validIndex()), INDEX_URL);
    expect(catalog.kind === SourceKind.catalogIndex && catalog.catalogIndex.items).toHaveLength(2);
    rejects(() => parseSource('{}', SERVICE_URL), SERVICE_URL, 'neither');
  });
});

describe('InvalidDocumentError', () => {
  it('carries url, reason, name and cause', () => {
    const cause = new Error('inner');
    const error = new InvalidDocumentError('https://x/page3.json', 'items[4].count: bad', { cause });
    expect(error.name).toBe('InvalidDocumentError');
    expect(error.message).toBe('https://x/page3.json: items[4].count: bad');
    expect(error.url).toBe('https://x/page3.json');
    expect(error.reason).toBe('items[4].count: bad');
    expect(error.cause).toBe(cause);
    expect(error).toBeInstanceOf(Error);
  });
});

describe('bounds on ids and versions (issue 10, item 4)', () => {
  const pageWith = (overrides: Json): string => {
    const page = validPage();
    (page['items'] as Json[])[1] = pageItem(1, overrides);
    return body(page);
  };
  const problemOf = (overrides: Json) => parseCatalogPage(pageWith(overrides), PAGE_URL).items[1]!.problem;

  it('a 300-character id leaves the page valid; the item carries an error naming the page, the item and the bound', () => {
    const id = `Big${'x'.repeat(297)}`;
    const page = parseCatalogPage(pageWith({ 'nuget:id': id }), PAGE_URL);
    expect(page.items).toHaveLength(3);
    expect(page.items[0]!.problem).toBeUndefined();
    expect(page.items[2]!.problem).toBeUndefined();
    const problem = page.items[1]!.problem!;
    expect(problem).toBeInstanceOf(InvalidDocumentError);
    expect(problem.url).toBe(PAGE_URL);
    expect(problem.message).toContain(`${PAGE_URL}: items[1]: package "Big${'x'.repeat(196)}`);
    expect(problem.message).toContain('(302 characters) "1.0.0" (leaf "https://api.test/v3/catalog0/data/x/pkg1.1.0.0.json")');
    expect(problem.message).toContain('cannot be stored: nuget:id is 300 characters; NuGet allows at most 100');
    expect(page.items[1]).toMatchObject({ id, version: '1.0.0' });
  });

  it.each([
    ['a 100-character id', { 'nuget:id': 'a'.repeat(100) }],
    ['a 100-character id of 3-byte characters (900 bytes encoded)', { 'nuget:id': '包'.repeat(100) }],
    ['a 100-code-unit id of astral characters', { 'nuget:id': '𝒳'.repeat(50) }],
    ['a 64-character version', { 'nuget:version': `1.0.0-${'a'.repeat(58)}` }],
  ])('accepts %s', (_, overrides) => {
    expect(problemOf(overrides)).toBeUndefined();
  });

  it.each([
    ['a 101-character id', { 'nuget:id': 'a'.repeat(101) }, 'nuget:id is 101 characters; NuGet allows at most 100'],
    ['a 65-character version', { 'nuget:version': `1.0.0-${'a'.repeat(59)}` }, 'nuget:version is 65 characters; NuGet allows at most 64'],
    [
      'a 100-character id of 3-byte characters with a 36-character version',
      { 'nuget:id': '包'.repeat(100), 'nuget:version': `1.0.0-${'a'.repeat(30)}` },
      'its key segments {id} and {version} encode to 900 + 36 bytes',
    ],
    [
      'a version of exotic characters',
      { 'nuget:id': '包'.repeat(90), 'nuget:version': `1.0.0-${'包'.repeat(20)}` },
      'encode to 810 + 186 bytes; at most 929 keep every key below 1024 bytes',
    ],
    ['a version that is only build metadata', { 'nuget:version': '+build.5' }, 'empty version'],
  ])('sets aside %s', (_, overrides, reason) => {
    const problem = problemOf(overrides);
    expect(problem?.url).toBe(PAGE_URL);
    expect(problem?.message).toContain('items[1]: package ');
    expect(problem?.message).toContain(reason);
  });

  it('every item without a problem has keys below 1,024 bytes under the longest prefix', () => {
    const prefix = 'p'.repeat(MAX_PREFIX_BYTES - 1) + '/';
    const unit = fc.constantFrom('a', 'Z', '.', '+', ' ', '0', 'é', 'İ', '包', '𝒳', '\ud800');
    // Ids of up to 105 three-byte characters (often 85 or more) and a tail, versions of a short core and a label:
    // many keys close to the bounds.
    const ids = fc
      .tuple(fc.oneof(fc.integer({ min: 0, max: 105 }), fc.integer({ min: 85, max: 101 })), fc.string({ unit, maxLength: 12 }))
      .map(([wide, tail]) => '包'.repeat(wide) + tail)
      .filter((id) => id !== '');
    const versions = fc
      .tuple(fc.constantFrom('', '1', '1.0', '01.2.3.0', '+'), fc.oneof(fc.string({ unit, maxLength: 66 }), fc.string({ unit, minLength: 4, maxLength: 30 })))
      .map(([core, label]) => (core === '' ? label : `${core}-${label}`))
      .filter((version) => version !== '');
    fc.assert(
      fc.property(ids, versions, (id, version) => {
        const item = parseCatalogPage(pageWith({ 'nuget:id': id, 'nuget:version': version }), PAGE_URL).items[1]!;
        if (item.problem !== undefined) return;
        for (const key of [leafKey(prefix, 'AAAAAAAAAAAA', id, version), quarantineKey(prefix, 'AAAAAAAAAAAA', id, version)]) {
          expect(Buffer.byteLength(key)).toBeLessThan(1_024);
        }
        // And in a folder, whose file names hold 255 bytes: no segment of an accepted item is longer.
        if (identityKeyProblem(id, version, 255) === undefined) {
          const segments = leafKey('', 'AAAAAAAAAAAA', id, version).split('/');
          expect(Math.max(...segments.map((segment) => Buffer.byteLength(segment)))).toBeLessThanOrEqual(255);
        }
      }),
      { numRuns: 500 },
    );
  });
});
