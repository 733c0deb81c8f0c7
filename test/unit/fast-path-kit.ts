/**
 * How the fast-path tests (fast-path.test.ts) break documents: values on the edges of the schemas, the places of a
 * leaf, a page, a catalog index and a service index (as lists, and as fast-check arbitraries), a change at one place
 * ({@link mutate}), and a fast path's answer held to zod's ({@link agreement}).
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import type { Json } from './schema-kit.js';

/** Replacement values that sit on the edges of the schemas. `undefined` deletes the property. */
export const EDGE_VALUES: unknown[] = [
  undefined,
  null,
  '',
  'x',
  'PackageDetails',
  'nuget:PackageDelete',
  'AAAA',
  'AAA=',
  'AA==',
  'not base64!',
  '2020-01-01T00:00:00Z',
  '2020-02-30T00:00:00Z',
  '2020-01-01T00:00:00.12345678Z',
  '2020-01-01T00:00:00+01:00',
  'https://api.nuget.org/v3/catalog0/data/x.json',
  'ftp://api.nuget.org/x',
  'https://api.nuget.org/a b',
  'http://',
  '/relative',
  0,
  -0,
  -1,
  1.5,
  2 ** 53,
  1e21,
  true,
  false,
  [],
  {},
  ['a'],
  [1],
  [null],
  [{}],
  ['PackageDetails', 'PackageDelete'],
  ['nuget:PackageDetails', 'PackageDetails'],
  [{ advisoryUrl: 'u', severity: 1 }],
  [{ advisoryUrl: 'u', severity: '2' }],
  [{ advisoryUrl: 1, severity: '2' }],
  [{ name: 'Dependency' }],
  [{ name: 'Dependency', version: 1 }],
  [{ targetFramework: 'net8.0', dependencies: [{}] }],
  [{ targetFramework: 'net8.0', dependencies: [1] }],
  { reasons: [] },
  { reasons: ['Legacy'], alternatePackage: { id: 'x' } },
  { reasons: ['Legacy'], alternatePackage: { id: 1 } },
  { reasons: 'Legacy' },
];

export const LEAF_KEYS = [
  '@type',
  'catalog:commitId',
  'catalog:commitTimeStamp',
  'id',
  'published',
  'version',
  'packageHash',
  'packageHashAlgorithm',
  'packageSize',
  'authors',
  'created',
  'description',
  'iconUrl',
  'language',
  'licenseUrl',
  'minClientVersion',
  'projectUrl',
  'releaseNotes',
  'summary',
  'title',
  'verbatimVersion',
  'listed',
  'isPrerelease',
  'requireLicenseAcceptance',
  'tags',
  'vulnerabilities',
  'deprecation',
  'packageTypes',
  'dependencyGroups',
  'other',
];
export const NESTED = [
  'advisoryUrl',
  'severity',
  'reasons',
  'message',
  'alternatePackage',
  'id',
  'range',
  'name',
  'version',
  'targetFramework',
  'dependencies',
];

/** A place in a document: the keys and indexes down to it. */
export type Path = readonly (string | number)[];

/** Sets (or, for `undefined`, deletes) the value at `path` in a deep copy; a path through a missing part changes nothing. */
export function mutate(document: Json, path: Path, value: unknown): Json {
  const copy = structuredClone(document);
  let at: unknown = copy;
  for (const key of path.slice(0, -1)) {
    if (typeof at !== 'object' || at === null) return copy;
    at = (at as Record<string | number, unknown>)[key];
  }
  if (typeof at !== 'object' || at === null) return copy;
  const last = path[path.length - 1]!;
  if (value === undefined) delete (at as Record<string | number, unknown>)[last];
  else (at as Record<string | number, unknown>)[last] = structuredClone(value);
  return copy;
}

