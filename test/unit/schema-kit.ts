/**
 * What the catalog schema tests share: the real documents under test/fixtures (told apart by content),
 * valid documents to break one field at a time, and {@link rejects}, which checks an
 * InvalidDocumentError's URL and message.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { InvalidDocumentError, LeafType, type PageItem } from '../../lambda/catalog/index.js';
import { parseTimestamp } from '../../lambda/contract/time.js';

export const FIXTURES = fileURLToPath(new URL('../fixtures', import.meta.url));

export type Json = Record<string, unknown>;
export type Kind = 'index' | 'page' | 'leaf';

export interface Fixture {
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

export function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Told by content, as the brief asks: items with nuget:id = page, items = index, catalog:commitId = leaf. */
function kindOf(json: Json): Kind | undefined {
  if (Array.isArray(json['items'])) {
    return (json['items'] as Json[]).some((item) => 'nuget:id' in item) ? 'page' : 'index';
  }
  return 'catalog:commitId' in json ? 'leaf' : undefined;
}

export const skipped: string[] = [];
export const fixtures: Fixture[] = listJson(FIXTURES)
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
export const ofKind = (kind: Kind): Fixture[] => fixtures.filter((fixture) => fixture.kind === kind);

/** The page item a leaf would have been listed under, built from the leaf itself. */
export function itemFromLeaf(json: Json, url: string): PageItem {
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

export const INDEX_URL = 'https://api.test/v3/catalog0/index.json';
export const PAGE_URL = 'https://api.test/v3/catalog0/page7.json';
export const LEAF_URL = 'https://api.test/v3/catalog0/data/2017.10.31.23.30.32/foo.1.0.0.json';
export const SERVICE_URL = 'https://api.test/v3/index.json';

/** Runs `action`, which must throw an InvalidDocumentError whose message has the URL and every fragment. */
export function rejects(action: () => unknown, url: string, ...fragments: string[]): InvalidDocumentError {
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

export const clone = <T>(value: T): T => structuredClone(value);
export const body = (value: unknown): string => JSON.stringify(value);

export const T0 = '2017-10-31T23:30:32.4197849Z';
export const T0_PLUS_100NS = '2017-10-31T23:30:32.419785Z';
export const T_EARLIER = '2017-10-31T22:31:22.5169519Z';
export const T_LATER = '2017-11-01T00:00:00Z';

export function validIndex(): Json {
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

export function pageItem(n: number, overrides: Json = {}): Json {
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

export function validPage(): Json {
  return {
    commitId: 'c-2',
    commitTimeStamp: T0,
    count: 3,
    parent: INDEX_URL,
    items: [pageItem(0), pageItem(1), pageItem(2, { commitId: 'c-1', commitTimeStamp: T_EARLIER })],
  };
}

export function detailsLeaf(): Json {
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

export function deleteLeaf(): Json {
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

export function expectedItem(overrides: Partial<PageItem> = {}): PageItem {
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

export function serviceIndex(types: (string | string[])[]): Json {
  return {
    version: '3.0.0',
    resources: types.map((type, n) => ({ '@id': `https://api.test/v3/resource${n}/`, '@type': type, comment: 'x' })),
  };
}
