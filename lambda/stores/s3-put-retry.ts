/**
 * The lean S3 PUT's retries are the AWS SDK's own (issue 30, item 5): each request runs inside the SDK's retry
 * middleware (`retryMiddleware` of `@smithy/core/retry`, the code that retries every SDK command) with the SDK's
 * `StandardRetryStrategy`, so which answers are retried and at what cost to the retry token bucket, the backoff
 * (its bases, jitter and cap), `Retry-After` and the bucket's refill are the installed SDK's, and follow it when it
 * changes. What is ours is only the translation of an attempt's outcome into the error the SDK's S3 client would
 * have raised for it (its `name`, `$metadata` and `$response`): the S3 error code of the answer's body, its status
 * and headers, and undici's transport errors as the SDK's Node.js handler reports the same failures. And the
 * server's clock from a time refusal (the SDK's S3 client corrects its clock in its signing middleware, which the
 * lean PUT does not run): {@link skewCorrection}.
 */
import type { StandardRetryBackoffStrategy } from '@smithy/types';
import { SMITHY_CONTEXT_KEY } from '@smithy/types';
import {
  isClockSkewError,
  isThrottlingError,
  isTransientError,
  retryMiddleware,
  StandardRetryStrategy,
} from '@smithy/core/retry';

/** An S3 answer as the SDK's error would carry it. */
export interface AnswerFacts {
  readonly status: number;
  /** S3's error `Code`. */
  readonly code?: string;
  readonly message?: string;
  /** The answer's `retry-after` and `x-amz-retry-after` headers, when it had them. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** The error the SDK's S3 client raises for an answer: named by S3's Code (`NotFound` for a bare 404, else `Unknown`). */
export class SdkAnswerError extends Error {
  readonly $metadata: { httpStatusCode: number; clockSkewCorrected?: true };
  readonly $response: { statusCode: number; headers: Record<string, string> };

