import { setTimeout as wait } from 'node:timers/promises';
import { Agent, EnvHttpProxyAgent, type Dispatcher } from '../contract/undici-lean.js';
import { holdBody } from './body-memory.js';
import {
  BodyDeferredError,
  BodyTooLargeError,
  FetchAbortedError,
  FetchError,
  ForbiddenOriginError,
} from './http-errors.js';
import { decode, parseRetryAfter } from './http-decode.js';
import { AttemptStop, discard, readBody, SignalFanOut } from './http-attempt.js';
import { ConsumerFailure, RETRYABLE_STATUS, streamAttempt, type StreamOptions } from './http-stream.js';
import { describeNetworkError, networkHint } from './network-hints.js';

export { parseRetryAfter };
import { anyProxy, proxyFor, readProxyEnv, type ProxyEnv } from '../contract/proxy-env.js';
import { redactUrl } from '../contract/redact.js';
import { untrustedCertificateCode } from '../contract/tls-trust.js';
import {
  DEFAULT_HTTP_OPTIONS,
  type GetOptions,
  type HttpClientOptions,
  type HttpResponse,
  type RequestBounds,
  type RequestListener,
  type RetryListener,
} from './http-options.js';

/**
 * The only way catalog-sync reads the network: GET with a keep-alive pool, explicit timeouts, gzip/br/deflate
 * decompression with a bound on the output (a gzip bomb stops at the limit), retries with exponential backoff
 * and full jitter that honour `Retry-After`, and an origin allow-list checked before any request.
 */
export class HttpClient {
  private readonly agent: Dispatcher;
  private readonly allowed = new Set<string>();
  /** `Authorization` values by origin, from URLs given with credentials. */
  private readonly credentials = new Map<string, string>();
  private readonly options: HttpClientOptions;
  /** The proxy variables in effect, read once: the agent and the error hints use the same. */
  readonly proxies: ProxyEnv;
  /** Called on every retry. */
  onRetry: RetryListener | undefined;
  /** Called after every attempt. */
  onRequest: RequestListener | undefined;
  /** Stops the attempts in flight when a caller's signal aborts. */
  private readonly fanOut = new SignalFanOut();

  constructor(options: Partial<HttpClientOptions> = {}) {
    this.options = { ...DEFAULT_HTTP_OPTIONS, ...options, retry: { ...DEFAULT_HTTP_OPTIONS.retry, ...options.retry } };
    this.proxies = readProxyEnv(options.proxyEnv ?? process.env);
    // The same pool and timeouts direct and through a proxy; the variables are passed explicitly ('' for none)
    // so undici does not read the environment a second time. With no proxy at all, a plain Agent: the proxy
    // agent would send every request to that same Agent anyway, after parsing its URL and the NO_PROXY rules.
    const pool = {
      connections: this.options.connections,
      connectTimeout: this.options.connectTimeoutMs,
      headersTimeout: this.options.headersTimeoutMs,
      bodyTimeout: this.options.bodyTimeoutMs,
      keepAliveTimeout: 30_000,
      pipelining: 1,
    };
    this.agent = !anyProxy(this.proxies)
      ? new Agent(pool)
      : new EnvHttpProxyAgent({
          ...pool,
          httpProxy: this.proxies.http?.url ?? '',
          httpsProxy: this.proxies.https?.url ?? '',
          noProxy: this.proxies.noProxy,
        });
  }

  /** Permits requests to `origin` (scheme, host and port, e.g. `https://api.nuget.org`). */
  allowOrigin(origin: string): void {
    this.allowed.add(new URL(origin).origin);
  }

  /**
   * Sends the user and password of `url` (`https://user:password@host/…`), as HTTP Basic
   * authentication, with every request to that URL's origin and to no other: a catalog's documents
   * name their URLs without credentials, and a document must not be able to send them elsewhere.
   */
  useCredentialsOf(url: string): void {
    const parsed = new URL(url);
    if (!parsed.username && !parsed.password) return;
    const pair = `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`;
    this.credentials.set(parsed.origin, `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`);
  }

  /** The origins requests may go to. */
  allowedOrigins(): string[] {
    return [...this.allowed];
  }

  /** Throws {@link ForbiddenOriginError} unless `url` is on an allowed origin. */
  checkOrigin(url: string): void {
    this.parseAllowed(url);
  }

  /** {@link checkOrigin}, giving the parsed URL so the request does not parse it again. */
  private parseAllowed(url: string): URL {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch (cause) {
      throw new FetchError(url, 'not a valid URL', false, { cause });
    }
    if (!this.allowed.has(parsed.origin)) throw new ForbiddenOriginError(url, this.allowedOrigins());
    return parsed;
  }

