/** The HTTP layer against the replica: retries, Retry-After, bounds, origins, timeouts, encodings. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient, parseRetryAfter } from '../../lambda/catalog/http-client.js';
import { BodyTooLargeError, FetchError, ForbiddenOriginError } from '../../lambda/catalog/http-errors.js';
import { generateCatalog, leafBody, type GeneratedCatalog } from '../support/catalog-generator.js';
import { CatalogReplica } from '../support/catalog-replica.js';
import { FAST_RETRY } from '../support/sync-harness.js';

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
    const error = await client().get(url(), { maxBytes: 1 << 20 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FetchError);
    expect((error as Error).message).toContain('Retry-After of 3600000 ms exceeds the cap');
    expect((error as FetchError).attempts).toBe(1);
  });

  it('does not retry a 404, nor follow a redirect', async () => {
    replica.clearFaults();
    replica.failWith(leaf().path, 404, 5);
    const notFound = await client().get(url(), { maxBytes: 1 << 20 }).catch((e: unknown) => e);
    expect((notFound as FetchError).message).toBe(`${url()}: HTTP 404`);
    expect((notFound as FetchError).attempts).toBe(1);
    replica.clearFaults();
    replica.failWith(leaf().path, 302, 1, { location: 'https://elsewhere.example/' });
    const redirect = await client().get(url(), { maxBytes: 1 << 20 }).catch((e: unknown) => e);
    expect((redirect as Error).message).toContain('redirects are not followed');
  });

  it('gives up after the last attempt with the URL and the last reason', async () => {
    replica.clearFaults();
    replica.failWith(leaf().path, 500, 100);
    const error = await client().get(url(), { maxBytes: 1 << 20 }).catch((e: unknown) => e);
    expect((error as FetchError).message).toBe(`${url()}: HTTP 500`);
    expect((error as FetchError).attempts).toBe(FAST_RETRY.attempts);
    replica.clearFaults();
  });

  it('starts no retry past the deadline', async () => {
    replica.clearFaults();
    replica.failWith(leaf().path, 503, 100);
    const error = await client().get(url(), { maxBytes: 1 << 20, deadline: Date.now() }).catch((e: unknown) => e);
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
    const small = await client().get(url(), { maxBytes: 100, headers: { 'accept-encoding': 'identity' } }).catch((e: unknown) => e);
    expect(small).toBeInstanceOf(BodyTooLargeError);
    replica.gzipBomb(leaf().path, 1);
    const bomb = await client().get(url(), { maxBytes: 8 << 20 }).catch((e: unknown) => e);
    expect(bomb).toBeInstanceOf(BodyTooLargeError);
    expect((bomb as Error).message).toContain('decompressed body exceeds the limit of 8388608 bytes');
  });

  it('never requests an origin that is not allowed', async () => {
    const before = other.requests.length;
    const error = await client().get(other.leafUrl(leaf()), { maxBytes: 1 << 20 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForbiddenOriginError);
    expect(other.requests.length).toBe(before);
  });

  it('rejects an unknown Content-Encoding', async () => {
    replica.clearFaults();
    replica.overrideBody(leaf().path, 'xx', { headers: { 'content-encoding': 'zstd' }, times: 1 });
    const error = await client().get(url(), { maxBytes: 1 << 20 }).catch((e: unknown) => e);
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
