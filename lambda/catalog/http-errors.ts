import { redactUrl } from '../contract/redact.js';
import { CatalogSyncError, ErrorCode } from '../contract/errors.js';

/**
 * Errors of the HTTP layer. Each names the URL and what went wrong, and says whether a retry may help.
 */

/** A fetch that failed: network error, bad status, body too large, or a URL not allowed. */
export class FetchError extends CatalogSyncError {
  override readonly name: string = 'FetchError';
  override get code(): ErrorCode {
    return ErrorCode.fetch;
  }
  /** The URL that was (or would have been) requested, with any credentials or query values hidden. */
  readonly url: string;

  constructor(
    url: string,
    /** What went wrong, in words. */
    readonly reason: string,
    /** Whether another attempt may succeed (network errors, 5xx, 429, truncated bodies). */
    readonly retryable: boolean,
    options?: { cause?: unknown; status?: number; attempts?: number; retryAfterMs?: number },
  ) {
    super(`${redactUrl(url)}: ${reason}`, options?.cause === undefined ? undefined : { cause: options.cause });
    this.url = redactUrl(url);
    this.status = options?.status;
    this.attempts = options?.attempts ?? 1;
    this.retryAfterMs = options?.retryAfterMs;
  }
  /** The HTTP status, when a response arrived. */
  readonly status: number | undefined;
  /** Attempts made before giving up. */
  attempts: number;
  /** The delay the server asked for with `Retry-After`, in milliseconds. */
  readonly retryAfterMs: number | undefined;
  /** For a DNS, connection or proxy error: what to check, naming the host and the proxy variable in use. */
  hint: string | undefined;

  /**
   * Marks the error as final: records the attempts made and the hint, and says both in the message
   * (`…: HTTP 500 (5 attempts)`, `…: ECONNREFUSED: … (5 attempts). Hint: could not connect to …`).
   */
  gaveUp(attempts: number, hint?: string): this {
    this.attempts = attempts;
    this.hint = hint;
    const base = `${this.url}: ${this.reason}`;
    this.message = `${base} (${attempts} attempt${attempts === 1 ? '' : 's'})${hint === undefined ? '' : `. Hint: ${hint}`}`;
    return this;
  }
}

/** A URL outside the catalog's origin and the explicitly allowed origins. Never retried, never requested. */
export class ForbiddenOriginError extends FetchError {
  override readonly name = 'ForbiddenOriginError';
  override get code(): ErrorCode {
    return ErrorCode.forbiddenOrigin;
  }
  constructor(url: string, allowed: readonly string[]) {
    super(
      url,
      `origin not allowed (allowed: ${allowed.join(', ') || 'none'}); set ALLOWED_ORIGINS / --allow-origin to permit it`,
      false,
    );
  }
}

/** A body larger than its bound, before or after decompression. Never retried. */
export class BodyTooLargeError extends FetchError {
  override readonly name = 'BodyTooLargeError';
  override get code(): ErrorCode {
    return ErrorCode.bodyTooLarge;
  }
  constructor(url: string, limitBytes: number, what: 'body' | 'decompressed body') {
    super(url, `${what} exceeds the limit of ${limitBytes} bytes`, false);
  }
}

/**
 * A leaf whose body, as declared or received (with its decoded copy), is more than the whole leaf memory budget
 * (the process's share for leaf bodies in flight: contract/leaf-memory.ts): it can never be held, so it fails
 * alone, like a bad leaf (quarantined when quarantine is on), and is never read to its end. Never retried.
 */
export class LeafMemoryError extends FetchError {
  override readonly name = 'LeafMemoryError';
  override get code(): ErrorCode {
    return ErrorCode.leafMemory;
  }
  constructor(
    url: string,
    /** What the body needs: its bytes, and its decoded copy's when it is compressed. */
    readonly bytes: number,
    /** The budget's bytes, and where they come from (the function's memory, `LEAF_MEMORY_MB`, ...). */
    readonly budget: { readonly bytes: number; readonly from: string },
    /** `bytes` is a lower bound: the decoded copy was cut off at the budget. */
    atLeast = false,
  ) {
    super(
      url,
      `body needs ${atLeast ? 'over ' : ''}${bytes} bytes, more than the leaf memory budget of ${budget.bytes} bytes (${budget.from}); give the process more memory or set LEAF_MEMORY_MB`,
      false,
    );
  }
}

/**
 * A body the leaf memory budget cannot hold now (other leaves hold it): the request was dropped before the body
 * was read on, and the caller fetches it again once `bytes` fit. A signal between the HTTP client and the engine,
 * never a failure: not a {@link FetchError}, never retried by the client.
 */
export class BodyDeferredError extends CatalogSyncError {
  override readonly name = 'BodyDeferredError';
  override get code(): ErrorCode {
    return ErrorCode.bodyDeferred;
  }
  readonly url: string;

  constructor(
    url: string,
    /** The bytes to hold before fetching it again. */
    readonly bytes: number,
  ) {
    super(`${redactUrl(url)}: body of ${bytes} bytes deferred until the leaf memory budget holds it`);
    this.url = redactUrl(url);
  }
}

/**
 * A request given up because its caller stopped it (the run's time budget ran out, or Ctrl-C): the response
 * was not complete, but nothing is known against the source. Deliberately not a {@link FetchError}, so it is
 * never mistaken for a failed fetch: an aborted leaf is not quarantined and does not fail the run.
 */
export class FetchAbortedError extends CatalogSyncError {
  override readonly name = 'FetchAbortedError';
  override get code(): ErrorCode {
    return ErrorCode.fetchAborted;
  }
  /** The URL that was being requested, with any credentials or query values hidden. */
  readonly url: string;

  constructor(
    url: string,
    /** When it was stopped, in words (e.g. "in flight", "before attempt 3"). */
    readonly when: string,
    options?: { cause?: unknown },
  ) {
    super(`${redactUrl(url)}: aborted ${when}: the run was stopped (time budget reached or interrupted)`, options);
    this.url = redactUrl(url);
  }
}
