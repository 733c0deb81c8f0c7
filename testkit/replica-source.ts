/**
 * What a {@link CatalogReplica} serves: a source maps URL paths to documents. Two kinds exist, a
 * generated catalog and a directory of real fixture documents.
 */

/** One document as served (before any HTTP content coding). */
export interface ServedDocument {
  body: Buffer;
  contentType: string;
  /** For `Last-Modified` / `If-Modified-Since`; whole seconds. */
  lastModified?: Date;
}

/** Documents by URL path. */
export interface ReplicaSource {
  /** Path of the catalog index (what the service index points to). */
  readonly catalogIndexPath: string;
  /** The document at `path`, or undefined for a 404. */
  resolve(path: string): ServedDocument | undefined;
  /**
   * An older copy of the page at `path`: as it was `commitsBack` commits earlier.
   *
   * @throws when there is no such page or no such older copy.
   */
  stalePage(path: string, commitsBack: number): ServedDocument;
}
