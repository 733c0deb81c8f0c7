import { CatalogSyncError, ErrorCode } from '../contract/errors.js';

/** What a failed lean PUT knows: where it went, what S3 answered last (if it answered), how many attempts. */
export interface S3PutFailure {
  readonly bucket: string;
  readonly key: string;
  /** HTTP status of the last answer; absent when the last attempt got none (a reset, a timeout). */
  readonly status?: number;
  /** S3's error `Code` from the XML body (`SlowDown`, `AccessDenied`, ...), when there was one. */
  readonly s3Code?: string;
  /** S3's error `Message`, when there was one. */
  readonly s3Message?: string;
  /** Attempts made, the failed last one included. */
  readonly attempts: number;
  /** The answer was worth a retry, but the token bucket of the client's SDK retry strategy (s3-put-retry.ts) was spent. */
  readonly quotaSpent?: boolean;
  /** The request: `PUT` (a leaf or manifest) unless said; `GET` for a consumer's lean read. */
  readonly method?: 'PUT' | 'GET';
}

/**
 * A leaf or manifest PUT that S3 refused or that never got an answer, after the retries it was worth: names the
 * bucket and key, the status, S3's Code and Message and the attempts; `cause` is the transport error when there
 * was no answer.
 */
export class S3PutError extends CatalogSyncError {
  override readonly name: string = 'S3PutError';
  readonly bucket: string;
  readonly key: string;
  readonly status: number | undefined;
  readonly s3Code: string | undefined;
  readonly s3Message: string | undefined;
  readonly attempts: number;
  readonly quotaSpent: boolean;

  constructor(failure: S3PutFailure, options?: ErrorOptions) {
    const answer =
      failure.status === undefined
        ? `no answer (${(options?.cause as Error | undefined)?.message ?? 'connection failed'})`
        : `HTTP ${failure.status}${failure.s3Code ? ` ${failure.s3Code}` : ''}${failure.s3Message ? `: ${failure.s3Message}` : ''}`;
    const quota = failure.quotaSpent
      ? ' (not retried: the retry quota is spent, S3 has been refusing or throttling many PUTs)'
      : '';
    super(
      `S3 ${failure.method ?? 'PUT'} s3://${failure.bucket}/${failure.key} failed after ${failure.attempts} attempt${failure.attempts === 1 ? '' : 's'}: ${answer}${quota}`,
      options,
    );
    this.bucket = failure.bucket;
    this.key = failure.key;
    this.status = failure.status;
    this.s3Code = failure.s3Code;
    this.s3Message = failure.s3Message;
    this.attempts = failure.attempts;
    this.quotaSpent = failure.quotaSpent === true;
  }

  override get code(): ErrorCode {
    return ErrorCode.s3Put;
  }
}

/**
 * A PUT stopped by the run's abort signal (its time budget, Ctrl-C), in flight or in a wait before a retry: not a
 * failure of S3 nor of the object, so the run stops as at its budget (the commit stays incomplete, nothing is
 * quarantined). `cause` is the signal's reason.
 */
export class S3PutAbortedError extends CatalogSyncError {
  override readonly name: string = 'S3PutAbortedError';

  constructor(
    readonly bucket: string,
    readonly key: string,
    /** When it was stopped, in words ("in flight", "before attempt 3"). */
    readonly when: string,
    options?: ErrorOptions,
  ) {
    super(
      `S3 PUT s3://${bucket}/${key}: aborted ${when}: the run was stopped (time budget reached or interrupted)`,
      options,
    );
  }

  override get code(): ErrorCode {
    return ErrorCode.s3PutAborted;
  }
}
