/**
 * One attempt of `HttpClient.stream`: a GET whose body is handed to the caller as it arrives (the private feed's
 * packages, up to hundreds of MB), bounded by a total timeout of its own, the body's silence timeout and the
 * caller's signal. The retries around it are the client's.
 */
import type { Dispatcher } from 'undici';
import { AttemptStop, discard, type SignalFanOut } from './http-attempt.js';
import { FetchAbortedError, FetchError } from './http-errors.js';
import type { RequestBounds } from './http-options.js';
import { describeNetworkError } from './network-hints.js';

/** Statuses another attempt may answer otherwise. */
export const RETRYABLE_STATUS = new Set([408, 429, 500, 502, 503, 504]);

/** Default total time of one streamed attempt: 250 MB at 1 MB/s, with room. */
export const DEFAULT_STREAM_TIMEOUT_MS = 15 * 60 * 1000;

/** Bounds of one streamed GET. */
export interface StreamOptions extends RequestBounds {
  /** Longest one attempt may take, from the request to the body's last byte (default {@link DEFAULT_STREAM_TIMEOUT_MS}). */
  readonly totalTimeoutMs?: number;
}

/** What the caller's `consume` threw of its own: thrown as it is, never retried (the client unwraps it). */
export class ConsumerFailure {
  constructor(readonly error: unknown) {}
}

/** One streamed attempt: see the module documentation. */
export async function streamAttempt<T>(
  agent: Dispatcher,
  fanOut: SignalFanOut,
  url: string,
  parsed: URL,
  options: StreamOptions,
  consume: (body: AsyncIterable<Uint8Array>) => Promise<T>,
  headers: Record<string, string>,
): Promise<T> {
  const stop = new AttemptStop();
  const timeoutMs = options.totalTimeoutMs ?? DEFAULT_STREAM_TIMEOUT_MS;
  const timer = setTimeout(() => stop.abort(new Error(`total timeout of ${timeoutMs} ms`)), timeoutMs);
  const callerSignal = options.signal;
  if (callerSignal !== undefined) fanOut.watch(callerSignal, stop);
  const fromBody = new WeakSet<object>();
  try {
    const response = await agent.request({
      origin: parsed.origin,
      path: `${parsed.pathname}${parsed.search}`,
      method: 'GET',
      signal: stop,
      headers,
    });
    const { statusCode, body } = response;
    if (statusCode < 200 || statusCode >= 300) {
      await body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      throw new FetchError(url, `HTTP ${statusCode}`, RETRYABLE_STATUS.has(statusCode), { status: statusCode });
    }
    const pieces = async function* (): AsyncGenerator<Uint8Array> {
      try {
        for await (const chunk of body) yield chunk as Uint8Array;
      } catch (cause) {
        const error = new FetchError(url, `the body was cut short: ${describeNetworkError(cause)}`, true, { cause });
        fromBody.add(error);
        throw error;
      }
    };
    try {
      return await consume(pieces());
    } catch (error) {
      // The body's own failures are the request's (retried); anything else is the consumer's.
      if (typeof error === 'object' && error !== null && fromBody.has(error)) throw error;
      throw new ConsumerFailure(error);
    } finally {
      if (!body.destroyed) discard(body);
    }
  } catch (error) {
    if (error instanceof ConsumerFailure) throw error;
    if (callerSignal?.aborted) throw new FetchAbortedError(url, 'in flight', { cause: error });
    if (stop.aborted)
      throw new FetchError(url, `total timeout of ${timeoutMs / 1000} s exceeded`, true, { cause: error });
    throw error;
  } finally {
    clearTimeout(timer);
    if (callerSignal !== undefined) fanOut.release(callerSignal, stop);
  }
}
