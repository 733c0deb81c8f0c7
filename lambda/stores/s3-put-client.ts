/**
 * The lean S3 PUT for leaves and manifests (issue 14): the AWS SDK's PutObject cost 43% of the engine's busy CPU
 * (middleware stack, per-request allocations, its HTTP handler). This sends the same request itself, keeping what
 * the SDK did for us:
 * - signing: the SDK's `SignatureV4`, with the S3 client's own credential provider (asked per request, so the
 *   default chain's cache and refresh of expiring Lambda, container or web-identity credentials apply) and sha256
 *   (s3-put-signer.ts), scoped to the region and service the endpoint names;
 * - endpoint and addressing: the S3 client's own endpoint resolution for PutObject, once per bucket
 *   (s3-put-endpoint.ts): every partition, FIPS, dual-stack, accelerate, access points, `AWS_ENDPOINT_URL_S3`,
 *   path style. What it cannot sign (multi-region access points, S3 Express) goes through the SDK's PutObject
 *   (s3-put-sdk-only.ts);
 * - retries are the SDK's own (s3-put-retry.ts): each request runs inside the SDK's retry middleware with the SDK's
 *   `StandardRetryStrategy` (which answers are retried, the token bucket and its costs, backoff, `Retry-After`), up to
 *   the client's `maxAttempts`, with clock-skew correction (a PUT signed before a concurrent one corrected
 *   the clock is retried too); every throttling answer (503, SlowDown) is told to `onSlowDown` (the backfill's
 *   gauge), every error answer to the caller's `onAnswer` (the engine's hedge) and every retry to its `onRetry`
 *   (the run's count and log);
 * - aborts: the caller's signal (the run's budget, Ctrl-C) ends the request in flight or the wait before a retry,
 *   with {@link S3PutAbortedError};
 * - integrity: `x-amz-content-sha256` is the body's real SHA-256, signed (S3 recomputes it and refuses a body that
 *   differs); and, when the client computes checksums (its default `requestChecksumCalculation: WHEN_SUPPORTED`),
 *   `x-amz-checksum-crc32` with `x-amz-sdk-checksum-algorithm: CRC32` as the SDK sends them for PutObject, so S3
 *   stores the same checksum. CRC32 is zlib's native one (a few µs per leaf); Content-MD5 is not sent (the SDK
 *   does not send it either: an MD5 would add a second full hash per body and S3 stores nothing of it);
 * - the request: `content-type`, `content-length` and `x-amz-meta-*` (names lower-cased, values as given), as the
 *   SDK serializes PutObject; nothing else is stored on the object. `User-Agent: catalog-sync/{version}` names us
 *   in CloudTrail and S3 access logs.
 * The consumer's reads use the same client ({@link S3PutClient.get}): a lean GET, signed, retried and aborted as a
 * PUT is (the SDK's GetObject cost over a millisecond of CPU a manifest). The latest view's and the feed's
 * compare-and-swap too (issue 33): {@link S3PutClient.read} gives the ETag with the bytes, and
 * {@link S3PutClient.putIf} sends `If-Match` / `If-None-Match: *` and answers false when S3 refuses the condition.
 * It sends over one undici `Agent` (keep-alive, `connections` per origin, 10 s connect and 60 s headers/body
 * timeouts, as aws-clients.ts's SDK handler), through the proxy the variables name (undici-agent.ts); one attempt, signed,
 * sent and its answer read, is s3-put-attempt.ts.
 */
import { type Dispatcher, leanDispatcher } from './undici-agent.js';
import { readProxyEnv, type ProxyEnv } from '../contract/index.js';
import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { S3Client } from '@aws-sdk/client-s3';
import type { StandardRetryStrategy } from '@smithy/core/retry';
import type { StandardRetryBackoffStrategy } from '@smithy/types';
import { encodeKey, putTargetOf, resolvePutEndpoint, type PutTarget, type SdkOnly } from './s3-put-endpoint.js';
import type { S3PutAbortedError, S3PutError } from './s3-put-error.js';
import {
  aborted,
  type Answer,
  type Attempt,
  failure,
  isConditionRefusal,
  type PutCondition,
  type PutRequest,
  type RequestTarget,
  type TaggedObject,
  sendAttempt,
  transportCode,
} from './s3-put-attempt.js';
import { getWithSdk, putWithSdk } from './s3-put-sdk-only.js';
import {
  isRetryable,
  isSlowDown,
  isTimeRefusal,
  SdkAnswerError,
  sdkRetryStrategy,
  sdkTransportError,
  skewCorrection,
  withSdkRetries,
} from './s3-put-retry.js';
import { S3PutSigner } from './s3-put-signer.js';
import type { WriteOptions } from './types.js';

