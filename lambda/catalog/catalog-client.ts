import { checkCatalogUrl } from './catalog-url-safety.js';
import { InvalidDocumentError } from './errors.js';
import type { BodyMemory } from './body-memory.js';
import type { HttpClient } from './http-client.js';
import type { RequestBounds } from './http-options.js';
import { FetchError } from './http-errors.js';
import {
  SourceKind,
  type CatalogIndex,
  type CatalogIndexEntry,
  type CatalogPage,
  type Leaf,
  type PageItem,
} from './documents.js';
import { readCatalogIndex, readLeaf, readPage, readSource } from './read-documents.js';
import { findCatalogUrl } from './source-kind.js';
import { formatTimestamp } from '../contract/time.js';

/** Bounds on documents: a hostile or broken source cannot exhaust memory. */
export interface DocumentLimits {
  readonly serviceIndexBytes: number;
  /** nuget.org's index lists tens of thousands of pages: several MB. */
  readonly indexBytes: number;
  /** A page holds at most 550 items on nuget.org: well under 1 MB. */
  readonly pageBytes: number;
  /** The largest real leaves (packages with thousands of files) are a few MB. */
  readonly leafBytes: number;
}

/** Default {@link DocumentLimits}. */
export const DEFAULT_DOCUMENT_LIMITS: DocumentLimits = {
  serviceIndexBytes: 4 * 1024 * 1024,
  indexBytes: 128 * 1024 * 1024,
  pageBytes: 16 * 1024 * 1024,
  leafBytes: 32 * 1024 * 1024,
};

/** A leaf as fetched: the exact bytes served and the validated document. */
export interface FetchedLeaf {
  readonly body: Buffer;
  readonly leaf: Leaf;
  readonly attempts: number;
}

/** How often a page older than its index entry (a cached copy) is fetched again before giving up. */
const STALE_PAGE_REFETCHES = 3;

/**
 * Reads one catalog: resolves the source (a service index or a catalog index), then serves the index, pages
 * and leaves, each validated. Only the catalog index's origin and explicitly allowed origins are fetched.
 * Keeps the last index and its validators, so a warm Lambda sends a conditional GET and does not download or
 * parse an unchanged index twice.
 */
export class CatalogClient {
  private catalogIndexUrl: string | undefined;
  private cachedIndex: { etag?: string; lastModified?: string; index: CatalogIndex } | undefined;
  /** The catalog index read while resolving a source that was the index itself, handed out once. */
  private resolvedIndex: CatalogIndex | undefined;

  constructor(
    readonly http: HttpClient,
    readonly source: string,
    readonly allowedOrigins: readonly string[] = [],
    readonly limits: DocumentLimits = DEFAULT_DOCUMENT_LIMITS,
  ) {
    for (const origin of allowedOrigins) http.allowOrigin(origin);
    http.useCredentialsOf(source);
  }

  /** The catalog index URL, resolving a service index once. `bounds`: the run's deadline and stop signal. */
  async resolveIndexUrl(bounds: RequestBounds = {}): Promise<string> {
    if (this.catalogIndexUrl) return this.catalogIndexUrl;
    const response = await this.http.get(this.source, {
      maxBytes: Math.max(this.limits.serviceIndexBytes, this.limits.indexBytes),
      anyOrigin: true,
      ...bounds,
    });
    const document = await readSource(response.body, this.source);
    let indexUrl: string;
    if (document.kind === SourceKind.serviceIndex) {
      indexUrl = findCatalogUrl(document.serviceIndex, this.source);
      // The index is a document from the network: it must not aim the function at this machine's services.
      checkCatalogUrl(this.source, indexUrl);
    } else {
      indexUrl = this.source;
      // The body is the catalog index itself: keep it, with its validators, as the first cached copy.
      this.resolvedIndex = this.remember(document.catalogIndex, response.headers);
    }
    this.http.allowOrigin(new URL(indexUrl).origin);
    this.catalogIndexUrl = indexUrl;
    return indexUrl;
  }

  /** The catalog index: a conditional GET when a copy is cached. */
  async getIndex(bounds: RequestBounds = {}): Promise<CatalogIndex> {
    const url = await this.resolveIndexUrl(bounds);
    if (this.resolvedIndex) {
      const index = this.resolvedIndex;
      this.resolvedIndex = undefined;
      return index;
    }
    const headers: Record<string, string> = {};
    if (this.cachedIndex?.etag) headers['if-none-match'] = this.cachedIndex.etag;
    if (this.cachedIndex?.lastModified) headers['if-modified-since'] = this.cachedIndex.lastModified;
    const response = await this.http.get(url, {
      maxBytes: this.limits.indexBytes,
      headers,
      ...bounds,
    });
    if (response.status === 304 && this.cachedIndex) return this.cachedIndex.index;
    if (response.status === 304) throw new FetchError(url, 'HTTP 304 to an unconditional request', false);
    return this.remember(await readCatalogIndex(response.body, url), response.headers);
  }

  /**
   * A page, never older than its index entry: a stale cached copy is fetched again with `Cache-Control:
   * no-cache`, and still stale after a few tries it is an error.
   */
  async getPage(entry: CatalogIndexEntry, bounds: RequestBounds = {}): Promise<CatalogPage> {
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = attempt === 0 ? {} : { 'cache-control': 'no-cache', pragma: 'no-cache' };
      const response = await this.http.get(entry.url, {
        maxBytes: this.limits.pageBytes,
        headers,
        ...bounds,
      });
      const page = await readPage(response.body, entry.url);
      if (page.commitTicks >= entry.commitTicks) return page;
      if (attempt >= STALE_PAGE_REFETCHES) {
        throw new InvalidDocumentError(
          entry.url,
          `stale copy: the page's commitTimeStamp ${formatTimestamp(page.commitTicks)} is older than its index entry's ${formatTimestamp(entry.commitTicks)} after ${attempt + 1} fetches`,
        );
      }
    }
  }

  /**
   * A leaf's exact bytes and its validated document, checked against the page item that named it. `memory`: what
   * holds the body's bytes (the engine's leaf memory budget; see `GetOptions.memory`).
   */
  async getLeaf(item: PageItem, bounds: RequestBounds & { readonly memory?: BodyMemory } = {}): Promise<FetchedLeaf> {
    const response = await this.http.get(item.url, {
      maxBytes: this.limits.leafBytes,
      ...bounds,
    });
    return { body: response.body, leaf: await readLeaf(response.body, item.url, item), attempts: response.attempts };
  }

  private remember(index: CatalogIndex, headers: Record<string, string | string[] | undefined>): CatalogIndex {
    const etag = single(headers.etag);
    const lastModified = single(headers['last-modified']);
    this.cachedIndex = {
      index,
      ...(etag === undefined ? {} : { etag }),
      ...(lastModified === undefined ? {} : { lastModified }),
    };
    if (etag === undefined && lastModified === undefined) {
      // Without validators a cached copy can never be confirmed: do not keep it.
      const kept = this.cachedIndex;
      this.cachedIndex = undefined;
      return kept.index;
    }
    return index;
  }
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
