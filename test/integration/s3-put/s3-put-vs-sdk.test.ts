/**
 * The lean S3 PUT retries as the AWS SDK's PutObject does (issue 30, item 5), held to the SDK itself in one run: on
 * the same faults of the S3 fault front (500 InternalError, 503 ServiceUnavailable, 503 SlowDown, a PUT never
 * answered) the same PUTs, each through a fresh client with a full retry token bucket, make the same number of
 * attempts by the lean client as by the SDK's `PutObjectCommand`. Both use the SDK's own retry strategy (the lean
 * client runs its attempts inside the SDK's retry middleware), with a 1 ms backoff so the test takes no time: what is
 * compared is which answers are retried and what each retry costs the bucket. A `Retry-After` is honoured by both.
 */
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { StandardRetryStrategy } from '@smithy/core/retry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3PutClient } from '../../../lambda/stores/s3-put-client.js';
import type { PutRetryEvent } from '../../../lambda/stores/types.js';
import { createBucket } from '../../../testkit/emulators.js';
import { testServices, uniqueName } from '../../../testkit/env.js';
import { FAST_BACKOFF } from '../../../testkit/fast-backoff.js';
import { S3FaultFront, type S3Fault } from '../../../testkit/s3-fault-front.js';

/**
 * With the fault that never answers, both clients give up on an attempt after this (the SDK's request timeout, the
 * lean client's headers timeout). Only then: a busy machine could time out an answered attempt too, which both
 * retry at a timeout's cost.
 */
const TIMEOUT_MS = 100;
const MAX_ATTEMPTS = 5;
/** PUTs in flight at once, per client. */
const IN_FLIGHT = 8;

const FAULTS: readonly { readonly name: string; readonly fault: S3Fault; readonly puts: number }[] = [
  {
    name: '500 InternalError',
    fault: { kind: 'answer', status: 500, code: 'InternalError', message: 'We encountered an internal error.' },
    puts: 64,
  },
  {
    name: '503 ServiceUnavailable',
    fault: { kind: 'answer', status: 503, code: 'ServiceUnavailable', message: 'Service is unable to handle request.' },
    puts: 64,
  },
  {
    name: '503 SlowDown',
    fault: { kind: 'answer', status: 503, code: 'SlowDown', message: 'Please reduce your request rate.' },
    puts: 64,
  },
  // Each unanswered attempt waits out the timeout (undici checks it about once a second): fewer PUTs, all in flight,
  // still more retries than the bucket allows.
  { name: 'no answer (timeout)', fault: { kind: 'hang' }, puts: 18 },
];

let front: S3FaultFront;
const bucket = uniqueName('vs-sdk');

function s3Client(sdkRetries: boolean, timeoutMs?: number): S3Client {
  return new S3Client({
    endpoint: front.url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    forcePathStyle: true,
    maxAttempts: MAX_ATTEMPTS,
    // The SDK's own strategy, with the lean client's test backoff (the lean client makes its own from the client's maxAttempts).
    ...(sdkRetries
      ? { retryStrategy: new StandardRetryStrategy({ maxAttempts: MAX_ATTEMPTS, backoff: FAST_BACKOFF }) }
      : {}),
    ...(timeoutMs === undefined ? {} : { requestHandler: { requestTimeout: timeoutMs, throwOnRequestTimeout: true } }),
  });
}

/** Runs `puts` PUTs under `prefix`, `inFlight` at a time; resolves once every one has settled. */
async function putAll(
  puts: number,
  inFlight: number,
  prefix: string,
  put: (key: string) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < puts) await put(`${prefix}${next++}.json`).catch(() => undefined);
    }),
  );
}

beforeAll(async () => {
  await createBucket(testServices().s3Endpoint, bucket);
  front = await S3FaultFront.start(testServices().s3Endpoint);
});
afterAll(async () => {
  await front.stop();
});

describe("the lean PUT against the SDK's PutObject, on the same faults", () => {
  const attempts = (prefix: string): number =>
    front.seen.filter((seen) => seen.method === 'PUT' && seen.url.startsWith(`/${bucket}/${prefix}`)).length;

  it.each(FAULTS)(
    '$name: the same attempts and retries, within the same token bucket',
    async ({ name, fault, puts }) => {
      const tag = name.replace(/[^a-z0-9]+/gi, '-').toLowerCase();
      front.fault({ match: (seen) => seen.url.startsWith(`/${bucket}/${tag}/`), fault });
      const timeoutMs = fault.kind === 'hang' ? TIMEOUT_MS : undefined;
      const inFlight = fault.kind === 'hang' ? puts : IN_FLIGHT;
      const sdk = s3Client(true, timeoutMs);
      const leanS3 = s3Client(false, timeoutMs);
      const lean = new S3PutClient(leanS3, {
        connections: inFlight,
        backoff: FAST_BACKOFF,
        ...(timeoutMs === undefined ? {} : { answerTimeoutMs: timeoutMs }),
      });
      const body = Buffer.from('{"retried":true}');
      try {
        await Promise.all([
          putAll(puts, inFlight, `${tag}/sdk/`, (key) =>
            sdk.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: 'application/json' })),
          ),
          putAll(puts, inFlight, `${tag}/lean/`, (key) =>
            lean.put({ bucket, key, body, contentType: 'application/json' }),
          ),
        ]);
        const sdkRetries = attempts(`${tag}/sdk/`) - puts;
        const leanRetries = attempts(`${tag}/lean/`) - puts;
        // Every PUT was retried, until the bucket ran dry: fewer retries than the attempts allowed.
        expect(sdkRetries).toBeGreaterThan(0);
        expect(sdkRetries).toBeLessThan(puts * (MAX_ATTEMPTS - 1));
        expect({ name, leanRetries }).toEqual({ name, leanRetries: sdkRetries });
      } finally {
        front.reset();
        await lean.close();
        sdk.destroy();
        leanS3.destroy();
      }
    },
  );

  it('honours Retry-After as the SDK does: the retry waits for it', async () => {
    const slowDown: S3Fault = { kind: 'answer', status: 503, code: 'SlowDown', headers: { 'Retry-After': '1' } };
    for (const key of ['after/sdk.json', 'after/lean.json'])
      front.fault({ match: (seen) => seen.url.split('?')[0] === `/${bucket}/${key}`, fault: slowDown, times: 1 });
    const sdk = s3Client(true);
    const leanS3 = s3Client(false);
    const lean = new S3PutClient(leanS3, { connections: 1, backoff: FAST_BACKOFF });
    const events: PutRetryEvent[] = [];
    try {
      const [sent] = await Promise.all([
        sdk.send(new PutObjectCommand({ Bucket: bucket, Key: 'after/sdk.json', Body: Buffer.from('{}') })),
        lean.put(
          { bucket, key: 'after/lean.json', body: Buffer.from('{}'), contentType: 'application/json' },
          { onRetry: (event) => events.push(event) },
        ),
      ]);
      expect(sent.$metadata).toMatchObject({ attempts: 2 });
      expect(sent.$metadata.totalRetryDelay).toBeGreaterThanOrEqual(900);
      expect(events).toHaveLength(1);
      expect(events[0]!.delayMs).toBeGreaterThanOrEqual(900);
    } finally {
      front.reset();
      await lean.close();
      sdk.destroy();
      leanS3.destroy();
    }
  });
});
