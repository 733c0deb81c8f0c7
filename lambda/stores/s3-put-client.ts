/**
 * The lean S3 PUT for leaves and manifests (issue 14): the AWS SDK's PutObject cost 43% of the engine's busy CPU
 * (middleware stack, per-request allocations, its HTTP handler). This sends the same request itself, keeping what
 * the SDK did for us:
 * - signing: the SDK's `SignatureV4`, with the S3 client's own credential provider (asked per request, so the
 *   default chain's cache and refresh of expiring Lambda, container or web-identity credentials apply), region
 *   and sha256 (s3-put-signer.ts);
 * - endpoint and addressing: the client's endpoint or `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL`, path or
 *   virtual-hosted style (s3-put-endpoint.ts). FIPS, dual-stack and accelerate endpoints, S3 Express and
 *   access-point ARNs are not built by it: with any of them set, the PUT goes through the SDK's PutObject;
 * - retries as the SDK's standard mode (s3-put-retry.ts), up to the client's `maxAttempts`, with clock-skew
 *   correction; every throttling answer (503, SlowDown) is told to `onSlowDown` (the backfill's gauge);
 * - integrity: `x-amz-content-sha256` is the body's real SHA-256, signed (S3 recomputes it and refuses a body that
 *   differs); and, when the client computes checksums (its default `requestChecksumCalculation: WHEN_SUPPORTED`),
 *   `x-amz-checksum-crc32` as the SDK sends it for PutObject, so S3 stores the same checksum. CRC32 is zlib's
 *   native one (a few µs per leaf); Content-MD5 is not sent (the SDK does not send it either: an MD5 would add a
 *   second full hash per body and S3 stores nothing of it);
 * - the request: `content-type`, `content-length` and `x-amz-meta-*` (names lower-cased, values as given), as the
 *   SDK serializes PutObject; nothing else is stored on the object.
 * It sends over one undici `Agent` (keep-alive, `connections` per origin, 10 s connect and 60 s headers/body
 * timeouts, as aws-clients.ts's SDK handler).
 */
import { type Dispatcher, Agent } from './undici-agent.js';
import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { encodeKey, leanPutUnsupported, putTarget, type EndpointChoice, type PutTarget } from './s3-put-endpoint.js';
import { S3PutError } from './s3-put-error.js';
import {
  backoffDelay,
  CLOCK_SKEW_CODES,
  correctedClockOffset,
  isRetryableAnswer,
  isRetryableTransportError,
  isThrottling,
  SDK_RETRY_DELAYS,
  type PutRetryDelays,
} from './s3-put-retry.js';
import { S3PutSigner } from './s3-put-signer.js';

/** How a lean PUT client behaves beyond what it reads from the S3 client. */
export interface S3PutOptions {
  /** Connections per origin: the PUTs the engine has in flight (its concurrency) plus a few for manifests. */
  readonly connections: number;
  /** Attempts per PUT; default the S3 client's `maxAttempts` (5 for the follower, 10 for a backfill). */
  readonly maxAttempts?: number;
  /** Told of every throttling answer (503 or SlowDown), each retried attempt included. */
  readonly onSlowDown?: () => void;
  /** Backoff bases and cap; default the SDK's (tests shorten them). */
  readonly delays?: PutRetryDelays;
  /** The local clock (ms), for signing dates; tests set it off to see the skew correction. */
  readonly now?: () => number;
}

/** One object to PUT. */
export interface PutRequest {
  readonly bucket: string;
  readonly key: string;
  readonly body: Buffer;
  readonly contentType: string;
  readonly metadata?: Readonly<Record<string, string>>;
}

/** What the client reads once from the S3 client's resolved config. */
interface Resolved {
  readonly choice: EndpointChoice;
  readonly crc32: boolean;
  readonly maxAttempts: number;
  readonly unsupported: (bucket: string) => string[];
}