/** How a lean PUT client behaves beyond what it reads from the S3 client. */
export interface S3PutOptions {
  /** Connections per origin: the PUTs the engine has in flight (its concurrency) plus a few for manifests. */
  readonly connections: number;
  /** Attempts per PUT; default the S3 client's `maxAttempts` (5 for the follower, 10 for a backfill). */
  readonly maxAttempts?: number;
  /** Told of every throttling answer (503 or SlowDown), each retried attempt included. */
  readonly onSlowDown?: () => void;
  /** The SDK retry strategy's backoff; default the SDK's own (tests shorten it). */
  readonly backoff?: StandardRetryBackoffStrategy;
  /** Longest wait for an answer's headers, and longest silence in its body, ms; default 60 s (tests shorten it). */
  readonly answerTimeoutMs?: number;
  /** The local clock (ms), for signing dates; tests set it off to see the skew correction. */
  readonly now?: () => number;
  /** The proxy variables (contract/proxy-env.ts); default those of the process. */
  readonly proxies?: ProxyEnv;
}

export type { PutCondition, PutRequest, TaggedObject } from './s3-put-attempt.js';

/** What one PUT listens to: the run's stop (ends it with {@link S3PutAbortedError}), and its retries. */
export type PutCallOptions = WriteOptions;

/** What the client reads once from the S3 client's resolved config. */
interface Resolved {
  readonly crc32: boolean;
  readonly maxAttempts: number;
  readonly region: string;
  /** The SDK's retry strategy of this client: its token bucket is shared by every PUT and GET of the client. */
  readonly strategy: StandardRetryStrategy;
}

/** SHA-256 of an empty body: the signed payload hash of a GET. */
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/** Lean PUTs for one S3 client (see the module). */
export class S3PutClient {
  private readonly agent: Dispatcher;
  private readonly signer: S3PutSigner;
  private resolved: Promise<Resolved> | undefined;
  private readonly targets = new Map<string, Promise<PutTarget | SdkOnly>>();

  constructor(
    private readonly client: S3Client,
    private readonly options: S3PutOptions,
  ) {
    this.agent = leanDispatcher(
      {
        connections: Math.max(1, options.connections),
        pipelining: 1,
        keepAliveTimeout: 10_000,
        connect: { timeout: 10_000 },
        headersTimeout: options.answerTimeoutMs ?? 60_000,
        bodyTimeout: options.answerTimeoutMs ?? 60_000,
      },
      options.proxies ?? readProxyEnv(process.env),
    );
    const config = client.config;
    this.signer = new S3PutSigner({
      credentials: () => config.credentials(),
      region: () => config.region(),
      sha256: config.sha256,
    });
  }

  /**
   * The server-minus-local clock offset in use, in ms: the S3 client's own `systemClockOffset`, so what the SDK
   * learnt from its answers signs the lean PUTs too, and what a RequestTimeTooSkewed here teaches, the SDK's.
   */
  get clockOffsetMs(): number {
    return this.client.config.systemClockOffset ?? 0;
  }

  /** Retry tokens left in the token bucket of this client's SDK retry strategy (full before its first request). */
  async retryTokens(): Promise<number> {
    return (await (this.resolved ??= this.resolve())).strategy.getCapacity();
  }

  /**
   * PUTs `request.body` at `request.key`, retrying as the SDK would; throws {@link S3PutError} when it fails, and
   * {@link S3PutAbortedError} when `call.signal` stops it.
   */
  async put(request: PutRequest, call: PutCallOptions = {}): Promise<void> {
    await this.send(request, undefined, call);
  }

