/**
 * S3's 503 SlowDown as back-pressure, not failure (issue 12): a new bucket starts with one partition per prefix
 * (3,500 PUT/s) and answers SlowDown while it splits under a backfill's load. Two layers take it:
 * - leaf and manifest PUTs (the lean signed PUT, s3-put-client.ts) retry throttling with backoff as the SDK's
 *   `standard` mode does (the other calls keep the SDK client's `adaptive` mode), with more attempts than the
 *   follower's, and count every SlowDown they were answered;
 * - {@link BackpressureSnapshotStore} lowers the leaf PUTs in flight while SlowDowns come (halved at most once per
 *   window of PUTs), and raises them again by one per window of PUTs without one, up to the engine's concurrency.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { readProxyEnv } from '../contract/index.js';
import { sdkRequestHandler } from './proxy-agents.js';
import { withLeanPut } from './s3-put-wiring.js';
import type { ReadOptions, SnapshotStore, TaggedBytes, WriteOptions } from './types.js';

/** Attempts of one S3 request in the backfill's client (the follower's has 5). */
export const BACKPRESSURE_MAX_ATTEMPTS = 10;

/**
 * Counts SlowDowns and decides how many leaf PUTs may be in flight: halved on a SlowDown (at most once per window
 * of `limit` completed PUTs, so that one burst of answers cuts once), raised by one after each window of `limit`
 * PUTs with no SlowDown, never above `max` nor below 1.
 */
export class SlowDownGauge {
  /** SlowDown answers seen (each retried attempt counts). */
  slowDowns = 0;
  /** PUTs allowed in flight now. */
  limit: number;
  /** The lowest `limit` reached. */
  lowest: number;
  /** PUTs completed since the last cut (none yet: the first SlowDown cuts), and the window set at the cut. */
  private sinceCut = Number.POSITIVE_INFINITY;
  private window = 0;
  /** PUTs completed since the last SlowDown or the last raise. */
  private clean = 0;
  private active = 0;
  private readonly waiters: Array<() => void> = [];

  constructor(readonly max: number) {
    this.limit = max;
    this.lowest = max;
  }

  /** Called by the client for every SlowDown answer. */
  slowDown(): void {
    this.slowDowns++;
    this.clean = 0;
    if (this.sinceCut < this.window) return;
    this.limit = Math.max(1, Math.floor(this.limit / 2));
    this.lowest = Math.min(this.lowest, this.limit);
    this.sinceCut = 0;
    this.window = this.limit;
  }

  /** Waits for a slot under the limit. */
  async acquire(): Promise<void> {
    while (this.active >= this.limit) await new Promise<void>((resolve) => this.waiters.push(resolve));
    this.active++;
  }

  /** Frees a slot; a PUT that succeeded counts toward raising the limit again. */
  release(succeeded: boolean): void {
    this.active--;
    this.sinceCut++;
    if (succeeded && ++this.clean >= this.limit && this.limit < this.max) {
      this.limit++;
      this.clean = 0;
    }
    // Each woken PUT checks the limit again: those over it wait once more.
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** PUTs in flight now. */
  get inFlight(): number {
    return this.active;
  }
}

/** Whether an S3 error (or a raw response's status and code) is a SlowDown. */
function isSlowDown(error: unknown): boolean {
  const e = error as { name?: string; Code?: string; $metadata?: { httpStatusCode?: number } } | undefined;
  return e?.name === 'SlowDown' || e?.Code === 'SlowDown' || e?.$metadata?.httpStatusCode === 503;
}

/**
 * The S3 client of a range worker: like the follower's (endpoint from `AWS_ENDPOINT_URL_S3`, path style from
 * `S3_FORCE_PATH_STYLE`, sockets for the leaf concurrency), with `adaptive` retries and more attempts, telling
 * `gauge` of every SlowDown answer: the lean leaf and manifest PUTs (s3-put-client.ts, the same 10 attempts) tell it
 * of each throttled attempt, and a middleware inside the SDK's retry loop does for the requests the SDK still sends.
 */
export function backpressureS3Client(env: NodeJS.ProcessEnv, concurrency: number, gauge: SlowDownGauge): S3Client {
  const sockets = Math.max(50, concurrency * 2);
  const client = new S3Client({
    forcePathStyle: env.S3_FORCE_PATH_STYLE?.toLowerCase() === 'true',
    requestHandler: sdkRequestHandler(env, { sockets, connectionTimeout: 10_000, requestTimeout: 60_000 }),
    retryMode: 'adaptive',
    maxAttempts: BACKPRESSURE_MAX_ATTEMPTS,
  });
  client.middlewareStack.add(
    (next) => async (args) => {
      // Inside the deserializer and the retry loop: each attempt's raw response (or transport error).
      try {
        const result = await next(args);
        const response = result.response as { statusCode?: number } | undefined;
        if (response?.statusCode === 503) gauge.slowDown();
        return result;
      } catch (error) {
        if (isSlowDown(error)) gauge.slowDown();
        throw error;
      }
    },
    { step: 'deserialize', name: 'catalogSyncSlowDownGauge', priority: 'low' },
  );
  return withLeanPut(client, {
    connections: concurrency + 2,
    proxies: readProxyEnv(env),
    onSlowDown: () => gauge.slowDown(),
  });
}

/** A snapshot store whose leaf PUTs in flight follow the gauge's limit. Everything else goes straight through. */
export class BackpressureSnapshotStore implements SnapshotStore {
  readonly maxKeySegmentBytes?: number;

  constructor(
    private readonly inner: SnapshotStore,
    readonly gauge: SlowDownGauge,
  ) {
    if (inner.maxKeySegmentBytes !== undefined) this.maxKeySegmentBytes = inner.maxKeySegmentBytes;
  }

  async putLeaf(
    key: string,
    body: Buffer,
    metadata: Readonly<Record<string, string>>,
    options?: WriteOptions,
  ): Promise<void> {
    await this.gauge.acquire();
    let ok = false;
    try {
      await this.inner.putLeaf(key, body, metadata, options);
      ok = true;
    } finally {
      this.gauge.release(ok);
    }
  }

  putJson(key: string, value: unknown, options?: WriteOptions): Promise<void> {
    return this.inner.putJson(key, value, options);
  }

  getJson(key: string): Promise<unknown> {
    return this.inner.getJson(key);
  }

  getTagged(key: string, options?: ReadOptions): Promise<TaggedBytes | undefined> {
    return this.inner.getTagged(key, options);
  }

  putJsonIf(key: string, value: unknown, expected: string | undefined, options?: WriteOptions): Promise<boolean> {
    return this.inner.putJsonIf(key, value, expected, options);
  }

  deleteKey(key: string): Promise<void> {
    return this.inner.deleteKey(key);
  }

  listKeys(prefix: string, startAfter?: string, options?: ReadOptions): AsyncIterable<string> {
    return this.inner.listKeys(prefix, startAfter, options);
  }
}
