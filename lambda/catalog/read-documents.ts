/**
 * The catalog client's parsers: the same documents, errors and messages as `parseServiceIndex`, `parseCatalogIndex`,
 * `parseCatalogPage` and `parseLeaf`, but zod (a fifth of a command's start-up) is loaded only when a fast path
 * (fast-path.ts) is not sure of a document. A run that meets only well-formed documents, which is every run against
 * nuget.org, never loads it. The synchronous parsers stay the library's API; both share the fast paths and the
 * checks across items (index-check.ts, page-check.ts, leaf-match.ts), so they cannot drift apart.
 */
import { DocumentKind } from './errors.js';
import {
  SourceKind,
  type CatalogIndex,
  type CatalogPage,
  type DocumentBody,
  type Leaf,
  type PageItem,
  type ServiceIndex,
  type SourceDocument,
} from './documents.js';
import { fastIndexFields, fastLeafFields, fastPageFields, fastServiceIndex } from './fast-path.js';
import { indexFrom } from './index-check.js';
import { parseJson, requireObject } from './json.js';
import { leafFrom } from './leaf-match.js';
import { pageFrom } from './page-check.js';
import { detectSourceKind } from './source-kind.js';

/** A service index, as `parseServiceIndex` gives it. */
export function readServiceIndex(body: DocumentBody, url: string): Promise<ServiceIndex> {
  return serviceIndexOf(parseJson(body, url), url);
}

/** A catalog index, as `parseCatalogIndex` gives it. */
export function readCatalogIndex(body: DocumentBody, url: string): Promise<CatalogIndex> {
  return catalogIndexOf(parseJson(body, url), url);
}

/** The document at a source URL, a service index or a catalog index, as `parseSource` gives it: parsed once. */
export async function readSource(body: DocumentBody, url: string): Promise<SourceDocument> {
  const json = parseJson(body, url);
  return detectSourceKind(json, url) === SourceKind.serviceIndex
    ? { kind: SourceKind.serviceIndex, serviceIndex: await serviceIndexOf(json, url) }
    : { kind: SourceKind.catalogIndex, catalogIndex: await catalogIndexOf(json, url) };
}

async function serviceIndexOf(json: unknown, url: string): Promise<ServiceIndex> {
  const document = requireObject(json, url, DocumentKind.serviceIndex);
  return fastServiceIndex(document) ?? (await import('./service-index.js')).zodServiceIndex(document, url);
}

async function catalogIndexOf(json: unknown, url: string): Promise<CatalogIndex> {
  const document = requireObject(json, url, DocumentKind.catalogIndex);
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
