/**
 * The per-request pieces of the HTTP client that sit on every leaf's path, made cheap: how one attempt is
 * stopped (its total timeout or the caller's signal) and how its body is read to the end under a bound.
 */
import { EventEmitter } from 'node:events';
import type { Dispatcher } from 'undici';
import { BodyTooLargeError, FetchError } from './http-errors.js';
import { describeNetworkError } from './network-hints.js';

/**
 * One attempt's stop, as undici listens to it (its `signal` option takes an EventEmitter as well as an
 * AbortSignal): an AbortController and its EventTarget cost several times as much to make and to listen to,
 * once per leaf. `reason` is what the aborted request fails with, as with an AbortSignal.
 */
export class AttemptStop extends EventEmitter {
  aborted = false;
  reason: unknown;

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
  }
}

/**
 * The attempts in flight under each caller signal (the run's), so a signal gets one listener for the life of the
 * client rather than one added and removed per request.
 */
export class SignalFanOut {
  private readonly attempts = new WeakMap<AbortSignal, Set<AttemptStop>>();

  /** Stops `stop` when `signal` aborts, until {@link release}. */
  watch(signal: AbortSignal, stop: AttemptStop): void {
    let stops = this.attempts.get(signal);
    if (stops === undefined) {
      const set = new Set<AttemptStop>();
      stops = set;
      this.attempts.set(signal, set);
      signal.addEventListener(
        'abort',
        () => {
          for (const each of set) each.abort(signal.reason);
        },
        { once: true },
      );
    }
    stops.add(stop);
  }

  /** Ends {@link watch} of `stop`. */
  release(signal: AbortSignal, stop: AttemptStop): void {
    this.attempts.get(signal)?.delete(stop);
  }
}

/**
 * Drops a body without reading it. Destroying an undici body emits an `AbortError` on it; with no listener
 * that would be an uncaught exception, so one is attached first.
 */
export function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => undefined);
  body.destroy();
}

/**
 * Reads `body` to the end, at most `maxBytes` of it: with `data` listeners rather than an async iterator, which
 * costs a promise and several listeners per chunk.
 *
 * @throws {@link BodyTooLargeError} past `maxBytes`; {@link FetchError} (retryable) when the body is cut short; what
 *   `onReceived` throws.
 */
export function readBody(
  body: Dispatcher.ResponseData['body'],
  url: string,
  maxBytes: number,
  /** Told the bytes received after each chunk (a body of undeclared length held as it comes); may throw to stop. */
  onReceived?: (received: number) => void,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const fail = (error: Error): void => {
      if (settled) return;
      settled = true;
      reject(error);
    };
    const interrupted = (cause: unknown): FetchError =>
      new FetchError(url, `body interrupted after ${received} bytes: ${describeNetworkError(cause)}`, true, { cause });
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > maxBytes) {
        body.off('data', onData);
        fail(new BodyTooLargeError(url, maxBytes, 'body'));
        discard(body);
        return;
      }
      if (onReceived !== undefined) {
        try {
          onReceived(received);
        } catch (error) {
          body.off('data', onData);
          fail(error as Error);
          discard(body);
          return;
        }
      }
      chunks.push(chunk);
    };
    body.on('data', onData);
    body.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(Buffer.concat(chunks, received));
    });
    body.on('error', (error: Error) => fail(interrupted(error)));
    // Destroyed without an error (or before its end): cut short all the same.
    body.on('close', () => {
      if (!settled)
        fail(interrupted(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' })));
    });
  });
}
