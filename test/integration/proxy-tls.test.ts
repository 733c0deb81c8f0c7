/**
 * TLS inside the proxy's CONNECT tunnel: the catalog, DynamoDB and S3 served over https (testkit/tls-front.ts, a
 * certificate for 127.0.0.1 made for the test) and reached only through the forward proxy, which relays the TLS
 * bytes unread as a corporate proxy does. The CLI's clients (the catalog's undici client, DynamoDB through the SDK's
 * hpagent agent, the lean S3 PUTs on undici) trust the certificate from `NODE_EXTRA_CA_CERTS`, and only then.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../../lambda/catalog/http-client.js';
import { FetchError } from '../../lambda/catalog/http-errors.js';
import { generateCatalog, type GeneratedCatalog } from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { runCli } from '../../testkit/cli-process.js';
import { ForwardProxy } from '../../testkit/forward-proxy.js';
import { commitTicks, FAST_RETRY, SyncHarness } from '../../testkit/sync-harness.js';
import { selfSignedCertificate, TlsFront, type TestCertificate } from '../../testkit/tls-front.js';

let catalog: GeneratedCatalog;
let certificate: TestCertificate;
let replica: CatalogReplica;
let fronts: { catalog: TlsFront; s3: TlsFront; dynamo: TlsFront };
let proxy: ForwardProxy;

beforeAll(async () => {
  catalog = generateCatalog({ commits: 5, seed: 307 });
  certificate = selfSignedCertificate();
  const catalogFront = await TlsFront.start(certificate);
  replica = await CatalogReplica.start({ catalog, publicOrigin: catalogFront.origin });
  catalogFront.target = replica.origin;
  const { s3Endpoint, dynamoEndpoint } = (await SyncHarness.create()).services;
  fronts = {
    catalog: catalogFront,
    s3: await TlsFront.start(certificate, s3Endpoint),
    dynamo: await TlsFront.start(certificate, dynamoEndpoint),
  };
  proxy = await ForwardProxy.start();
});
afterAll(async () => {
  await Promise.all([proxy.stop(), ...Object.values(fronts).map((front) => front.stop()), replica.stop()]);
  certificate.dispose();
});

/** `catalog-sync run` on DynamoDB and S3, every origin https and reached through the proxy only. */
async function runThroughProxy(harness: SyncHarness, extraEnv: Record<string, string>) {
  return runCli(
    [
      'run',
      '--source',
      replica.serviceIndexUrl.replace(replica.origin, fronts.catalog.origin),
      '--cursor-table',
      harness.table,
      '--bucket',
      harness.bucket,
      '--max-commits',
      '100',
      '--json',
    ],
    harness.env({
      AWS_ENDPOINT_URL_S3: fronts.s3.origin,
      AWS_ENDPOINT_URL_DYNAMODB: fronts.dynamo.origin,
      HTTPS_PROXY: proxy.url,
      AWS_MAX_ATTEMPTS: '1',
      ...extraEnv,
    }),
  );
}

describe('TLS through the proxy tunnel', () => {
  it('the catalog (undici), DynamoDB (SDK, hpagent) and the lean S3 PUTs: every TLS connection through a tunnel, the CA from NODE_EXTRA_CA_CERTS', async () => {
    const harness = await SyncHarness.create();
    const result = await runThroughProxy(harness, { NODE_EXTRA_CA_CERTS: certificate.certFile });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ commits: catalog.commits.length, caughtUp: true });
    for (const front of Object.values(fronts)) {
      expect(front.connections).toBeGreaterThan(0);
      // Each TLS connection the origin accepted is one the proxy relayed: none went around it.
      expect(proxy.tlsTunnels.filter((tunnel) => tunnel === front.host)).toHaveLength(front.connections);
    }
    // Nothing in the clear: the proxy read no request (it cannot inside TLS).
    expect(proxy.requests).toEqual([]);
    expect(new Set(fronts.catalog.requests.map((r) => r.method))).toEqual(new Set(['GET']));
    expect(new Set(fronts.dynamo.requests.map((r) => r.method))).toEqual(new Set(['POST']));
    const put = fronts.s3.requests
      .filter((r) => r.method === 'PUT')
      .map((r) => decodeURIComponent(r.path.split('?')[0]!).replace(`/${harness.bucket}/`, ''));
    const stored = await harness.keys();
    expect(stored.length).toBeGreaterThan(catalog.commits.length * 2);
    expect([...new Set(put)].sort()).toEqual([...stored].sort());
    expect(await harness.verify(catalog, fronts.catalog.origin, commitTicks(catalog, -1))).toEqual([]);
  });

  it('without the CA the certificate is refused: the run fails and stores nothing', async () => {
    const harness = await SyncHarness.create();
    const result = await runThroughProxy(harness, {});
    // A setting to correct (exit 2), naming the endpoint's variable and what to set.
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `AWS_ENDPOINT_URL_DYNAMODB: the TLS certificate of "${fronts.dynamo.origin}" is not trusted (DEPTH_ZERO_SELF_SIGNED_CERT)`,
    );
    expect(result.stderr).toContain('NODE_EXTRA_CA_CERTS');
    expect(await harness.keys()).toEqual([]);
  });

  it('the catalog client refusing the certificate says which host and what to set, at once: another attempt would be refused the same', async () => {
    const http = new HttpClient({ retry: { ...FAST_RETRY, attempts: 3 }, proxyEnv: { HTTPS_PROXY: proxy.url } });
    const tunnelsBefore = proxy.tlsTunnels.length;
    http.allowOrigin(fronts.catalog.origin);
    try {
      const error = await http.get(`${fronts.catalog.origin}/v3/index.json`, { maxBytes: 1 << 20 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(FetchError);
      expect((error as FetchError).message).toContain(
        `Hint: the TLS certificate of ${fronts.catalog.host} is not trusted (DEPTH_ZERO_SELF_SIGNED_CERT)`,
      );
      expect(proxy.tlsTunnels.at(-1)).toBe(fronts.catalog.host);
      expect((error as FetchError).attempts).toBe(1);
      expect(proxy.tlsTunnels.length - tunnelsBefore).toBe(1);
    } finally {
      await http.close();
    }
  });
});