  /**
   * GETs `url`, retrying what may succeed on another attempt.
   *
   * @throws {@link FetchError} when it failed for good; {@link FetchAbortedError} when `options.signal` stopped it.
   */
  async get(url: string, options: GetOptions): Promise<HttpResponse> {
    const parsed = options.anyOrigin ? undefined : this.parseAllowed(url);
    const { value, attempts } = await this.retrying(url, options, (attempt) =>
      this.attempt(url, parsed, options, attempt),
    );
    return { ...value, attempts };
  }

  /**
   * GETs `url` and hands its body to `consume` as it arrives (a package of hundreds of MB, never held whole), with
   * the origin rule, credentials, timeouts and retries of {@link get}: a failure before the body, or of the body
   * while `consume` reads it (a reset, a stall), is retried as a new request and a new call of `consume`, which must
   * therefore start its work afresh each time. What `consume` throws of its own is thrown as it is, not retried.
   *
   * @throws {@link FetchError} when the request failed for good (its `status` says which answer: a 404 is not
   *   retried); {@link FetchAbortedError} when `options.signal` stopped it.
   */
  async stream<T>(
    url: string,
    options: StreamOptions,
    consume: (body: AsyncIterable<Uint8Array>) => Promise<T>,
  ): Promise<T> {
    const parsed = this.parseAllowed(url);
    return (
      await this.retrying(url, options, () =>
        streamAttempt(this.agent, this.fanOut, url, parsed, options, consume, this.headersFor(parsed)),
      )
    ).value;
  }

  /** The request headers of a stream: the user agent and the origin's credentials; no compression (packages are zips). */
  private headersFor(parsed: URL): Record<string, string> {
    const authorization = this.credentials.get(parsed.origin);
    return {
      accept: '*/*',
      'accept-encoding': 'identity',
      'user-agent': this.options.userAgent,
      ...(authorization === undefined ? {} : { authorization }),
    };
  }

