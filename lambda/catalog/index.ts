/**
 * The catalog floor's face: the protocol client (HTTP with bounds, the catalog client, its errors)
 * and the validated documents. Other floors import the catalog through this module; files inside
 * lambda/catalog/ import each other directly (importing the face from inside would make a loop).
 *
 * Every catalog document is validated: service index, catalog index, catalog page and leaf. Everything fetched
 * is untrusted input (contract: "Untrusted input"). Each `read…` function here (and each synchronous `parse…`
 * function of lambda/catalog/parsers/) takes the raw body and the URL it came from and returns a typed,
 * validated object, or throws {@link InvalidDocumentError} naming the URL, the JSON path and the problem.
 * Besides the shape of each document, the checks that the protocol's guarantees rest on are enforced there (one
 * commit per timestamp, nothing newer than its container, no duplicates, a leaf matching the page item that
 * pointed at it), so the sync engine can rely on them instead of re-checking. Zod checks shapes; the cross-item
 * checks are plain loops over maps, so a hostile page with a million items is still parsed in linear time.
 *
 * The two give the same results and errors, but the `read…` functions (the client's) load zod only for a document
 * the hand-written fast paths are not sure of (read-documents.ts). Nothing this face imports loads zod: every
 * command imports it.
 */
export {
  LeafType,
  SourceKind,
  type CatalogIndex,
  type CatalogIndexEntry,
  type CatalogPage,
  type DocumentBody,
  type Leaf,
  type PageItem,
  type ServiceIndex,
  type ServiceIndexResource,
  type SourceDocument,
} from './documents.js';
export { parseJson } from './json.js';
export { decode as decodeBody } from './http-decode.js';
export { CATALOG_RESOURCE_TYPE, detectSourceKind, findCatalogUrl } from './source-kind.js';
export { describeItem } from './page-check.js';
export { readCatalogIndex, readLeaf, readPage, readServiceIndex } from './read-documents.js';
export { DocumentKind, InvalidDocumentError } from './errors.js';
export { CatalogClient, DEFAULT_DOCUMENT_LIMITS, type DocumentLimits, type FetchedLeaf } from './catalog-client.js';
export {
  checkCatalogUrl,
  specialHost,
  UnsafeCatalogUrlError,
  unsafeCatalogUrlReason,
  type SpecialHost,
} from './catalog-url-safety.js';
export { HttpClient, parseRetryAfter } from './http-client.js';
export {
  DEFAULT_HTTP_OPTIONS,
  DEFAULT_TOTAL_TIMEOUT_MS,
  type GetOptions,
  type HttpClientOptions,
  type HttpResponse,
  type RequestBounds,
  type RequestEvent,
  type RequestListener,
  type RetryListener,
  type RetryPolicy,
} from './http-options.js';
export {
  BodyDeferredError,
  BodyTooLargeError,
  FetchAbortedError,
  FetchError,
  ForbiddenOriginError,
  LeafMemoryError,
} from './http-errors.js';
export { holdBody, type BodyHold, type BodyMemory } from './body-memory.js';
export { networkHint } from './network-hints.js';
export { proxyFor, readProxyEnv, shownProxy, type ProxyChoice, type ProxyEnv } from '../contract/proxy-env.js';