/** One attempt's outcome: an answer, or a transport error. */
type Attempt = { readonly status: number; readonly code?: string; readonly message?: string; readonly serverTime?: string; readonly date?: string } | { readonly error: unknown };

/** Up to this much of an error answer's body is read (S3's XML errors are a few hundred bytes). */
const ERROR_BODY_LIMIT = 64 * 1024;

/** Lean PUTs for one S3 client (see the module). */
export class S3PutClient {
  private readonly agent: Agent;
  private readonly signer: S3PutSigner;
  private resolved: Promise<Resolved> | undefined;
  private readonly targets = new Map<string, PutTarget>();

  constructor(
    private readonly client: S3Client,
    private readonly options: S3PutOptions,
  ) {
    this.agent = new Agent({
      connections: Math.max(1, options.connections),
      pipelining: 1,
      keepAliveTimeout: 10_000,
      connect: { timeout: 10_000 },
      headersTimeout: 60_000,
      bodyTimeout: 60_000,
    });
    const config = client.config;
    this.signer = new S3PutSigner({ credentials: () => config.credentials(), region: () => config.region(), sha256: config.sha256 });
  }

  /**
   * The server-minus-local clock offset in use, in ms: the S3 client's own `systemClockOffset`, so what the SDK
   * learnt from its answers signs the lean PUTs too, and what a RequestTimeTooSkewed here teaches, the SDK's.
   */
  get clockOffsetMs(): number {
    return this.client.config.systemClockOffset ?? 0;
  }

