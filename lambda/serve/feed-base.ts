/**
 * Where a feed was written to be read from, against where it is served. A feed's documents hold absolute URLs (NuGet
 * refuses relative ones), written with the base URL the operator gave the feed; the server serves the bytes as they
 * are, so a client that reads the service index here follows its URLs to that base. The service index is what every
 * client reads first, so its resources' URLs are the record that counts: their base is the part before the feed's
 * top folders (`flat/`, `registration/`, `vulnerabilities/`), or their origin when they name none of those.
 */
import { FEED_FOLDER } from './feed-request.js';

/** The feed's top folders a service index's resources point into (docs/contract.md, "The feed"). */
const TOP_FOLDERS = ['flat/', 'registration/', 'vulnerabilities/'] as const;

/** Addresses that listen on every interface: the URL clients use then names the machine, not the address. */
const WILDCARDS = new Set(['0.0.0.0', '::', '[::]']);

/** Where a server listens, as clients reach it. */
export interface ServedPlace {
  /** `http://HOST:PORT/`, with the machine's name for a wildcard address. */
  readonly baseUrl: string;
  /** Listening on every interface (`0.0.0.0`, `::`): any host name of the machine reaches it. */
  readonly wildcard: boolean;
  readonly port: number;
}

/** The place of a server listening on `host`:`port`; `machineName` stands for a wildcard address. */
export function servedPlace(host: string, port: number, machineName: string): ServedPlace {
  const wildcard = WILDCARDS.has(host);
  const name = wildcard ? machineName : host;
  const literal = name.includes(':') && !name.startsWith('[') ? `[${name}]` : name;
  // Through URL, as the feed's own URLs are read: port 80 left out, the host in lower case.
  return { baseUrl: new URL(`http://${literal}:${port}/`).href, wildcard, port };
}

/** What the service index says of the place it was written for. */
export interface FeedBaseCheck {
  /** The bases its resources' URLs are written for, each once, in the order met. */
  readonly bases: readonly string[];
  /** Those that are not where it is served (empty when the feed is served where it was written for). */
  readonly elsewhere: readonly string[];
  /** What is wrong with the service index itself (not JSON, no resources, a relative URL), if anything. */
  readonly problem?: string;
}

/** Compares the URLs of a service index (`bytes`) with the place it is served at. */
export function checkFeedBase(bytes: Buffer, served: ServedPlace): FeedBaseCheck {
  let index: unknown;
  try {
    index = JSON.parse(bytes.toString('utf8').replace(/^\uFEFF/, ''));
  } catch (error) {
    return { bases: [], elsewhere: [], problem: `it is not JSON (${(error as Error).message})` };
  }
  const resources = (index as { resources?: unknown } | null)?.resources;
  if (!Array.isArray(resources)) return { bases: [], elsewhere: [], problem: 'it has no resources array' };
  const bases: string[] = [];
  for (const resource of resources) {
    const id = (resource as Record<string, unknown> | null)?.['@id'];
    if (typeof id !== 'string') continue;
    const base = baseOf(id);
    if (base === undefined)
      return { bases, elsewhere: [], problem: `resource ${JSON.stringify(id)} is not an absolute http(s) URL` };
    if (!bases.includes(base)) bases.push(base);
  }
  return { bases, elsewhere: bases.filter((base) => !servedAt(base, served)) };
}

/** The base a resource URL was written for: up to its first top folder of the feed, or its origin. */
function baseOf(id: string): string | undefined {
  let url: URL;
  try {
    url = new URL(id);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  const path = url.pathname;
  const at = Math.min(
    ...TOP_FOLDERS.map((folder) => path.indexOf(`/${folder}`)).map((i) => (i < 0 ? Number.POSITIVE_INFINITY : i)),
  );
  return `${url.origin}${Number.isFinite(at) ? path.slice(0, at + 1) : '/'}`;
}

/** Whether a base is the served place: the same URL, or, on a wildcard address, any host with the same scheme and port. */
function servedAt(base: string, served: ServedPlace): boolean {
  if (base === served.baseUrl) return true;
  if (!served.wildcard) return false;
  const url = new URL(base);
  const port = url.port === '' ? 80 : Number(url.port);
  return url.protocol === 'http:' && port === served.port && url.pathname === '/';
}

/** The key of the service index under `prefix` (what `serve` needs to find before it starts). */
export function serviceIndexKey(prefix: string): string {
  return `${prefix}${FEED_FOLDER}index.json`;
}