  /** Runs `once` until it succeeds or fails for good, with backoff and full jitter between attempts. */
  private async retrying<R>(
    url: string,
    options: RequestBounds,
    once: (attempt: number) => Promise<R>,
  ): Promise<{ value: R; attempts: number }> {
    const { retry } = this.options;
    for (let attempt = 1; ; attempt++) {
      if (options.signal?.aborted)
        throw new FetchAbortedError(url, `before attempt ${attempt}`, { cause: options.signal.reason });
      try {
        return { value: await once(attempt), attempts: attempt };
      } catch (error) {
        if (error instanceof ConsumerFailure) throw error.error;
        if (error instanceof FetchAbortedError || error instanceof BodyDeferredError) throw error;
        const failure =
          // A certificate the client does not trust is refused the same way on every attempt: fail at once, with the hint.
          error instanceof FetchError
            ? error
            : new FetchError(url, describeNetworkError(error), untrustedCertificateCode(error) === undefined, {
                cause: error,
              });
        failure.attempts = attempt;
        const hint = (): string | undefined => networkHint(failure.cause, url, proxyFor(this.proxies, url));
        if (!failure.retryable || attempt >= retry.attempts) throw failure.gaveUp(attempt, hint());
        const backoff = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** (attempt - 1)) * Math.random();
        if (failure.retryAfterMs !== undefined && failure.retryAfterMs > retry.maxRetryAfterMs) {
          const reason = `${failure.reason}; Retry-After of ${failure.retryAfterMs} ms exceeds the cap of ${retry.maxRetryAfterMs} ms`;
          throw new FetchError(url, reason, false, { cause: failure, status: failure.status }).gaveUp(attempt);
        }
        const delayMs = Math.max(backoff, failure.retryAfterMs ?? 0);
        if (options.deadline !== undefined && Date.now() + delayMs >= options.deadline) {
          const reason = `${failure.reason} (no time left in the run for another attempt)`;
          throw new FetchError(url, reason, false, { cause: failure, status: failure.status }).gaveUp(attempt, hint());
        }
        this.onRetry?.({ url, attempt, delayMs, error: failure });
        try {
          await wait(delayMs, undefined, options.signal === undefined ? {} : { signal: options.signal });
        } catch (cause) {
          throw new FetchAbortedError(url, `while waiting to retry (after: ${failure.reason})`, { cause });
        }
      }
    }
  }

  /**
   * One attempt, bounded by the total timeout and by the caller's signal: either aborts the request, which
   * closes its connection.
   */
  private async attempt(
    url: string,
    parsed: URL | undefined,
    options: GetOptions,
    attempt: number,
  ): Promise<Omit<HttpResponse, 'attempts'>> {
    if (this.onRequest === undefined) return this.bounded(url, parsed, options);
    const started = performance.now();
    const proxy = proxyFor(this.proxies, url)?.variable;
    const event = { method: 'GET' as const, url: redactUrl(url), attempt, ...(proxy === undefined ? {} : { proxy }) };
    try {
      const response = await this.bounded(url, parsed, options);
      this.onRequest({ ...event, status: response.status, ms: Math.round(performance.now() - started) });
      return response;
    } catch (error) {
      const status = error instanceof FetchError ? error.status : undefined;
      const reason =
        error instanceof FetchError
          ? error.reason
          : error instanceof FetchAbortedError
            ? 'aborted'
            : describeNetworkError(error);
      this.onRequest({
        ...event,
        ...(status === undefined ? {} : { status }),
        ms: Math.round(performance.now() - started),
        error: reason,
      });
      throw error;
    }
  }

  /** One attempt, bounded in time. */
  private async bounded(
    url: string,
    parsed: URL | undefined,
    options: GetOptions,
  ): Promise<Omit<HttpResponse, 'attempts'>> {
    const stop = new AttemptStop();
    const timeoutMs = this.options.totalTimeoutMs;
    const timer = setTimeout(() => stop.abort(new Error(`total timeout of ${timeoutMs} ms`)), timeoutMs);
    const callerSignal = options.signal;
    if (callerSignal !== undefined) this.fanOut.watch(callerSignal, stop);
    try {
      return await this.exchange(url, parsed ?? new URL(url), options, stop);
    } catch (error) {
      // The caller's stop comes first: a request cut by it is aborted, whatever error the cut surfaced as.
      if (callerSignal?.aborted) throw new FetchAbortedError(url, 'in flight', { cause: error });
      if (stop.aborted) {
        throw new FetchError(url, `total timeout of ${timeoutMs / 1000} s exceeded (response headers and body)`, true, {
          cause: error,
        });
      }
      throw error;
    } finally {
      clearTimeout(timer);
      if (callerSignal !== undefined) this.fanOut.release(callerSignal, stop);
    }
  }

  private async exchange(
    url: string,
    parsed: URL,
    options: GetOptions,
    signal: AttemptStop,
  ): Promise<Omit<HttpResponse, 'attempts'>> {
    const origin = parsed.origin;
    const authorization = this.credentials.get(origin);
    const response = await this.agent.request({
      origin,
      path: `${parsed.pathname}${parsed.search}`,
      method: 'GET',
      signal,
      headers: {
        accept: 'application/json',
        'accept-encoding': 'gzip, br, deflate',
        'user-agent': this.options.userAgent,
        ...(authorization === undefined ? {} : { authorization }),
        ...options.headers,
      },
    });
    const { statusCode, headers } = response;
    if (statusCode === 304) {
      await response.body.dump();
      return { url, status: statusCode, headers, body: Buffer.alloc(0) };
    }
    if (statusCode < 200 || statusCode >= 300) {
      await response.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      const retryAfterMs = parseRetryAfter(headers['retry-after']);
      const location =
        statusCode >= 300 && statusCode < 400
          ? ` to ${redirectTarget(url, headers.location)} (redirects are not followed)`
          : '';
      throw new FetchError(url, `HTTP ${statusCode}${location}`, RETRYABLE_STATUS.has(statusCode), {
        status: statusCode,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      });
    }
    const declared = Number(headers['content-length']);
    if (Number.isFinite(declared) && declared > options.maxBytes) {
      discard(response.body);
      throw new BodyTooLargeError(url, options.maxBytes, 'body');
    }
    const { memory } = options;
    if (memory !== undefined && Number.isFinite(declared)) {
      try {
        holdBody(memory, url, declared);
      } catch (error) {
        discard(response.body);
        throw error;
      }
    }
    // Without a declared length, the bytes are held as they come.
    const onReceived =
      memory === undefined || Number.isFinite(declared)
        ? undefined
        : (received: number) => holdBody(memory, url, received);
    const raw = await readBody(response.body, url, options.maxBytes, onReceived);
    const body = await decode(url, raw, String(headers['content-encoding'] ?? 'identity'), options.maxBytes, memory);
    return { url, status: statusCode, headers, body };
  }

  /** Closes the pool. */
  async close(): Promise<void> {
    await this.agent.close();
  }
}

/**
 * A redirect's `Location`, resolved against the request URL and redacted: a redirect to a signed URL (a CDN's
 * `?X-Amz-Signature=…`) or one with user info must not put its secrets in an error message or a log.
 */
function redirectTarget(url: string, location: string | string[] | undefined): string {
  const text = Array.isArray(location) ? location[0] : location;
  if (text === undefined) return 'no Location';
  let absolute: string;
  try {
    absolute = new URL(text, url).href;
  } catch {
    absolute = text;
  }
  return redactUrl(absolute);
}
