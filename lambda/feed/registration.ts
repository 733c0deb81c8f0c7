/**
 * A package's registration (`RegistrationsBaseUrl/3.6.0`), as nuget.org lays it out and NuGet.Protocol reads it:
 * an index whose pages hold 64 versions each, inline when the package has at most 127 versions, separate documents
 * (`page/{n}.json`) above that. A page keeps its number as versions come, so a new version rewrites the last page
 * only, and a client holding an older index never meets a page that is gone unless versions were deleted.
 */
import type { FeedKeys, FeedUrls } from './feed-keys.js';
import type { FeedStorage } from './feed-storage.js';
import { FeedError } from './errors.js';
import { comparableVersion } from '../contract/identity.js';

/** Versions in a page. */
export const PAGE_VERSIONS = 64;
/** Most versions whose pages are inline in the index. */
export const MOST_INLINE_VERSIONS = 127;

/** One version's item of a page: `@id`, `@type`, `commitTimeStamp`, `catalogEntry`, `packageContent`, `registration`. */
export type RegistrationItem = Readonly<Record<string, unknown>>;

/** The registration item of a version, whose `catalogEntry` is the leaf's (see `catalogEntryOf`). */
export function registrationItem(
  urls: FeedUrls,
  id: string,
  version: string,
  commitTimeStamp: string,
  catalogEntry: Record<string, unknown>,
): RegistrationItem {
  return {
    '@id': urls.registrationLeaf(id, version),
    '@type': 'Package',
    commitTimeStamp,
    catalogEntry,
    packageContent: catalogEntry['packageContent'],
    registration: urls.registrationIndex(id),
  };
}

/** A package's registration as stored: the index, and its separate pages (none when inline), by number. */
export interface StoredRegistration {
  readonly index?: Buffer;
  readonly pages: ReadonlyMap<number, Buffer>;
  /** Items of every version the stored documents list, by identity version. */
  readonly items: ReadonlyMap<string, RegistrationItem>;
}

/** Reads a package's registration, so its unchanged items are kept and unchanged documents not written again. */
export async function readRegistration(storage: FeedStorage, keys: FeedKeys, id: string): Promise<StoredRegistration> {
  const indexKey = keys.registrationIndex(id);
  const stored = await storage.read(indexKey);
  const items = new Map<string, RegistrationItem>();
  const pages = new Map<number, Buffer>();
  if (stored === undefined) return { pages, items };
  const index = parseDocument(stored.bytes, `${storage.where} ${indexKey}`);
  const entries = Array.isArray(index['items']) ? (index['items'] as Record<string, unknown>[]) : [];
  for (const [n, entry] of entries.entries()) {
    let page = entry;
    if (!Array.isArray(entry['items'])) {
      const pageKey = keys.registrationPage(id, n);
      const pageBytes = await storage.read(pageKey);
      if (pageBytes === undefined) continue;
      pages.set(n, pageBytes.bytes);
      page = parseDocument(pageBytes.bytes, `${storage.where} ${pageKey}`);
    }
    for (const item of Array.isArray(page['items']) ? (page['items'] as RegistrationItem[]) : []) {
      const version = (item['catalogEntry'] as Record<string, unknown> | undefined)?.['version'];
      if (typeof version === 'string') items.set(comparableVersion(version), item);
    }
  }
  return { index: stored.bytes, pages, items };
}

/** The documents of a package's registration listing `items` (lowest version first). */
export function registrationDocuments(
  urls: FeedUrls,
  id: string,
  commitTimeStamp: string,
  items: readonly { readonly version: string; readonly item: RegistrationItem }[],
): { readonly index: Buffer; readonly pages: readonly Buffer[] } {
  const indexUrl = urls.registrationIndex(id);
  const chunks: (typeof items)[] = [];
  for (let at = 0; at < items.length; at += PAGE_VERSIONS) chunks.push(items.slice(at, at + PAGE_VERSIONS));
  const inline = items.length <= MOST_INLINE_VERSIONS;
  const pages: Buffer[] = [];
  const entries = chunks.map((chunk, n) => {
    const bounds = { lower: chunk[0]!.version, upper: chunk[chunk.length - 1]!.version };
    const pageItems = chunk.map(({ item }) => item);
    if (inline)
      return {
        '@id': `${indexUrl}#page/${bounds.lower}/${bounds.upper}`,
        '@type': 'catalog:CatalogPage',
        count: chunk.length,
        items: pageItems,
        parent: indexUrl,
        ...bounds,
      };
    const pageUrl = urls.registrationPage(id, n);
    const page = {
      '@id': pageUrl,
      '@type': 'catalog:CatalogPage',
      commitTimeStamp,
      count: chunk.length,
      items: pageItems,
      parent: indexUrl,
      ...bounds,
    };
    pages.push(Buffer.from(JSON.stringify(page)));
    return { '@id': pageUrl, '@type': 'catalog:CatalogPage', commitTimeStamp, count: chunk.length, ...bounds };
  });
  const index = {
    '@id': indexUrl,
    '@type': ['catalog:CatalogRoot', 'PackageRegistration', 'catalog:Permalink'],
    commitTimeStamp,
    count: entries.length,
    items: entries,
  };
  return { index: Buffer.from(JSON.stringify(index)), pages };
}

/**
 * Writes a package's registration over the stored one: changed pages first, then the index (so an index never names
 * a page that is not there yet), then the pages past its end removed. No versions: the documents removed (a 404, as
 * for an id the source never had).
 */
export async function writeRegistration(
  storage: FeedStorage,
  keys: FeedKeys,
  id: string,
  stored: StoredRegistration,
  documents: { readonly index: Buffer; readonly pages: readonly Buffer[] } | undefined,
): Promise<number> {
  let writes = 0;
  const pages = documents?.pages ?? [];
  for (const [n, bytes] of pages.entries()) {
    if (stored.pages.get(n)?.equals(bytes)) continue;
    await storage.put(keys.registrationPage(id, n), bytes, 'json');
    writes++;
  }
  if (documents === undefined) {
    if (stored.index !== undefined) await storage.delete(keys.registrationIndex(id));
  } else if (!stored.index?.equals(documents.index)) {
    await storage.put(keys.registrationIndex(id), documents.index, 'json');
    writes++;
  }
  for (const n of stored.pages.keys()) if (n >= pages.length) await storage.delete(keys.registrationPage(id, n));
  return writes;
}

function parseDocument(bytes: Buffer, where: string): Record<string, unknown> {
  try {
    const value = JSON.parse(bytes.toString('utf8')) as unknown;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch (cause) {
    throw new FeedError(`${where}: not valid JSON`, { cause });
  }
  throw new FeedError(`${where}: not a registration document (a JSON object)`);
}
