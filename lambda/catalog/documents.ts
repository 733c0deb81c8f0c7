/**
 * The catalog documents as the rest of the code sees them once validated: service index, catalog
 * index, page, page item and leaf, the leaf types, the source kinds and what a raw body is. Types
 * only (and two constant maps); the parsers live in `json.ts`, `service-index.ts`, `index-schema.ts`,
 * `page-schema.ts` and `leaf-schema.ts`.
 */
import type { InvalidDocumentError } from './errors.js';
import type { Ticks } from '../contract/time.js';

/** The two leaf types. Each leaf and each page item has exactly one. */
export const LeafType = { details: 'PackageDetails', delete: 'PackageDelete' } as const;
/** `'PackageDetails'` or `'PackageDelete'`. */
export type LeafType = (typeof LeafType)[keyof typeof LeafType];

/** What a source URL points at, told by content (contract: `resources` vs `items`). */
export const SourceKind = { serviceIndex: 'service-index', catalogIndex: 'catalog-index' } as const;
/** `'service-index'` or `'catalog-index'`. */
export type SourceKind = (typeof SourceKind)[keyof typeof SourceKind];

/** A raw response body: bytes as served (after HTTP decompression) or already decoded text. */
export type DocumentBody = string | Uint8Array;

/** One entry of a service index's `resources`. */
export interface ServiceIndexResource {
  /** The resource's URL: absolute, http or https. */
  readonly '@id': string;
  /** The resource type, e.g. `Catalog/3.0.0`; some sources give several. */
  readonly '@type': string | string[];
}

/** A package source's service index (nuget.org: `https://api.nuget.org/v3/index.json`). */
export interface ServiceIndex {
  /** The service index schema version, e.g. `3.0.0`. */
  readonly version?: string;
  /** The resources the source offers. */
  readonly resources: ServiceIndexResource[];
}

/** One page as listed in the catalog index. */
export interface CatalogIndexEntry {
  /** The page URL (its `@id`): absolute, http or https. */
  readonly url: string;
  /** The id of the latest commit on the page. */
  readonly commitId: string;
  /** The timestamp of the latest commit on the page, as written. */
  readonly commitTimeStamp: string;
  /** {@link commitTimeStamp} as exact ticks. */
  readonly commitTicks: Ticks;
  /** The number of leaves on the page. */
  readonly count: number;
}

/** The catalog index: the list of pages. Entries are in document order, which is not defined. */
export interface CatalogIndex {
  /** The id of the latest commit. */
  readonly commitId: string;
  /** The timestamp of the latest commit, as written. */
  readonly commitTimeStamp: string;
  /** {@link commitTimeStamp} as exact ticks. */
  readonly commitTicks: Ticks;
  /** The number of pages, when the index says. */
  readonly count?: number;
  /** One entry per page. */
  readonly items: CatalogIndexEntry[];
}

/** One leaf as listed on a catalog page. */
export interface PageItem {
  /** The leaf URL (its `@id`): absolute, http or https. */
  readonly url: string;
  /** The leaf type, from `@type`. */
  readonly type: LeafType;
  /** The id of the commit that added the leaf. */
  readonly commitId: string;
  /** The commit timestamp, as written. */
  readonly commitTimeStamp: string;
  /** {@link commitTimeStamp} as exact ticks. */
  readonly commitTicks: Ticks;
  /** The package id (`nuget:id`), as written. */
  readonly id: string;
  /** The package version (`nuget:version`), as written. */
  readonly version: string;
  /**
   * Set when the item is past the bounds no store can go beyond (an id over 100 characters, a
   * version over 64, keys over 1,024 bytes): the error, naming the page and the item, that the
   * pipeline raises for this leaf alone, as for a bad leaf. The rest of the page stays valid.
   */
  readonly problem?: InvalidDocumentError;
}

/** A catalog page. Items are in document order, which is not defined. */
export interface CatalogPage {
  /** The id of the latest commit on the page. */
  readonly commitId: string;
  /** The timestamp of the latest commit on the page, as written. */
  readonly commitTimeStamp: string;
  /** {@link commitTimeStamp} as exact ticks. */
  readonly commitTicks: Ticks;
  /** The number of leaves, when the page says. */
  readonly count?: number;
  /** The index URL, when the page says. */
  readonly parent?: string;
  /** One item per leaf. */
  readonly items: PageItem[];
}

/** A validated catalog leaf. */
export interface Leaf {
  /** `@type` as an array (a single string becomes an array of one). */
  readonly types: string[];
  /** The one leaf type among {@link types}. */
  readonly type: LeafType;
  /** The package id, as the leaf writes it. */
  readonly id: string;
  /** The package version, as the leaf writes it. */
  readonly version: string;
  /** `catalog:commitId`. */
  readonly commitId: string;
  /** `catalog:commitTimeStamp`, as written. */
  readonly commitTimeStamp: string;
  /** `catalog:commitTimeStamp` as exact ticks. */
  readonly commitTicks: Ticks;
  /** The whole document, every property kept, known or not. */
  readonly document: Record<string, unknown>;
}

/** A source document, parsed as whichever kind its content shows. */
export type SourceDocument =
  | { readonly kind: typeof SourceKind.serviceIndex; readonly serviceIndex: ServiceIndex }
  | { readonly kind: typeof SourceKind.catalogIndex; readonly catalogIndex: CatalogIndex };
