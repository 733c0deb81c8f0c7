/**
 * The lean S3 PUT's retry rules, as the AWS SDK's `standard` retry mode has them: which answers and transport
 * errors are retried, how long to wait (exponential backoff with full jitter: a uniform delay between 0 and
 * `min(maxDelayMs, base × 2^(attempt-1))`, the base larger for throttling), and the server's clock from a
 * RequestTimeTooSkewed answer. The SDK's retry quota (a token bucket across requests) is not kept: the backfill's
 * SlowDownGauge is what lowers the load on throttling.
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

/** Five minutes: a server clock further than this from ours means our signatures are being refused for time. */
const SKEW_TOLERANCE_MS = 5 * 60_000;

/**
 * The new clock offset (server minus local, ms) when an answer shows our signing clock is off by more than the
 * SDK's tolerance; undefined when it is not (or the server gave no usable time). The server's time is its `Date`
 * header, else the `ServerTime` of a RequestTimeTooSkewed body.
 */
export function correctedClockOffset(dateHeader: string | undefined, serverTimeXml: string | undefined, localNow: number, offset: number): number | undefined {
  const server = Date.parse(serverTimeXml ?? '') || Date.parse(dateHeader ?? '');
  if (!server) return undefined;
  return Math.abs(server - (localNow + offset)) > SKEW_TOLERANCE_MS ? server - localNow : undefined;
}
