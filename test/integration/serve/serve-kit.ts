/**
 * What the tests of `catalog-sync serve` share: a mirror folder holding a small feed (written through the folder's own
 * snapshot store, so escaped and portable folders get their file names), and raw HTTP requests that send a target
 * exactly as given (no client normalises `..` or re-encodes it first).
 */
import { request } from 'node:http';
import { openLocalStores } from '../../../lambda/stores/local-store.js';
import { buildNupkg } from '../../../testkit/nupkg.js';

/** One answer, read whole. */
export interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
}

/** Sends `method target` to `origin` as is (the target may be `*`, absolute, or hold `..` and backslashes). */
export function rawRequest(
  origin: string,
  target: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<RawAnswer> {
  const url = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: Number(url.port),
        method: options.method ?? 'GET',
        path: target,
        headers: options.headers ?? {},
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The service index of a feed written for `baseUrl`: absolute URLs, as NuGet needs. */
export function serviceIndex(baseUrl: string): Buffer {
  return Buffer.from(
    JSON.stringify({
      version: '3.0.0',
      resources: [
        { '@id': `${baseUrl}flat/`, '@type': 'PackageBaseAddress/3.0.0' },
        { '@id': `${baseUrl}registration/`, '@type': 'RegistrationsBaseUrl/3.6.0' },
      ],
    }),
  );
}

/** The small feed {@link writeFeed} writes: each key under `{prefix}feed/` and its bytes. */
export interface WrittenFeed {
  readonly files: ReadonlyMap<string, Buffer>;
  /** The one package's path under the feed (`flat/…/….nupkg`). */
  readonly packagePath: string;
}

/**
 * Writes a small feed for `baseUrl` into the mirror folder `root` under `prefix`, through the folder's snapshot store
 * (`caseInsensitive` makes a new folder portable, as on macOS and Windows): a service index, the flat container of
 * one package `id` (its versions and a real `.nupkg`), and its registration index.
 */
export async function writeFeed(
  root: string,
  o: { prefix: string; baseUrl: string; id?: string; caseInsensitive?: boolean },
): Promise<WrittenFeed> {
  const id = o.id ?? 'Demo.Served';
  const lower = id.toLowerCase();
  const packagePath = `flat/${lower}/1.0.0/${lower}.1.0.0.nupkg`;
  const files = new Map<string, Buffer>([
    ['index.json', serviceIndex(o.baseUrl)],
    [`flat/${lower}/index.json`, Buffer.from(JSON.stringify({ versions: ['1.0.0'] }))],
    [packagePath, buildNupkg({ id, version: '1.0.0', fillerBytes: 20_000 })],
    [`registration/${lower}/index.json`, Buffer.from(JSON.stringify({ count: 0, items: [] }))],
  ]);
  const { snapshots } = openLocalStores(root, { caseInsensitive: o.caseInsensitive === true });
  for (const [path, bytes] of files) await snapshots.putLeaf(`${o.prefix}feed/${path}`, bytes);
  return { files, packagePath };
}