  /**
   * A conditional PUT (the latest view's and the feed's compare-and-swap): stored only if the object's ETag is still
   * `condition.ifMatch`, or (`ifNoneMatch: '*'`) only if there is none. True when stored; false when S3 refused the
   * condition (412 PreconditionFailed) or another conditional write of the key was under way (409
   * ConditionalRequestConflict), as the SDK's PutObject answered them to its callers. Retried, signed and aborted as
   * {@link put}: so, as with the SDK, an attempt that was stored but whose answer was lost is retried and then refused
   * by its own write (false); the callers read the key again and find their own bytes (view/guarded-write.ts).
   */
  async putIf(request: PutRequest, condition: PutCondition, call: PutCallOptions = {}): Promise<boolean> {
    const answer = await this.send(request, condition, call);
    return !isConditionRefusal(answer.status);
  }

  private async send(request: PutRequest, condition: PutCondition | undefined, call: PutCallOptions): Promise<Answer> {
    const resolved = await (this.resolved ??= this.resolve());
    const target = await this.targetFor(request.bucket, resolved.region);
    if ('sdkOnly' in target) {
      const stored = await putWithSdk(this.client, request, condition, call.signal);
      return { status: stored ? 200 : 412 };
    }
    const path = target.prefix + encodeKey(request.key);
    const headers: Record<string, string> = {
      ...target.headers,
      'content-type': request.contentType,
      'content-length': String(request.body.length),
      'x-amz-content-sha256': createHash('sha256').update(request.body).digest('hex'),
    };
    if (condition !== undefined) {
      if ('ifMatch' in condition) headers['if-match'] = condition.ifMatch;
      else headers['if-none-match'] = condition.ifNoneMatch;
    }
    if (resolved.crc32) {
      headers['x-amz-checksum-crc32'] = crc32Base64(request.body);
      headers['x-amz-sdk-checksum-algorithm'] = 'CRC32';
    }
    if (request.metadata)
      for (const name in request.metadata) headers[`x-amz-meta-${name.toLowerCase()}`] = request.metadata[name]!;
    return this.withRetries(
      request,
      resolved,
      call,
      (signingDate) =>
        sendAttempt(this.agent, this.signer, {
          method: 'PUT',
          target,
          path,
          headers,
          body: request.body,
          signingDate,
          signal: call.signal,
        }),
      condition === undefined ? undefined : (answer) => isConditionRefusal(answer.status),
    );
  }

  /**
   * The object's bytes by a lean GET (a consumer's reads), or `undefined` for `NoSuchKey`; signed, retried and
   * aborted as {@link put}. Endpoints the lean path does not sign go through the SDK's GetObject.
   */
  async get(bucket: string, key: string, call: PutCallOptions = {}): Promise<Buffer | undefined> {
    return (await this.read(bucket, key, call))?.bytes;
  }

  /**
   * {@link get} with the object's ETag (as S3 sends it, quotes included, as the SDK's GetObject gives it): the
   * tag a {@link putIf} is conditioned on.
   */
  async read(bucket: string, key: string, call: PutCallOptions = {}): Promise<TaggedObject | undefined> {
    const resolved = await (this.resolved ??= this.resolve());
    const target = await this.targetFor(bucket, resolved.region);
    if ('sdkOnly' in target) return getWithSdk(this.client, bucket, key, call.signal);
    const path = target.prefix + encodeKey(key);
    const headers = { ...target.headers, 'x-amz-content-sha256': EMPTY_SHA256 };
    const request: RequestTarget = { bucket, key, method: 'GET' };
    const outcome = await this.withRetries(
      request,
      resolved,
      call,
      (signingDate) =>
        sendAttempt(this.agent, this.signer, {
          method: 'GET',
          target,
          path,
          headers,
          body: undefined,
          signingDate,
          signal: call.signal,
        }),
      (answer) => answer.status === 404 && answer.code === 'NoSuchKey',
    );
    return outcome.status === 404 ? undefined : { bytes: outcome.body!, etag: outcome.etag ?? '' };
  }

