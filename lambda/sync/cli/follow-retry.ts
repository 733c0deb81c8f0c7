import { CatalogSyncError, ErrorCode, SettingsError } from '../../contract/index.js';

/**
 * Codes of failures that a later slice can get past on its own: the source or the store did not answer, answered
 * with an error status, or was cut off. Everything else (a bad setting, a bad document without quarantine, a
 * forbidden origin, a file name or local state problem) fails the same way again until someone acts.
 */
const PASSING: ReadonlySet<string> = new Set([
  ErrorCode.fetch,
  ErrorCode.fetchAborted,
  ErrorCode.s3Put,
  ErrorCode.sync,
]);

/** HTTP statuses of a fetch that mean "you are not allowed" or "it is not there": no retry fixes them. */
const LASTING_STATUS: ReadonlySet<number> = new Set([400, 401, 403, 404, 410]);

/** SDK errors no retry fixes: a missing table or bucket, refused credentials, a malformed request. */
const LASTING_SDK = new Set([
  'ResourceNotFoundException',
  'AccessDeniedException',
  'AccessDenied',
  'NoSuchBucket',
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'ValidationException',
  'ExpiredToken',
  'ExpiredTokenException',
]);

/**
 * True when `run --follow` should try the next slice after a slice failed with `error` (the cause of the SyncError):
 * network and server failures, throttling and time-outs pass; settings, documents and permissions do not
 * (an unreachable AWS endpoint passes once `setupProven`: a slice has worked before).
 */
export function followCanRetry(error: unknown, { setupProven = false }: { setupProven?: boolean } = {}): boolean {
  // An AWS endpoint that could not be reached is a set-up error on the first slice; once a slice has worked
  // with the same settings, it is an outage (a DNS blip, a restarting emulator) like any other.
  if (error instanceof SettingsError) return setupProven && isUnreachable(error.cause);
  if (error instanceof CatalogSyncError) {
    if (!PASSING.has(error.code)) return false;
    // A fetch that said no more attempt would help (a 4xx, a body too large) has its own verdict.
    if ((error as { retryable?: unknown }).retryable === false) return false;
    const status = (error as { status?: unknown }).status;
    if (typeof status === 'number' && LASTING_STATUS.has(status)) return false;
    // A store error wrapped by a catalog-sync one: judge the store's own error.
    return error.cause === undefined || error.cause === error ? true : followCanRetry(error.cause);
  }
  if (error instanceof Error) return !LASTING_SDK.has(error.name);
  return true;
}

/** Network failures that the AWS set-up errors wrap (aws-setup-error.ts). */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function isUnreachable(error: unknown): boolean {
  const code =
    (error as NodeJS.ErrnoException | undefined)?.code ??
    ((error as Error | undefined)?.cause as NodeJS.ErrnoException | undefined)?.code;
  return code !== undefined && UNREACHABLE.has(code);
}

/**
 * The waits between failed slices of one outage: `first`, doubling, at most `most`; {@link reset} when a slice
 * succeeds. Jitter of up to a quarter keeps followers of one source from retrying in step.
 */
export class FollowBackoff {
  private failures = 0;
  private since: number | undefined;

  constructor(
    private readonly firstMs: number,
    private readonly mostMs: number,
    private readonly random: () => number = Math.random,
  ) {}

  /** Counts a failed slice; returns the wait before the next one. */
  failed(now = Date.now()): number {
    this.since ??= now;
    const wait = Math.min(this.mostMs, this.firstMs * 2 ** Math.min(this.failures, 30));
    this.failures += 1;
    return Math.round(wait * (1 - this.random() * 0.25));
  }

  /** Failed slices in the current outage (0 when there is none). */
  get outageFailures(): number {
    return this.failures;
  }

  /** Milliseconds since the outage began. */
  outageMs(now = Date.now()): number {
    return this.since === undefined ? 0 : now - this.since;
  }

  /** A slice succeeded: the outage is over. */
  reset(): void {
    this.failures = 0;
    this.since = undefined;
  }
}
