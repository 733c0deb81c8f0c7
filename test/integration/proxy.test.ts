/**
 * The HTTP client behind a forward proxy (testkit/forward-proxy.ts, counting what passes): with the proxy
 * variables set every request to the replica goes through the proxy, with NO_PROXY matching none does; a failed
 * fetch says how many attempts it made and, for DNS, connection and proxy errors, what to check, naming the host
 * and the proxy variable, never its credentials.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../../lambda/catalog/http-client.js';
import { FetchError } from '../../lambda/catalog/http-errors.js';
import { generateCatalog, type GeneratedCatalog } from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { freePort } from '../../testkit/emulator-processes.js';
import { ForwardProxy } from '../../testkit/forward-proxy.js';
import { FAST_RETRY } from '../../testkit/sync-harness.js';

let catalog: GeneratedCatalog;
let replica: CatalogReplica;
const proxies: ForwardProxy[] = [];
const clients: HttpClient[] = [];

function client(proxyEnv: Record<string, string>, origin = replica.origin, attempts = 3): HttpClient {
  const http = new HttpClient({ retry: { ...FAST_RETRY, attempts }, proxyEnv });
  http.allowOrigin(origin);
  clients.push(http);
  return http;
}

async function startProxy(credentials?: string): Promise<ForwardProxy> {
  const proxy = await ForwardProxy.start(credentials === undefined ? {} : { credentials });
  proxies.push(proxy);
  return proxy;
}

async function failure(promise: Promise<unknown>): Promise<FetchError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FetchError);
  return error as FetchError;
}

const leafUrls = () => catalog.commits.flatMap((commit) => commit.leaves).map((leaf) => replica.leafUrl(leaf));

beforeAll(async () => {
  catalog = generateCatalog({ commits: 4, seed: 131 });
  replica = await CatalogReplica.start({ catalog });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await Promise.all(proxies.map((p) => p.stop()));
  await replica.stop();
});

describe('HttpClient and the proxy variables', () => {
  it('with HTTP_PROXY set, every request to the replica goes through the proxy (tunnelled, keep-alive)', async () => {
    const proxy = await startProxy();
    replica.clearLog();
    const http = client({ HTTP_PROXY: proxy.url });
    const urls = [replica.serviceIndexUrl, ...leafUrls()];
    for (const url of urls) expect((await http.get(url, { maxBytes: 1 << 22, anyOrigin: true })).status).toBe(200);
    expect(replica.requests).toHaveLength(urls.length);
    expect(proxy.requests.map((r) => r.path)).toEqual(replica.requests.map((r) => r.path));
    expect(proxy.tunnels.every((t) => t === new URL(replica.origin).host)).toBe(true);
    expect(proxy.tunnels.length).toBeGreaterThan(0);
  });

  it('lower-case http_proxy is honoured, and a proxy with credentials gets them from the URL', async () => {
    const proxy = await startProxy('alice:s3cret');
    const http = client({ http_proxy: proxy.url.replace('//', '//alice:s3cret@') });
    await http.get(leafUrls()[0]!, { maxBytes: 1 << 20 });
    expect(proxy.requests).toHaveLength(1);
    expect(proxy.refused).toBe(0);
  });

  it('with NO_PROXY matching the host, no request goes through the proxy', async () => {
    const proxy = await startProxy();
    replica.clearLog();
    const host = new URL(replica.origin).hostname;
    for (const noProxy of [host, `${host}:${new URL(replica.origin).port}`, '*']) {
      const http = client({ HTTP_PROXY: proxy.url, HTTPS_PROXY: proxy.url, NO_PROXY: noProxy });
      for (const url of leafUrls()) await http.get(url, { maxBytes: 1 << 20 });
    }
    expect(replica.requests).toHaveLength(3 * leafUrls().length);
    expect(proxy.requests).toEqual([]);
    expect(proxy.tunnels).toEqual([]);
  });

  it('no proxy variable: direct', async () => {
    const proxy = await startProxy();
    await client({}).get(leafUrls()[0]!, { maxBytes: 1 << 20 });
    expect(proxy.requests).toEqual([]);
  });
});

describe('a failed fetch', () => {
  it('says how many attempts it made, and nothing more for an HTTP error', async () => {
    const error = await failure(client({}).get(`${replica.origin}/no/such/document.json`, { maxBytes: 1024 }));
    expect(error.message).toBe(`${replica.origin}/no/such/document.json: HTTP 404 (1 attempt)`);
    expect(error.attempts).toBe(1);
    expect(error.hint).toBeUndefined();
  });

  it('a refused port: the attempts, and a hint naming the host', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/v3/index.json`;
    const error = await failure(client({}, `http://127.0.0.1:${port}`).get(url, { maxBytes: 1024 }));
    expect(error.attempts).toBe(3);
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.message).toContain('(3 attempts). Hint: could not connect to 127.0.0.1:');
    expect(error.hint).toBe(
      `could not connect to 127.0.0.1:${port} (ECONNREFUSED): check that it is up and reachable from this machine (firewall, VPN); behind a proxy, set HTTP_PROXY`,
    );
  });

  it('an unresolvable host (.invalid, RFC 2606): a DNS hint naming the host', async () => {
    const url = 'https://catalog.invalid/v3/index.json';
    const error = await failure(client({}, 'https://catalog.invalid', 2).get(url, { maxBytes: 1024 }));
    expect(error.attempts).toBe(2);
    expect(error.message).toContain('(2 attempts). Hint: the host catalog.invalid could not be resolved (');
    expect(error.hint).toMatch(
      /^the host catalog\.invalid could not be resolved \((ENOTFOUND|EAI_AGAIN)\): .*set HTTPS_PROXY/,
    );
  });

  it('a proxy that is down: the hint names the variable and the proxy, never its credentials', async () => {
    const port = await freePort();
    const error = await failure(
      client({ HTTPS_PROXY: `http://alice:s3cret@127.0.0.1:${port}` }, 'https://api.nuget.org').get(
        'https://api.nuget.org/v3/index.json',
        { maxBytes: 1024 },
      ),
    );
    expect(error.attempts).toBe(3);
    expect(error.hint).toBe(
      `requests to api.nuget.org go through the proxy of HTTPS_PROXY (http://127.0.0.1:${port}), and the connection failed (ECONNREFUSED): check that the proxy is up and reachable, or list api.nuget.org in NO_PROXY to go direct`,
    );
    expect(error.message).not.toContain('s3cret');
    expect(error.message).not.toContain('alice');
  });

  it('a proxy that refuses the tunnel (407, wrong credentials): the hint says so, without quoting them', async () => {
    const proxy = await startProxy('alice:s3cret');
    const error = await failure(
      client({ HTTP_PROXY: proxy.url.replace('//', '//alice:wrong@') }).get(leafUrls()[0]!, { maxBytes: 1024 }),
    );
    expect(proxy.refused).toBeGreaterThan(0);
    expect(error.hint).toContain(
      `the proxy of HTTP_PROXY (${proxy.url}) answered HTTP 407 to the tunnel to ${new URL(replica.origin).host}: it refused the credentials in HTTP_PROXY`,
    );
    expect(error.message).not.toContain('wrong');
  });

  it('a proxy that wants credentials and got none (407): the hint says where to put them', async () => {
    const proxy = await startProxy('alice:s3cret');
    const error = await failure(client({ HTTP_PROXY: proxy.url }).get(leafUrls()[0]!, { maxBytes: 1024 }));
    expect(error.hint).toContain(
      `the proxy of HTTP_PROXY (${proxy.url}) answered HTTP 407 to the tunnel to ${new URL(replica.origin).host}: it asks for credentials`,
    );
  });
});
