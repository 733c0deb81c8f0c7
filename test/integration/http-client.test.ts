/** The HTTP layer against the replica: retries, Retry-After, bounds, origins, timeouts, encodings. */
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient, parseRetryAfter } from '../../lambda/catalog/http-client.js';
import {
  BodyTooLargeError,
  FetchAbortedError,
  FetchError,
  ForbiddenOriginError,
} from '../../lambda/catalog/http-errors.js';
import { generateCatalog, leafBody, type GeneratedCatalog } from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { FAST_RETRY } from '../../testkit/sync-harness.js';

let catalog: GeneratedCatalog;
let replica: CatalogReplica;
let other: CatalogReplica;
const clients: HttpClient[] = [];

function client(options: ConstructorParameters<typeof HttpClient>[0] = {}): HttpClient {
  const http = new HttpClient({ retry: FAST_RETRY, ...options });
  http.allowOrigin(replica.origin);
  clients.push(http);
  return http;
}

beforeAll(async () => {
  catalog = generateCatalog({ commits: 3, seed: 81 });
  replica = await CatalogReplica.start({ catalog });
  other = await CatalogReplica.start({ catalog });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await replica.stop();
  await other.stop();
});

const leaf = () => catalog.commits[0]!.leaves[0]!;
const url = () => replica.leafUrl(leaf());