  /** PUTs `request.body` at `request.key`, retrying as the SDK would; throws {@link S3PutError} when it fails. */
  async put(request: PutRequest): Promise<void> {
    const resolved = await (this.resolved ??= this.resolve());
    if (resolved.unsupported(request.bucket).length > 0) return this.putWithSdk(request);
    const target = this.targetFor(request.bucket, resolved.choice);
    const path = target.prefix + encodeKey(request.key);
    const headers: Record<string, string> = {
      'content-type': request.contentType,
      'content-length': String(request.body.length),
      'x-amz-content-sha256': createHash('sha256').update(request.body).digest('hex'),
    };
    if (resolved.crc32) headers['x-amz-checksum-crc32'] = crc32Base64(request.body);
    if (request.metadata) for (const name in request.metadata) headers[`x-amz-meta-${name.toLowerCase()}`] = request.metadata[name]!;
    const now = this.options.now ?? Date.now;
    const delays = this.options.delays ?? SDK_RETRY_DELAYS;
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.attempt(target, path, headers, request.body, new Date(now() + this.clockOffsetMs));
      if ('status' in outcome && outcome.status >= 200 && outcome.status < 300) return;
      let retry: boolean;
      let throttled = false;
      if ('status' in outcome) {
        throttled = isThrottling(outcome.status, outcome.code);
        if (throttled) this.options.onSlowDown?.();
        retry = isRetryableAnswer(outcome.status, outcome.code);
        if (!retry && outcome.code !== undefined && CLOCK_SKEW_CODES.has(outcome.code)) {
          const offset = correctedClockOffset(outcome.date, outcome.serverTime, now(), this.clockOffsetMs);
          if (offset !== undefined) {
            this.client.config.systemClockOffset = offset;
            retry = true;
          }
        }
      } else {
        retry = isRetryableTransportError(outcome.error);
      }
      if (!retry || attempt >= resolved.maxAttempts) throw failure(request, outcome, attempt);
      const wait = backoffDelay(attempt, throttled, delays);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  /** Closes the connections. */
  async close(): Promise<void> {
    await this.agent.close();
  }

  private async attempt(target: PutTarget, path: string, headers: Record<string, string>, body: Buffer, signingDate: Date): Promise<Attempt> {
    let response: Dispatcher.ResponseData;
    try {
      const signed = await this.signer.signPut(target, path, headers, signingDate);
      response = await this.agent.request({ origin: target.origin, path, method: 'PUT', headers: signed, body });
    } catch (error) {
      return { error };
    }
    if (response.statusCode >= 200 && response.statusCode < 300) {
      await response.body.dump();
      return { status: response.statusCode };
    }
    let text = '';
    try {
      text = await readLimited(response.body, ERROR_BODY_LIMIT);
    } catch {
      // The status is the answer; a body cut off on the way leaves only the code unknown.
    }
    const date = response.headers.date;
    return {
      status: response.statusCode,
      ...optional('code', xmlField(text, 'Code')),
      ...optional('message', xmlField(text, 'Message')),
      ...optional('serverTime', xmlField(text, 'ServerTime')),
      ...optional('date', typeof date === 'string' ? date : undefined),
    };
  }

  private async resolve(): Promise<Resolved> {
    const config = this.client.config;
    const explicit = config.endpoint ? await config.endpoint() : undefined;
    const configured = explicit ? undefined : await config.serviceConfiguredEndpoint?.();
    const endpoint = explicit
      ? new URL(`${explicit.protocol}//${explicit.hostname}${explicit.port ? `:${explicit.port}` : ''}${explicit.path ?? ''}`)
      : configured
        ? new URL(configured)
        : undefined;
    const flags = {
      fips: await config.useFipsEndpoint(),
      dualstack: await config.useDualstackEndpoint(),
      accelerate: config.useAccelerateEndpoint === true,
      bucketEndpoint: config.bucketEndpoint === true,
    };
    return {
      choice: { endpoint, region: await config.region(), forcePathStyle: config.forcePathStyle === true },
      crc32: (await config.requestChecksumCalculation()) !== 'WHEN_REQUIRED',
      maxAttempts: this.options.maxAttempts ?? (await config.maxAttempts()),
      unsupported: (bucket) => leanPutUnsupported(bucket, flags),
    };
  }

  private targetFor(bucket: string, choice: EndpointChoice): PutTarget {
    let target = this.targets.get(bucket);
    if (!target) this.targets.set(bucket, (target = putTarget(bucket, choice)));
    return target;
  }

  /** The SDK's PutObject, for the endpoints the lean path does not build (the SDK retries and signs itself). */
  private async putWithSdk(request: PutRequest): Promise<void> {
    await this.client.send(
      new PutObjectCommand({
        Bucket: request.bucket,
        Key: request.key,
        Body: request.body,
        ContentLength: request.body.length,
        ContentType: request.contentType,
        ...(request.metadata ? { Metadata: { ...request.metadata } } : {}),
      }),
    );
  }
}

/** The SDK's `x-amz-checksum-crc32`: the CRC32 big-endian, base64. */
function crc32Base64(body: Buffer): string {
  const bytes = Buffer.allocUnsafe(4);
  bytes.writeUInt32BE(crc32(body) >>> 0);
  return bytes.toString('base64');
}

function failure(request: PutRequest, outcome: Attempt, attempts: number): S3PutError {
  const where = { bucket: request.bucket, key: request.key, attempts };
  if ('error' in outcome) return new S3PutError(where, { cause: outcome.error });
  return new S3PutError({ ...where, status: outcome.status, ...optional('s3Code', outcome.code), ...optional('s3Message', outcome.message) });
}

function optional<K extends string>(name: K, value: string | undefined): { [P in K]?: string } {
  return (value === undefined ? {} : { [name]: value }) as { [P in K]?: string };
}

/** The text of `<name>…</name>` in S3's XML error body, entities decoded. */
function xmlField(xml: string, name: string): string | undefined {
  const match = new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml);
  if (!match) return undefined;
  return match[1]!.replace(/&(lt|gt|quot|apos|amp);/g, (_, entity: string) => ({ lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' })[entity]!);
}

async function readLimited(body: Dispatcher.ResponseData['body'], limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (size < limit) chunks.push(chunk);
    size += chunk.length;
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, limit);
}
