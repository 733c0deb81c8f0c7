/**
 * The catalog client's parsers: the same documents, errors and messages as `parseServiceIndex`, `parseCatalogIndex`,
 * `parseCatalogPage` and `parseLeaf`, but zod (a fifth of a command's start-up) is loaded only when a fast path
 * (fast-path.ts) is not sure of a document. A run that meets only well-formed documents, which is every run against
 * nuget.org, never loads it. The synchronous parsers stay the library's API; both share the fast paths and the
 * checks across items (index-check.ts, page-check.ts, leaf-match.ts), so they cannot drift apart.
 */
import { DocumentKind } from './errors.js';
import type { CatalogIndex, CatalogPage, DocumentBody, Leaf, PageItem, ServiceIndex } from './documents.js';
import { fastIndexFields, fastLeafFields, fastPageFields, fastServiceIndex } from './fast-path.js';
import { indexFrom } from './index-check.js';
import { parseJson, requireObject } from './json.js';
import { leafFrom } from './leaf-match.js';
import { pageFrom } from './page-check.js';

/** A service index, as `parseServiceIndex` gives it. */
export async function readServiceIndex(body: DocumentBody, url: string): Promise<ServiceIndex> {
  const document = requireObject(parseJson(body, url), url, DocumentKind.serviceIndex);
  return fastServiceIndex(document) ?? (await import('./service-index.js')).zodServiceIndex(document, url);
}

/** A catalog index, as `parseCatalogIndex` gives it. */
export async function readCatalogIndex(body: DocumentBody, url: string): Promise<CatalogIndex> {
  const document = requireObject(parseJson(body, url), url, DocumentKind.catalogIndex);
  return indexFrom(fastIndexFields(document) ?? (await import('./index-schema.js')).zodIndexFields(document, url), url);
}

/** A catalog page, as `parseCatalogPage` gives it. */
export async function readPage(body: DocumentBody, url: string): Promise<CatalogPage> {
  const document = requireObject(parseJson(body, url), url, DocumentKind.page);
  return pageFrom(fastPageFields(document) ?? (await import('./page-schema.js')).zodPageFields(document, url), url);
}

/** A leaf checked against the page item that named it, as `parseLeaf` gives it. */
export async function readLeaf(body: DocumentBody, url: string, expected: PageItem): Promise<Leaf> {
  const document = requireObject(parseJson(body, url), url, DocumentKind.leaf);
  const fields = fastLeafFields(document) ?? (await import('./leaf-schema.js')).zodLeafFields(document, url);
  return leafFrom(document, fields, url, expected);
}