  constructor(
    readonly answer: AnswerFacts,
    /** The clock was corrected from this answer: the SDK retries such a refusal. */
    clockSkewCorrected = false,
  ) {
    super(answer.message ?? `HTTP ${answer.status}`);
    this.name = answer.code ?? (answer.status === 404 ? 'NotFound' : 'Unknown');
    this.$metadata = { httpStatusCode: answer.status, ...(clockSkewCorrected ? { clockSkewCorrected: true } : {}) };
    this.$response = { statusCode: answer.status, headers: { ...answer.headers } };
  }
}

/** undici's codes for a connection that was cut, which Node's http client (the SDK's handler) reports as ECONNRESET. */
const CUT_CODES = new Set(['UND_ERR_SOCKET', 'UND_ERR_CLOSED']);
/** undici's timeouts, which the SDK's handler reports as a `TimeoutError`. */
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/**
 * The error the SDK's Node.js handler raises for a transport failure (no answer): undici's timeouts become a
 * `TimeoutError` and a cut connection an `ECONNRESET`, as the SDK's handler names them; Node's own errors
 * (ECONNREFUSED, EPIPE, a DNS failure) pass as they are. `cause` is undici's error.
 */
export function sdkTransportError(error: unknown): Error {
  const code = (error as { code?: unknown } | undefined)?.code;
  const message = (error as Error | undefined)?.message ?? String(error);
  if (typeof code === 'string' && TIMEOUT_CODES.has(code))
    return Object.assign(new Error(message, { cause: error }), { name: 'TimeoutError' });
  if (typeof code === 'string' && CUT_CODES.has(code))
    return Object.assign(new Error(message, { cause: error }), { code: 'ECONNRESET' });
  return error instanceof Error ? error : new Error(message);
}

/** Whether the SDK's strategy would retry `error` at all (throttling or transient), whatever its bucket holds. */
export function isRetryable(error: Error): boolean {
  return isThrottlingError(error as never) || isTransientError(error as never);
}

/** Whether an answer is throttling as the SDK tells it (429, SlowDown, ...), or a 503 (which S3 means as SlowDown). */
export function isSlowDown(error: SdkAnswerError): boolean {
  return isThrottlingError(error as never) || error.answer.status === 503;
}

/** Whether S3's code is one the SDK reads as a refusal for time (RequestTimeTooSkewed, SignatureDoesNotMatch, ...). */
export function isTimeRefusal(code: string | undefined): boolean {
  return code !== undefined && isClockSkewError({ name: code } as never);
}

/** The SDK's standard retry strategy for `maxAttempts` attempts: one per client, its token bucket shared by its requests. */
export function sdkRetryStrategy(maxAttempts: number, backoff?: StandardRetryBackoffStrategy): StandardRetryStrategy {
  return new StandardRetryStrategy({ maxAttempts, ...(backoff === undefined ? {} : { backoff }) });
}

/**
 * Runs `attempt` (1, 2, ...) as the SDK's retry middleware runs a command's attempts, with `strategy`: an attempt
 * resolves with its result, or throws the SDK-shaped error of its failure ({@link SdkAnswerError},
 * {@link sdkTransportError}); the strategy decides whether and when to try again. `signal` ends the wait before a
 * retry as the SDK does (an `AbortError`). Resolves with the first success; rejects with the last failure, or the
 * abort.
 *
 * A first attempt that succeeds (nearly every PUT) only gives the strategy its success, as the middleware would,
 * without entering the middleware: its token is asked for after the attempt rather than before, which changes nothing
 * for the standard strategy (its first token is a new object, its bucket untouched); a first attempt that fails
 * enters the middleware, which sees that failure as its own first attempt's and goes on from there.
 */
export async function withSdkRetries<T>(
  strategy: StandardRetryStrategy,
  maxAttempts: number,
  signal: AbortSignal | undefined,
  attempt: (n: number) => Promise<T>,
): Promise<T> {
  let first: { error: unknown } | undefined;
  try {
    const value = await attempt(1);
    strategy.recordSuccess(await strategy.acquireInitialRetryToken(''));
    return value;
  } catch (error) {
    first = { error };
  }
  let n = 0;
  const handler = retryMiddleware({ maxAttempts: async () => maxAttempts, retryStrategy: async () => strategy })(
    async () => {
      n++;
      if (n === 1) throw first.error;
      return { response: undefined, output: { $metadata: {}, value: await attempt(n) } };
    },
    { [SMITHY_CONTEXT_KEY]: signal === undefined ? {} : { abortSignal: signal } },
  );
  const { output } = await handler({ input: {}, request: undefined });
  return (output as unknown as { value: T }).value;
}

/** Four minutes, the SDK's threshold: a request signed further than this from the server's clock was refused for time. */
const SKEW_THRESHOLD_MS = 240_000;
/** An answer that took longer than S3's 15-minute window says nothing reliable about the clocks (the SDK's rule). */
const STALE_ANSWER_MS = 900_000;

/** The times an answer to a clock-skew refusal carries, and when the refused request was signed and sent. */
export interface SkewEvidence {
  /** The answer's `Date` header. */
  readonly date: string | undefined;
  /** The `ServerTime` of a RequestTimeTooSkewed body. */
  readonly serverTime: string | undefined;
  /** Whether the answer had an `Age` header (a cache answered: its Date is not the server's now). */
  readonly aged: boolean;
  /** The date the refused request was signed with (local clock plus the offset in use then), ms. */
  readonly signedAt: number;
  /** The local clock when the request was sent and when the answer came, ms. */
  readonly sentLocal: number;
  readonly answeredLocal: number;
}

/**
 * The clock offset (server minus local, ms) to sign with from now on, when the refused request's own signing
 * date was off from the server's time by more than the SDK's threshold; undefined when it was not (so the
 * refusal was not about time) or the answer gives no usable time. Comparing the request's own signing date, not
 * the offset in use now, is what lets every PUT signed before a concurrent one corrected the clock retry too
 * (the SDK's `clockSkewCorrected` for a concurrent correction).
 */
export function skewCorrection(evidence: SkewEvidence): number | undefined {
  if (evidence.aged || evidence.answeredLocal - evidence.sentLocal > STALE_ANSWER_MS) return undefined;
  const server = Date.parse(evidence.serverTime ?? '') || Date.parse(evidence.date ?? '');
  if (!server) return undefined;
  return Math.abs(server - evidence.signedAt) > SKEW_THRESHOLD_MS ? server - evidence.answeredLocal : undefined;
}
