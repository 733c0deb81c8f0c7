/**
 * The lean S3 PUT's retry rules, as the AWS SDK's `standard` retry mode has them: which answers and transport
 * errors are retried, how long to wait (exponential backoff with full jitter: a uniform delay between 0 and
 * `min(maxDelayMs, base × 2^(attempt-1))`, the base larger for throttling), and the server's clock from a
 * RequestTimeTooSkewed answer. The retry quota (the SDK's token bucket across requests) is s3-put-quota.ts; the
 * backfill's SlowDownGauge also lowers its own load on throttling.
 */

/** How the lean PUT waits between attempts. */
export interface PutRetryDelays {
  /** Base of the exponential backoff for errors other than throttling (the SDK's 100 ms). */
  readonly baseDelayMs: number;
  /** Base for throttling answers (SlowDown, 429, ...; the SDK's 500 ms). */
  readonly throttleBaseDelayMs: number;
  /** Cap of any one wait (the SDK's 20 s). */
  readonly maxDelayMs: number;
}

/** The SDK's own delays. */
export const SDK_RETRY_DELAYS: PutRetryDelays = { baseDelayMs: 100, throttleBaseDelayMs: 500, maxDelayMs: 20_000 };

/** S3 and AWS error codes that mean "slow down". */
const THROTTLING_CODES = new Set([
  'SlowDown',
  'Throttling',
  'ThrottlingException',
  'ThrottledException',
  'RequestThrottled',
  'RequestThrottledException',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'BandwidthLimitExceeded',
  'ProvisionedThroughputExceededException',
  'PriorRequestNotComplete',
]);
/** Codes of transient failures on S3's side. */
const TRANSIENT_CODES = new Set(['RequestTimeout', 'RequestTimeoutException', 'InternalError', 'ServiceUnavailable', 'TimeoutError']);
/** Codes that can mean "your clock is off": retried only when the server's Date shows it is. */
export const CLOCK_SKEW_CODES = new Set(['RequestTimeTooSkewed', 'RequestExpired', 'RequestInTheFuture', 'InvalidSignatureException', 'SignatureDoesNotMatch', 'AuthFailure']);
/** Statuses retried whatever the code. */
const TRANSIENT_STATUSES = new Set([500, 502, 503, 504]);
/** Transport errors retried: resets, refusals, broken pipes, timeouts (Node's and undici's codes). */
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);

/** Whether an S3 answer is throttling (so the backoff base is larger, and a backfill's gauge hears of it). */
export function isThrottling(status: number, code: string | undefined): boolean {
  return status === 429 || status === 503 || (code !== undefined && THROTTLING_CODES.has(code));
}

/** Whether an S3 error answer is worth another attempt (throttling, 5xx, S3's transient codes). 4xx otherwise are not. */
export function isRetryableAnswer(status: number, code: string | undefined): boolean {
  return isThrottling(status, code) || TRANSIENT_STATUSES.has(status) || (code !== undefined && TRANSIENT_CODES.has(code));
}

/** Whether a transport error (no answer) is worth another attempt. */
export function isRetryableTransportError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
  }
  return false;
}

/** The wait before attempt `attempt + 1` (attempt counts from 1): full jitter over the capped exponential. */
export function backoffDelay(attempt: number, throttled: boolean, delays: PutRetryDelays, random: () => number = Math.random): number {
  const base = throttled ? delays.throttleBaseDelayMs : delays.baseDelayMs;
  return Math.floor(random() * Math.min(delays.maxDelayMs, base * 2 ** (attempt - 1)));
}

/** Whether a transport error is a timeout (a retry after one costs the quota more, as in the SDK). */
export function isTimeoutError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (code === 'ETIMEDOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return true;
  }
  return false;
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
