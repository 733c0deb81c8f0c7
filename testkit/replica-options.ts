/**
 * The options and records of `CatalogReplica` (catalog-replica.ts): how it serves, how a body is overridden, and one request as
 * it arrived.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { GeneratedCatalog } from './catalog-generator.js';

/** How the server behaves, whatever it serves. */
export interface ReplicaServerOptions {
  /** Extra delay before every answer, in ms; default 0. See `CatalogReplica.latency`. */
  latencyMs?: number;
}

/** Options of `CatalogReplica.start`. */
export interface ReplicaOptions extends ReplicaServerOptions {
  /** The catalog to serve; default an empty one. */
  catalog?: GeneratedCatalog;
  /** Leaves per page; default 550, as nuget.org. */
  pageSize?: number;
  /** Fill pages exactly, splitting commits across pages; default false (a commit is never split). */
  splitCommits?: boolean;
  /**
   * Origin written into pages' leaf URLs (e.g. `http://localhost:PORT`, another origin for the same
   * server), to test that a client follows only URLs of the catalog's origin. Default: `origin`.
   */
  leafOrigin?: string;
  /**
   * The origin every document names instead of the replica's own (e.g. `https://127.0.0.1:PORT` of a TLS front
   * before it, testkit/tls-front.ts): clients then reach every document through that origin. Default: `origin`.
   */
  publicOrigin?: string;
}

/** Options of `CatalogReplica.overrideBody`. */
export interface OverrideOptions {
  /** Default `application/json`. */
  contentType?: string;
  /** How many matching requests get the override; default Infinity (a broken document stays broken). */
  times?: number;
  /** Extra response headers. With `Content-Encoding` set, the body is sent exactly as given. */
  headers?: OutgoingHttpHeaders;
  /** Default 200. */
  status?: number;
}

/** One request as received. */
export interface LoggedRequest {
  method: string;
  /** The URL path, without query. */
  path: string;
  headers: IncomingHttpHeaders;
}

/** Leaves per page unless told: 550, as nuget.org. */
export const DEFAULT_PAGE_SIZE = 550;