  /**
   * Runs attempts inside the SDK's retry middleware with this client's SDK retry strategy (s3-put-retry.ts) until one
   * succeeds (or gets an error answer `isAnswer` takes as the request's answer: a GET's `NoSuchKey`, a conditional
   * PUT's refusal), is not worth retrying, is refused by the strategy (attempts or its token bucket spent), or is
   * stopped by `call.signal`.
   */
  private async withRetries(
    request: RequestTarget,
    resolved: Resolved,
    call: PutCallOptions,
    attemptAt: (signingDate: Date) => Promise<Attempt>,
    isAnswer?: (answer: Answer) => boolean,
  ): Promise<Answer> {
    const { signal } = call;
    const now = this.options.now ?? Date.now;
    const url = `s3://${request.bucket}/${request.key}`;
    if (signal?.aborted) throw aborted(request, 'before it was sent', signal);
    // What the last failed attempt was, for the retry's event and the final error.
    let last: { outcome: Attempt; why: string; failedAt: number } | undefined;
    let attempts = 0;
    // When the run's signal stopped it, in words, when an attempt saw it (else it stopped the wait before a retry).
    let abortedWhen: string | undefined;
    try {
      return await withSdkRetries(resolved.strategy, resolved.maxAttempts, signal, async (n) => {
        attempts = n;
        if (last !== undefined)
          call.onRetry?.({
            url,
            attempt: n - 1,
            delayMs: Math.round(performance.now() - last.failedAt),
            why: last.why,
            ...('status' in last.outcome ? { status: last.outcome.status } : {}),
          });
        if (signal?.aborted) throw aborted(request, (abortedWhen = `before attempt ${n}`), signal);
        const sentLocal = now();
        const signedAt = sentLocal + this.clockOffsetMs;
        const outcome = await attemptAt(new Date(signedAt));
        if ('status' in outcome && ((outcome.status >= 200 && outcome.status < 300) || isAnswer?.(outcome) === true))
          return outcome;
        if (signal?.aborted) throw aborted(request, (abortedWhen = 'in flight'), signal);
        if (!('status' in outcome)) {
          last = { outcome, why: transportCode(outcome.error), failedAt: performance.now() };
          throw sdkTransportError(outcome.error);
        }
        call.onAnswer?.(outcome.status);
        let corrected = false;
        let why = outcome.code ?? `HTTP ${outcome.status}`;
        if (isTimeRefusal(outcome.code)) {
          const offset = skewCorrection({
            date: outcome.date,
            serverTime: outcome.serverTime,
            aged: outcome.aged === true,
            signedAt,
            sentLocal,
            answeredLocal: now(),
          });
          if (offset !== undefined) {
            this.client.config.systemClockOffset = offset;
            corrected = true;
            why = `${outcome.code} (clock skew corrected by ${Math.round((offset - (signedAt - sentLocal)) / 1000)} s)`;
          }
        }
        const error = new SdkAnswerError(outcome, corrected);
        if (isSlowDown(error)) this.options.onSlowDown?.();
        last = { outcome, why, failedAt: performance.now() };
        throw error;
      });
    } catch (error) {
      // The SDK's middleware ends the wait before a retry with its own AbortError: named here as ours.
      if (signal?.aborted) throw aborted(request, abortedWhen ?? `before attempt ${attempts + 1}`, signal);
      if (last === undefined) throw error;
      // Worth a retry and attempts left, yet refused: the strategy's token bucket was spent.
      const quotaSpent = attempts < resolved.maxAttempts && error instanceof Error && isRetryable(error);
      throw failure(request, last.outcome, attempts, quotaSpent);
    }
  }

  /** Closes the connections. */
  async close(): Promise<void> {
    await this.agent.close();
  }

  private async resolve(): Promise<Resolved> {
    const config = this.client.config;
    const maxAttempts = this.options.maxAttempts ?? (await config.maxAttempts());
    return {
      crc32: (await config.requestChecksumCalculation()) !== 'WHEN_REQUIRED',
      maxAttempts,
      region: await config.region(),
      strategy: sdkRetryStrategy(maxAttempts, this.options.backoff),
    };
  }

  /** The bucket's target, resolved once by the S3 client's endpoint resolver (a failed resolution is asked again). */
  private targetFor(bucket: string, region: string): Promise<PutTarget | SdkOnly> {
    let target = this.targets.get(bucket);
    if (!target) {
      target =
        this.client.config.bucketEndpoint === true
          ? Promise.resolve({ sdkOnly: 'bucketEndpoint' })
          : resolvePutEndpoint(this.client, bucket).then((endpoint) => putTargetOf(endpoint, region));
      target.catch(() => this.targets.delete(bucket));
      this.targets.set(bucket, target);
    }
    return target;
  }
}

/** The SDK's `x-amz-checksum-crc32`: the CRC32 big-endian, base64. */
function crc32Base64(body: Buffer): string {
  const bytes = Buffer.allocUnsafe(4);
  bytes.writeUInt32BE(crc32(body) >>> 0);
  return bytes.toString('base64');
}
