/**
 * The feed-wide documents and settings: the service index (absolute URLs under the base URL: NuGet refuses relative
 * ones) and `feed-state/settings.json`, which records the base URL the documents were written for, so that a feed
 * is never half under one base URL and half under another.
 */
import { FeedError } from './errors.js';
import type { FeedKeys, FeedUrls } from './feed-keys.js';
import type { FeedStorage } from './feed-storage.js';
import { ensureVulnerabilityDocuments } from './vulnerabilities.js';

/** The resource types the service index offers: restore needs the first and the last, metadata the registration. */
export const FEED_RESOURCE_TYPES = {
  packageBaseAddress: 'PackageBaseAddress/3.0.0',
  registrations: 'RegistrationsBaseUrl/3.6.0',
  vulnerabilityInfo: 'VulnerabilityInfo/6.7.0',
} as const;

/** The service index of a feed. */
export function serviceIndexOf(urls: FeedUrls): Buffer {
  return Buffer.from(
    JSON.stringify({
      version: '3.0.0',
      resources: [
        {
          '@id': urls.flatContainer(),
          '@type': FEED_RESOURCE_TYPES.packageBaseAddress,
          comment: 'Packages and their version lists, mirrored from the catalog',
        },
        {
          '@id': urls.registrationsBase(),
          '@type': FEED_RESOURCE_TYPES.registrations,
          comment: 'Package metadata: listed, deprecation and vulnerabilities, as the catalog leaves say',
        },
        {
          '@id': urls.vulnerabilityIndex(),
          '@type': FEED_RESOURCE_TYPES.vulnerabilityInfo,
          comment: "Known vulnerabilities of the feed's packages, from the catalog leaves",
        },
      ],
    }),
  );
}

/** `feed-state/settings.json`. */
export interface FeedSettings {
  readonly baseUrl: string;
}

/**
 * Checks (or records, for a new feed) the base URL, and writes the service index and the vulnerability documents
 * where they are missing or differ. Resolves once the base URL is checked, with the writes under way in `written`
 * (they name no package: a batch's packages need not wait for them; the feed settles them before a batch ends).
 *
 * @throws {@link FeedError} when the feed was written for another base URL and `rebase` is not set.
 */
export async function setUpFeed(
  storage: FeedStorage,
  keys: FeedKeys,
  urls: FeedUrls,
  options: { readonly rebase?: boolean; readonly now: number },
): Promise<{ readonly written: Promise<void> }> {
  const settingsKey = keys.settings();
  const stored = await storage.read(settingsKey);
  let settings: Partial<FeedSettings> | undefined;
  try {
    settings = stored === undefined ? undefined : (JSON.parse(stored.bytes.toString('utf8')) as Partial<FeedSettings>);
  } catch (cause) {
    throw new FeedError(`${storage.where} ${settingsKey}: not valid JSON`, { cause });
  }
  if (settings !== undefined && settings.baseUrl !== urls.base && options.rebase !== true)
    throw new FeedError(
      `${storage.where} ${keys.root}: the feed was written for the base URL ${settings.baseUrl}, not ${urls.base}: rebuild it for the new one (catalog-sync feed --rebuild), or give the same base URL`,
      { setting: 'baseUrl' },
    );
  const bytes = Buffer.from(JSON.stringify({ baseUrl: urls.base } satisfies FeedSettings));
  const written = (async () => {
    // Side by side; the service index written last, once the documents it names are.
    const index = serviceIndexOf(urls);
    const [, , current] = await Promise.all([
      stored?.bytes.equals(bytes) ? undefined : storage.put(settingsKey, bytes, 'json'),
      ensureVulnerabilityDocuments(storage, keys, urls, options.now),
      storage.read(keys.serviceIndex()),
    ]);
    if (!current?.bytes.equals(index)) await storage.put(keys.serviceIndex(), index, 'json');
  })();
  written.catch(() => undefined);
  return { written };
}