describe('HttpClient', () => {
  it('returns the exact body, decompressing gzip and br', async () => {
    const expected = leafBody(catalog, leaf(), replica.origin);
    for (const encoding of ['gzip', 'br', 'identity']) {
      const response = await client().get(url(), { maxBytes: 1 << 20, headers: { 'accept-encoding': encoding } });
      expect(response.body.toString()).toBe(expected);
    }
  });

  it('retries 5xx and resets, and counts attempts', async () => {
    replica.clearFaults();
    replica.failWith(leaf().path, 503, 2);
    replica.resetConnection(leaf().path, 1);
    const retries: number[] = [];
    const http = client();
    http.onRetry = (event) => retries.push(event.attempt);
    const response = await http.get(url(), { maxBytes: 1 << 20 });
    expect(response.attempts).toBe(4);
    expect(retries).toEqual([1, 2, 3]);
  });

  it('waits as long as Retry-After asks, and gives up when it asks for more than the cap', async () => {
    replica.clearFaults();
    replica.failWith(leaf().path, 429, 1, { 'retry-after': '1' });
    const delays: number[] = [];
    const http = client();
    http.onRetry = (event) => delays.push(event.delayMs);
    await http.get(url(), { maxBytes: 1 << 20 });
    expect(delays).toHaveLength(1);
    expect(delays[0]).toBeGreaterThanOrEqual(1_000);

    replica.failWith(leaf().path, 503, 1, { 'retry-after': '3600' });
    const error = await client()
      .get(url(), { maxBytes: 1 << 20 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FetchError);
    expect((error as Error).message).toContain('Retry-After of 3600000 ms exceeds the cap');
    expect((error as FetchError).attempts).toBe(1);
  });

  it('does not retry a 404, nor follow a redirect', async () => {
    replica.clearFaults();
    replica.failWith(leaf().path, 404, 5);
    const notFound = await client()
      .get(url(), { maxBytes: 1 << 20 })
      .catch((e: unknown) => e);
    expect((notFound as FetchError).message).toBe(`${url()}: HTTP 404 (1 attempt)`);
    expect((notFound as FetchError).attempts).toBe(1);
    replica.clearFaults();
    replica.failWith(leaf().path, 302, 1, { location: 'https://elsewhere.example/' });
    const redirect = await client()
      .get(url(), { maxBytes: 1 << 20 })
      .catch((e: unknown) => e);
    expect((redirect as Error).message).toContain('redirects are not followed');
  });

  it('redacts the Location of a redirect: no user info nor signed query in the message or its cause chain', async () => {
    replica.clearFaults();
    replica.failWith(leaf().path, 302, 1, {
      location: 'https://alice:pa55word@cdn.example/leaf.json?X-Amz-Signature=f00dfeed&sig=c0ffee',
    });
    replica.failWith(leaf().path, 307, 1, { location: '/moved/leaf.json?token=c0ffee' });
    for (const shown of [
      'https://REDACTED@cdn.example/leaf.json?X-Amz-Signature=REDACTED&sig=REDACTED',
      `${replica.origin}/moved/leaf.json?token=REDACTED`,
    ]) {
      const error = await client()
        .get(url(), { maxBytes: 1 << 20 })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FetchError);
      expect((error as Error).message).toContain(`to ${shown} (redirects are not followed)`);
      // Every property of the error and of each cause, stack included.
      const everything = inspect(error, { depth: null, showHidden: true });
      for (const secret of ['alice', 'pa55word', 'f00dfeed', 'c0ffee']) expect(everything).not.toContain(secret);
    }
  });

  it('bounds each attempt with a total timeout: a body that trickles in fails, naming the URL and the timeout', async () => {
    replica.clearFaults();
    replica.clearLog();
    replica.trickleBody(leaf().path, 50, 2);
    const http = client({ totalTimeoutMs: 300, retry: { ...FAST_RETRY, attempts: 2 } });
    const error = await http.get(url(), { maxBytes: 1 << 20 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FetchError);
    expect((error as FetchError).message).toBe(
      `${url()}: total timeout of 0.3 s exceeded (response headers and body) (2 attempts)`,
    );
    expect((error as FetchError).attempts).toBe(2);
    // Each timed-out attempt closed its connection.
    await replica.whenAbandoned(leaf().path, 2);
    expect(replica.countRequests(leaf().path)).toBe(2);
  });

  it('a request in flight ends when its signal aborts: the connection is closed, and it is not a fetch failure', async () => {
    replica.clearFaults();
    replica.clearLog();
    replica.trickleBody(leaf().path, 50, 1);
    const stop = new AbortController();
    replica.onRequest = () => stop.abort();
    try {
      const error = await client()
        .get(url(), { maxBytes: 1 << 20, signal: stop.signal })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FetchAbortedError);
      expect(error).not.toBeInstanceOf(FetchError);
      expect((error as Error).message).toBe(
        `${url()}: aborted in flight: the run was stopped (time budget reached or interrupted)`,
      );
      await replica.whenAbandoned(leaf().path, 1);
      expect(replica.countRequests(leaf().path)).toBe(1);
    } finally {
      replica.onRequest = undefined;
    }
  });

  it('a wait before a retry ends when the signal aborts', async () => {
    replica.clearFaults();
    replica.clearLog();
    replica.failWith(leaf().path, 503, 100, { 'retry-after': '50' });
    const stop = new AbortController();
    const http = client({ retry: { ...FAST_RETRY, maxRetryAfterMs: 120_000 } });
    http.onRetry = () => stop.abort();
    const error = await http.get(url(), { maxBytes: 1 << 20, signal: stop.signal }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FetchAbortedError);
    expect((error as Error).message).toContain('aborted while waiting to retry (after: HTTP 503)');
    expect(replica.countRequests(leaf().path)).toBe(1);
    replica.clearFaults();
  });

  it('gives up after the last attempt with the URL and the last reason', async () => {
    replica.clearFaults();
    replica.failWith(leaf().path, 500, 100);
    const error = await client()
      .get(url(), { maxBytes: 1 << 20 })
      .catch((e: unknown) => e);
    expect((error as FetchError).message).toBe(`${url()}: HTTP 500 (5 attempts)`);
    expect((error as FetchError).attempts).toBe(FAST_RETRY.attempts);
    replica.clearFaults();
  });

  it('starts no retry past the deadline', async () => {
    replica.clearFaults();
    replica.failWith(leaf().path, 503, 100);
    const error = await client()
      .get(url(), { maxBytes: 1 << 20, deadline: Date.now() })
      .catch((e: unknown) => e);
    expect((error as Error).message).toContain('no time left');
    expect((error as FetchError).attempts).toBe(1);
    replica.clearFaults();
  });

  it('survives a stalled body with the body timeout, and a truncated one', async () => {
    replica.clearFaults();
    replica.stallBody(leaf().path, 1);
    replica.truncateBody(leaf().path, 1);
    const response = await client({ bodyTimeoutMs: 300 }).get(url(), { maxBytes: 1 << 20 });
    expect(response.attempts).toBe(3);
    expect(response.body.toString()).toBe(leafBody(catalog, leaf(), replica.origin));
  });

  it('bounds the body before and after decompression', async () => {
    replica.clearFaults();
    const small = await client()
      .get(url(), { maxBytes: 100, headers: { 'accept-encoding': 'identity' } })
      .catch((e: unknown) => e);
    expect(small).toBeInstanceOf(BodyTooLargeError);
    replica.gzipBomb(leaf().path, 1);
    const bomb = await client()
      .get(url(), { maxBytes: 8 << 20 })
      .catch((e: unknown) => e);
    expect(bomb).toBeInstanceOf(BodyTooLargeError);
    expect((bomb as Error).message).toContain('decompressed body exceeds the limit of 8388608 bytes');
  });

  it('never requests an origin that is not allowed', async () => {
    const before = other.requests.length;
    const error = await client()
      .get(other.leafUrl(leaf()), { maxBytes: 1 << 20 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForbiddenOriginError);
    expect(other.requests.length).toBe(before);
  });

  it('rejects an unknown Content-Encoding', async () => {
    replica.clearFaults();
    replica.overrideBody(leaf().path, 'xx', { headers: { 'content-encoding': 'zstd' }, times: 1 });
    const error = await client()
      .get(url(), { maxBytes: 1 << 20 })
      .catch((e: unknown) => e);
    expect((error as Error).message).toContain('unsupported Content-Encoding "zstd"');
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates', () => {
    expect(parseRetryAfter('0')).toBe(0);
    expect(parseRetryAfter('120')).toBe(120_000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:10 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT'))).toBe(10_000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('Wed, 21 Oct 2015 07:29:00 GMT'))).toBe(0);
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
  });
});
