/**
 * The service index, catalog index and page documents a {@link CatalogReplica} serves for a
 * generated catalog, shaped like nuget.org's (JSON-LD `@context` included).
 *
 * The catalog does not define the order of index and page items, so they are served shuffled
 * (never in time order, when there are two or more): a client that relies on the order fails.
 * The shuffle is seeded from the content, so the same document is always the same bytes.
 */
import type { GeneratedCommit } from './catalog-generator.js';
import type { LaidOutPage } from './catalog-layout.js';
import { hashSeed, mulberry32 } from './prng.js';

/** Path of the service index. */
export const SERVICE_INDEX_PATH = '/v3/index.json';
/** Path of the catalog index of a generated catalog. */
export const CATALOG_INDEX_PATH = '/v3/catalog0/index.json';

/** Path of page `number` of a generated catalog. */
export function pagePath(number: number): string {
  return `/v3/catalog0/page${number}.json`;
}

/** The JSON-LD `@context` of nuget.org's catalog index and pages. */
export const CATALOG_CONTEXT = {
  '@vocab': 'http://schema.nuget.org/catalog#',
  nuget: 'http://schema.nuget.org/schema#',
  items: { '@id': 'item', '@container': '@set' },
  parent: { '@type': '@id' },
  commitTimeStamp: { '@type': 'http://www.w3.org/2001/XMLSchema#dateTime' },
  'nuget:lastCreated': { '@type': 'http://www.w3.org/2001/XMLSchema#dateTime' },
  'nuget:lastEdited': { '@type': 'http://www.w3.org/2001/XMLSchema#dateTime' },
  'nuget:lastDeleted': { '@type': 'http://www.w3.org/2001/XMLSchema#dateTime' },
};

const NO_COMMIT = { commitId: '00000000-0000-0000-0000-000000000000', timestamp: '0001-01-01T00:00:00Z' };

/** A service index whose `Catalog/3.0.0` resource is `catalogIndexUrl`, among other resources. */
export function renderServiceIndex(origin: string, catalogIndexUrl: string): string {
  return pretty({
    version: '3.0.0',
    resources: [
      {
        '@id': `${origin}/v3-flatcontainer/`,
        '@type': 'PackageBaseAddress/3.0.0',
        comment: 'Base URL of where NuGet packages are stored',
      },
      { '@id': catalogIndexUrl, '@type': 'Catalog/3.0.0', comment: 'Index of the NuGet package catalog.' },
      {
        '@id': `${origin}/v3/registration5-semver1/`,
        '@type': 'RegistrationsBaseUrl/3.6.0',
        comment: 'Base URL of where package metadata is stored',
      },
      {
        '@id': `${origin}/query`,
        '@type': 'SearchQueryService/3.5.0',
        comment: 'Query endpoint of NuGet Search service',
      },
    ],
    '@context': {
      '@vocab': 'http://schema.nuget.org/services#',
      comment: 'http://www.w3.org/2000/01/rdf-schema#comment',
    },
  });
}

/** The catalog index of `pages`, items shuffled. */
export function renderCatalogIndex(
  pages: readonly LaidOutPage[],
  commits: readonly GeneratedCommit[],
  origin: string,
): string {
  const newest = commits.at(-1) ?? NO_COMMIT;
  const lastOf = (type: string): string =>
    [...commits].reverse().find((c) => c.leaves.some((l) => l.type === type))?.timestamp ?? NO_COMMIT.timestamp;
  const items = pages.map((page) => ({
    '@id': `${origin}${pagePath(page.number)}`,
    '@type': 'CatalogPage',
    commitId: page.newest.commitId,
    commitTimeStamp: page.newest.timestamp,
    count: page.entries.length,
  }));
  return pretty({
    '@id': `${origin}${CATALOG_INDEX_PATH}`,
    '@type': ['CatalogRoot', 'AppendOnlyCatalog', 'Permalink'],
    commitId: newest.commitId,
    commitTimeStamp: newest.timestamp,
    count: items.length,
    items: shuffled(items, `index|${newest.commitId}|${items.length}`),
    'nuget:lastCreated': lastOf('PackageDetails'),
    'nuget:lastDeleted': lastOf('PackageDelete'),
    'nuget:lastEdited': newest.timestamp,
    '@context': CATALOG_CONTEXT,
  });
}

/** A page document, items shuffled; leaf URLs on `leafOrigin`. */
export function renderPage(page: LaidOutPage, origin: string, leafOrigin: string): string {
  const items = page.entries.map(({ commit, leaf }) => ({
    '@id': `${leafOrigin}${leaf.path}`,
    '@type': `nuget:${leaf.type}`,
    commitId: commit.commitId,
    commitTimeStamp: commit.timestamp,
    'nuget:id': leaf.id,
    'nuget:version': leaf.version,
  }));
  return pretty({
    '@id': `${origin}${pagePath(page.number)}`,
    '@type': 'CatalogPage',
    commitId: page.newest.commitId,
    commitTimeStamp: page.newest.timestamp,
    count: items.length,
    items: shuffled(items, `page|${page.number}|${page.newest.commitId}|${items.length}`),
    parent: `${origin}${CATALOG_INDEX_PATH}`,
    '@context': CATALOG_CONTEXT,
  });
}

/** `items` in a seeded random order that is never the given order (for two or more items). */
function shuffled<T>(items: readonly T[], seedText: string): T[] {
  const out = mulberry32(hashSeed(seedText)).shuffle(items);
  if (out.length > 1 && out.every((item, i) => item === items[i])) out.push(out.shift()!);
  return out;
}

function pretty(value: unknown): string {
  return JSON.stringify(value, null, 2);
}
