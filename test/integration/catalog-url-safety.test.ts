/**
 * A service index naming an unsafe catalog URL, through the real CatalogClient against the replica: the
 * source is reached as `localhost`, the index names instance metadata (169.254.169.254), and discovery fails
 * naming both URLs before any request leaves for the catalog URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogClient } from '../../lambda/catalog/catalog-client.js';
import { UnsafeCatalogUrlError } from '../../lambda/catalog/catalog-url-safety.js';
import { HttpClient } from '../../lambda/catalog/http-client.js';
import type { GetOptions, HttpResponse } from '../../lambda/catalog/http-options.js';
import { generateCatalog } from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';

/** An HttpClient that records every URL it is asked to GET, in order. */
class RecordingHttpClient extends HttpClient {
  readonly urls: string[] = [];
  override get(url: string, options: GetOptions): Promise<HttpResponse> {
    this.urls.push(url);
    return super.get(url, options);
  }
}

let replica: CatalogReplica;
beforeAll(async () => {
  replica = await CatalogReplica.start({ catalog: generateCatalog({ commits: 2, seed: 808 }) });
});
afterAll(() => replica.stop());

/** The service index as the replica serves it, with its catalog resource pointing at `catalogUrl`. */
function serviceIndexNaming(catalogUrl: string): string {
  const index = JSON.parse(replica.documentAt('/v3/index.json')) as { resources: Array<Record<string, unknown>> };
  for (const resource of index.resources)
    if (String(resource['@type']).startsWith('Catalog/')) resource['@id'] = catalogUrl;
  return JSON.stringify(index);
}

describe('a service index naming an unsafe catalog URL', () => {
  it('is refused before the catalog URL is requested, naming both URLs and why', async () => {
    const source = replica.serviceIndexUrl.replace('127.0.0.1', 'localhost');
    replica.overrideBody(
      '/v3/index.json',
      serviceIndexNaming('http://169.254.169.254/latest/meta-data/iam/security-credentials/'),
      { times: 1 },
    );
    // Short timeouts and one attempt: without the check, the old code fails fast instead of waiting on a
    // connection that cannot be made here.
    const http = new RecordingHttpClient({
      connectTimeoutMs: 1_000,
      retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1, maxRetryAfterMs: 1 },
    });
    try {
      const error = await new CatalogClient(http, source).getIndex().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnsafeCatalogUrlError);
      expect((error as Error).message).toBe(
        `${source}: the catalog URL it names, http://169.254.169.254/latest/meta-data/iam/security-credentials/, is refused: ` +
          `it names a link-local address (where instance and container metadata live), which the source (${source}) is not`,
      );
      expect(http.urls).toEqual([source]);
      expect(http.allowedOrigins()).toEqual([]);
    } finally {
      await http.close();
    }
  });

  it('a loopback source naming a loopback catalog is followed (how the tests run)', async () => {
    const http = new HttpClient();
    try {
      const client = new CatalogClient(http, replica.serviceIndexUrl.replace('127.0.0.1', 'localhost'));
      expect(await client.resolveIndexUrl()).toBe(replica.catalogIndexUrl);
      expect((await client.getIndex()).items.length).toBeGreaterThan(0);
    } finally {
      await http.close();
    }
  });
});
