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
    super(url, `origin not allowed (allowed: ${allowed.join(', ') || 'none'}); set ALLOWED_ORIGINS / --allow-origin to permit it`, false);
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
