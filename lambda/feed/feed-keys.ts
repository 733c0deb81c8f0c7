/**
 * The feed's key layout (contract.md, "Serving the feed"): what NuGet clients read under `{prefix}feed/`, the feed's
 * bookkeeping under `{prefix}feed-state/`, and the URLs the documents name, made from the base URL the operator
 * gives (the URL at which `{prefix}feed/` is served). Key segments are the mirror's: `{lowerid}` and
 * `{lowerversion}` are the id lowercased and the NuGet normalized version without build metadata, lowercased, each
 * percent-encoded outside `a-z 0-9 . _ -` (which leaves every id and version nuget.org publishes as it is, so a key is
 * the path NuGet asks for).
 */
import { FEED_FOLDER, FEED_STATE_FOLDER } from '../contract/feed.js';
import { encodeKeySegment, idSegment } from '../contract/identity.js';
import { FeedError } from './errors.js';

/** Vulnerability pages: NuGet reads at most 16 (VulnerabilityInfo/6.7.0); packages are spread over them by id. */
export const VULNERABILITY_PAGES = 16;

/** The keys of one feed under a mirror's prefix. */
export class FeedKeys {
  /** `{prefix}feed/` */
  readonly root: string;
  /** `{prefix}feed-state/` */
  readonly state: string;

  constructor(readonly prefix: string) {
    this.root = `${prefix}${FEED_FOLDER}`;
    this.state = `${prefix}${FEED_STATE_FOLDER}`;
  }

  /** `feed/index.json`: the service index. */
  serviceIndex(): string {
    return `${this.root}index.json`;
  }

  /** `feed/flat/{lowerid}/index.json`: the versions of a package. */
  flatIndex(id: string): string {
    return `${this.root}flat/${idSegment(id)}/index.json`;
  }

  /** `feed/flat/{lowerid}/{lowerversion}/{lowerid}.{lowerversion}.nupkg`; `version` is the identity form. */
  nupkg(id: string, version: string): string {
    const lowerId = idSegment(id);
    const lowerVersion = encodeKeySegment(version);
    return `${this.root}flat/${lowerId}/${lowerVersion}/${lowerId}.${lowerVersion}.nupkg`;
  }

  /** `feed/registration/{lowerid}/index.json`. */
  registrationIndex(id: string): string {
    return `${this.root}registration/${idSegment(id)}/index.json`;
  }

  /** `feed/registration/{lowerid}/page/{n}.json`: a page of 64 versions of a package of more than 127. */
  registrationPage(id: string, page: number): string {
    return `${this.root}registration/${idSegment(id)}/page/${page}.json`;
  }

  /** `feed/vulnerabilities/index.json`. */
  vulnerabilityIndex(): string {
    return `${this.root}vulnerabilities/index.json`;
  }

  /** `feed/vulnerabilities/page-{n}.json`. */
  vulnerabilityPage(page: number): string {
    return `${this.root}vulnerabilities/page-${page}.json`;
  }

  /** `feed-state/settings.json`: the base URL the documents were written for. */
  settings(): string {
    return `${this.state}settings.json`;
  }

  /** `feed-state/packages/{lowerid}.json`: what the feed holds of a package; its compare-and-swap is the package's guard. */
  packageState(id: string): string {
    return `${this.state}packages/${idSegment(id)}.json`;
  }

  /** `feed-state/waiting/`: one marker per package with a version the source did not serve yet. */
  waitingFolder(): string {
    return `${this.state}waiting/`;
  }

  /** `feed-state/waiting/{lowerid}.json`. */
  waiting(id: string): string {
    return `${this.waitingFolder()}${idSegment(id)}.json`;
  }

  /** `feed-state/quarantine/{lowerid}/{lowerversion}.json`: a package whose bytes were not the leaf's, never stored. */
  quarantine(id: string, version: string): string {
    return `${this.state}quarantine/${idSegment(id)}/${encodeKeySegment(version)}.json`;
  }

  /** `feed-state/quarantine/`. */
  quarantineFolder(): string {
    return `${this.state}quarantine/`;
  }
}

/** The URLs the feed's documents name, under the base URL at which `{prefix}feed/` is served. */
export class FeedUrls {
  /** The base URL, ending in `/`. */
  readonly base: string;

  /** @throws {@link FeedError} for a base URL that is not an absolute http(s) URL without query or fragment. */
  constructor(baseUrl: string) {
    this.base = checkBaseUrl(baseUrl);
  }

  serviceIndex(): string {
    return `${this.base}index.json`;
  }
  flatContainer(): string {
    return `${this.base}flat/`;
  }
  registrationsBase(): string {
    return `${this.base}registration/`;
  }
  nupkg(id: string, version: string): string {
    const lowerId = idSegment(id);
    const lowerVersion = encodeKeySegment(version);
    return `${this.base}flat/${lowerId}/${lowerVersion}/${lowerId}.${lowerVersion}.nupkg`;
  }
  registrationIndex(id: string): string {
    return `${this.base}registration/${idSegment(id)}/index.json`;
  }
  registrationPage(id: string, page: number): string {
    return `${this.base}registration/${idSegment(id)}/page/${page}.json`;
  }
  /** Where nuget.org has a registration leaf; the feed writes none (no NuGet code reads one): a name, not a document. */
  registrationLeaf(id: string, version: string): string {
    return `${this.base}registration/${idSegment(id)}/${encodeKeySegment(version)}.json`;
  }
  vulnerabilityIndex(): string {
    return `${this.base}vulnerabilities/index.json`;
  }
  vulnerabilityPage(page: number): string {
    return `${this.base}vulnerabilities/page-${page}.json`;
  }
}

/**
 * The base URL as the documents use it: absolute (NuGet refuses a service index with relative URLs), http or https,
 * without credentials, query or fragment, ending in `/`.
 *
 * @throws {@link FeedError} naming what is wrong.
 */
export function checkBaseUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new FeedError(
      `base URL ${JSON.stringify(text)} is not an absolute URL (NuGet needs absolute URLs in a feed)`,
      { setting: 'baseUrl' },
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new FeedError(`base URL ${JSON.stringify(text)} must be an http or https URL`, { setting: 'baseUrl' });
  if (url.username !== '' || url.password !== '')
    throw new FeedError(`base URL ${JSON.stringify(url.origin)}: credentials do not belong in a feed's URLs`, {
      setting: 'baseUrl',
    });
  if (url.search !== '' || url.hash !== '')
    throw new FeedError(
      `base URL ${JSON.stringify(text)} must have no query or fragment (the documents append paths)`,
      { setting: 'baseUrl' },
    );
  return url.href.endsWith('/') ? url.href : `${url.href}/`;
}