/** A value for a mutated place: an edge value, or any small JSON. */
export const value = fc.oneof(fc.constantFrom(...EDGE_VALUES), fc.jsonValue({ maxDepth: 2 }));
export const leafPath: fc.Arbitrary<Path> = fc.oneof(
  fc.constantFrom(...LEAF_KEYS).map((key) => [key]),
  fc.tuple(fc.constantFrom('@type', 'tags'), fc.nat(2)).map(([key, i]) => [key, i]),
  fc.tuple(fc.constantFrom('deprecation'), fc.constantFrom(...NESTED)).map(([key, nested]) => [key, nested]),
  fc.constantFrom<Path>(
    ['deprecation', 'alternatePackage', 'id'],
    ['deprecation', 'alternatePackage', 'range'],
    ['deprecation', 'reasons', 0],
  ),
  fc
    .tuple(
      fc.constantFrom('vulnerabilities', 'packageTypes', 'dependencyGroups'),
      fc.nat(2),
      fc.option(fc.constantFrom(...NESTED), { nil: undefined }),
    )
    .map(([key, i, nested]) => (nested === undefined ? [key, i] : [key, i, nested])),
  fc.constantFrom<Path>(['dependencyGroups', 0, 'dependencies', 0], ['dependencyGroups', 0, 'dependencies', 0, 'id']),
);
export const ITEM_KEYS = ['@id', '@type', 'commitId', 'commitTimeStamp', 'nuget:id', 'nuget:version', 'other'];
export const pagePath: fc.Arbitrary<Path> = fc.oneof(
  fc.constantFrom('commitId', 'commitTimeStamp', 'count', 'parent', 'items', 'other').map((key) => [key]),
  fc.nat(45).map((i) => ['items', i]),
  fc.tuple(fc.nat(45), fc.constantFrom(...ITEM_KEYS)).map(([i, key]) => ['items', i, key]),
  fc.tuple(fc.nat(45), fc.nat(2)).map(([i, j]) => ['items', i, '@type', j]),
);

/**
 * A fast path's answer, held to zod's: whatever it takes, zod takes too, with the same fields. The function
 * returned says whether the fast path took the document.
 */
export function agreement<T>(
  fast: (document: Json) => T | undefined,
  zod: (document: Json, url: string) => T,
  url: string,
): (document: Json) => boolean {
  return (document) => {
    const taken = fast(document);
    if (taken === undefined) return false;
    expect(zod(document, url)).toStrictEqual(taken);
    return true;
  };
}

/** Every single-place change: each path given, each edge value, on each document given. */
export function everySingleChange(
  documents: readonly Json[],
  paths: readonly Path[],
  agree: (document: Json) => boolean,
): number {
  let taken = 0;
  for (const document of documents) {
    for (const path of paths) for (const v of EDGE_VALUES) if (agree(mutate(document, path, v))) taken++;
  }
  return taken;
}

export const LEAF_PATHS: Path[] = [
  ...LEAF_KEYS.map((key) => [key]),
  ['@type', 0],
  ['@type', 1],
  ['tags', 0],
  ...NESTED.map((key) => ['deprecation', key]),
  ['deprecation', 'alternatePackage', 'id'],
  ['deprecation', 'alternatePackage', 'range'],
  ['deprecation', 'reasons', 0],
  ...['vulnerabilities', 'packageTypes', 'dependencyGroups'].flatMap((key) => [
    [key, 0],
    ...NESTED.map((nested) => [key, 0, nested]),
  ]),
  ['dependencyGroups', 0, 'dependencies', 0],
  ['dependencyGroups', 0, 'dependencies', 0, 'id'],
];

export const INDEX_KEYS = ['@id', 'commitId', 'commitTimeStamp', 'count', 'items', 'other'];
export const indexPath: fc.Arbitrary<Path> = fc.oneof(
  fc.constantFrom('commitId', 'commitTimeStamp', 'count', 'items', 'other').map((key) => [key]),
  fc.nat(3).map((i) => ['items', i]),
  fc.tuple(fc.nat(3), fc.constantFrom(...INDEX_KEYS)).map(([i, key]) => ['items', i, key]),
);
export const serviceIndexPath: fc.Arbitrary<Path> = fc.oneof(
  fc.constantFrom('version', 'resources', 'other').map((key) => [key]),
  fc.nat(3).map((i) => ['resources', i]),
  fc.tuple(fc.nat(3), fc.constantFrom('@id', '@type', 'comment')).map(([i, key]) => ['resources', i, key]),
  fc.tuple(fc.nat(3), fc.nat(2)).map(([i, j]) => ['resources', i, '@type', j]),
);
