/**
 * What the HTTP client (`HttpClient`, http-client.ts) is given and gives: its options and their defaults (every
 * timeout explicit), how a caller bounds one GET (deadline, stop signal, body bound, memory), the response, and the
 * listeners that see each retry and each attempt.
 */
import { VERSION } from '../contract/version.js';
import type { BodyMemory } from './body-memory.js';
import type { BodyDeferredError, FetchAbortedError, FetchError, LeafMemoryError } from './http-errors.js';

/** How failed requests are retried. */
export interface RetryPolicy {
  /** Attempts in all, the first included. */
  readonly attempts: number;
  /** Base of the exponential backoff, in milliseconds (full jitter: a random wait in [0, base·2ⁿ]). */
  readonly baseDelayMs: number;
  /** Cap of one backoff wait. */
  readonly maxDelayMs: number;
  /** Cap of a `Retry-After` wait; a server asking for longer makes the fetch fail. */
  readonly maxRetryAfterMs: number;
}

/** Options of the `HttpClient`. Every timeout is explicit: a stalled server never stalls a run. */
export interface HttpClientOptions {
  /** Connections kept alive per origin. */
  readonly connections: number;
  readonly connectTimeoutMs: number;
  /** Time to the response headers. */
  readonly headersTimeoutMs: number;
  /** Longest silence while the body streams. */
  readonly bodyTimeoutMs: number;
  /**
   * Longest time one attempt may take in all, from sending the request to the last byte of the body: a server
   * that sends a byte now and then never trips {@link bodyTimeoutMs}, and this bounds it. Hitting it is a
   * retryable failure, like a 5xx.
   */
  readonly totalTimeoutMs: number;
  readonly retry: RetryPolicy;
  readonly userAgent: string;
  /**
   * Where `HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY` (and their lower-case forms) are read from; the process's
   * environment unless given (tests pass their own).
   */
  readonly proxyEnv?: Readonly<Record<string, string | undefined>>;
}

/**
 * Default {@link HttpClientOptions.totalTimeoutMs}: 30 s per attempt. nuget.org's index (a few MB) arrives in
 * well under a second from a Lambda, and a leaf in milliseconds. Chosen against the time budget: a leaf that
 * always times out costs at most 5 attempts × 30 s + backoff (under 4 s) ≈ 155 s, well inside the default
 * Lambda budget (300 s timeout less a 30 s margin = 270 s), so its failure is known, and quarantine can set it
 * aside, within one run.
 */
export const DEFAULT_TOTAL_TIMEOUT_MS = 30_000;

/** Defaults for a Lambda talking to a CDN: generous enough for a several-MB index, short enough to fail fast. */
export const DEFAULT_HTTP_OPTIONS: HttpClientOptions = {
  connections: 64,
  connectTimeoutMs: 10_000,
  headersTimeoutMs: 30_000,
  bodyTimeoutMs: 30_000,
  totalTimeoutMs: DEFAULT_TOTAL_TIMEOUT_MS,
  retry: { attempts: 5, baseDelayMs: 250, maxDelayMs: 10_000, maxRetryAfterMs: 60_000 },
  userAgent: `catalog-sync/${VERSION} (+https://www.npmjs.com/package/catalog-sync)`,
};

/** How a caller bounds its requests in time: the run's deadline and its stop signal. */
export interface RequestBounds {
  /** Epoch ms after which no retry is started (a wait that would end past it is not begun). */
  readonly deadline?: number;
  /**
   * Aborting it aborts the request in flight (the connection is closed) or the wait before a retry, with
   * {@link FetchAbortedError}. The engine fires it at the deadline and on Ctrl-C.
   */
  readonly signal?: AbortSignal;
}

/** One GET. */
export interface GetOptions extends RequestBounds {
  /** Bound of the body, compressed and decompressed alike. */
  readonly maxBytes: number;
  readonly headers?: Record<string, string>;
  /** Skip the origin rule: only for the source URL the user configured. */
  readonly anyOrigin?: boolean;
  /**
   * Memory held for the body (the engine's leaf memory budget): asked for as the body's size becomes known. A body
   * it cannot hold now ends the request with {@link BodyDeferredError} (not retried here), one it can never hold with
   * {@link LeafMemoryError}.
   */
  readonly memory?: BodyMemory;
}

/** A successful (2xx or 304) response with its decompressed body. */
export interface HttpResponse {
  readonly url: string;
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  /** The body as the source served it, after HTTP decompression. */
  readonly body: Buffer;
  /** Attempts it took. */
  readonly attempts: number;
}

/** Observes retries, for logs and fault accounting. The URL is redacted. */
export type RetryListener = (event: { url: string; attempt: number; delayMs: number; error: FetchError }) => void;

/** One attempt of a request, answered or failed: for `--verbose`. The URL is redacted. */
export interface RequestEvent {
  readonly method: 'GET';
  readonly url: string;
  readonly attempt: number;
  /** The HTTP status, when a response arrived. */
  readonly status?: number;
  /** Milliseconds from sending to the last byte (or to the failure). */
  readonly ms: number;
  /** What went wrong, when the attempt failed. */
  readonly error?: string;
  /** The variable naming the proxy the request went through, when one did. */
  readonly proxy?: string;
}

/** Observes every attempt. */
export type RequestListener = (event: RequestEvent) => void;
