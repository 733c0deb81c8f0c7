/**
 * The feed's `VulnerabilityInfo/6.7.0` resource, from the catalog leaves' `vulnerabilities`: an index of
 * {@link VULNERABILITY_PAGES} pages (NuGet reads at most 16 and adds them up), each holding the packages whose
 * lowercased id hashes to it (FNV-1a), `{ "{lowerid}": [{ url, severity, versions }] }`. Each vulnerable version is
 * an exact range `[v, v]`: a leaf says which versions an advisory hits, not the advisory's range, and a range
 * spanning them would flag versions in between that the catalog never flagged.
 *
 * Always published, with `{}` for a page with nothing (NuGet 7.9 cannot read the documented `[]`): the mirror knows
 * that none of the feed's packages has a known vulnerability, so restore's audit says nothing, rather than passing
 * silently without data (no resource) or warning NU1905 where the feed is an audit source.
 *
 * Pages keep their names; a page is rewritten with a compare-and-swap (packages of one page change together under
 * no lock), then its `@updated` in the index.
 */
import { fnv1a32 } from '../view/leaf-record.js';
import type { FeedKeys, FeedUrls } from './feed-keys.js';
import { VULNERABILITY_PAGES } from './feed-keys.js';
import type { FeedStorage } from './feed-storage.js';
import { FeedError } from './errors.js';

/** One advisory of one version, as a page lists it. */
export interface VulnerabilityEntry {
  readonly url: string;
  /** 0 low, 1 moderate, 2 high, 3 critical; -1 for a severity the leaf gave otherwise (NuGet: "unknown"). */
  readonly severity: number;
  /** `[v, v]`. */
  readonly versions: string;
}

/** A compare-and-swap that keeps failing this often means something else writes the page in a loop. */
const MAX_ATTEMPTS = 20;

/** The page of a package. */
export function vulnerabilityPageOf(lowerId: string): number {
  return fnv1a32(lowerId) % VULNERABILITY_PAGES;
}

/** The entries of a package's stored versions (lowest first), from the view's `vulnerabilities` of each. */
export function vulnerabilityEntriesOf(
  versions: readonly {
    readonly version: string;
    readonly vulnerabilities?: readonly Readonly<Record<string, unknown>>[];
  }[],
): VulnerabilityEntry[] {
  const entries: VulnerabilityEntry[] = [];
  for (const { version, vulnerabilities } of versions)
    for (const vulnerability of vulnerabilities ?? []) {
      const url = vulnerability['advisoryUrl'];
      if (typeof url !== 'string' || !URL.canParse(url)) continue;
      entries.push({ url, severity: severityOf(vulnerability['severity']), versions: `[${version}, ${version}]` });
    }
  return entries;
}

/** The leaves' severity (`"2"`, or 2) as the page's number 0–3; anything else -1. */
export function severityOf(value: unknown): number {
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
  return /^[0-3]$/.test(text) ? Number(text) : -1;
}

/** The index naming every page with the time it last changed (epoch ms). */
export function vulnerabilityIndex(urls: FeedUrls, updated: readonly number[]): Buffer {
  return Buffer.from(
    JSON.stringify(
      updated.map((at, page) => ({
        '@name': `page-${page}`,
        '@id': urls.vulnerabilityPage(page),
        '@updated': new Date(at).toISOString(),
      })),
    ),
  );
}

/** Writes the pages and the index where they are missing (a new feed): empty pages `{}`, then the index. */
export async function ensureVulnerabilityDocuments(
  storage: FeedStorage,
  keys: FeedKeys,
  urls: FeedUrls,
  now: number,
): Promise<void> {
  // The pages side by side (each its own key), then the index that names them.
  await Promise.all(
    Array.from({ length: VULNERABILITY_PAGES }, async (_, page) => {
      if ((await storage.read(keys.vulnerabilityPage(page))) === undefined)
        await storage.writeIf(keys.vulnerabilityPage(page), Buffer.from('{}'), undefined);
    }),
  );
  const index = await storage.read(keys.vulnerabilityIndex());
  const expected = vulnerabilityIndex(urls, updatedTimes(index?.bytes, now));
  if (!index?.bytes.equals(expected)) await storage.put(keys.vulnerabilityIndex(), expected, 'json');
}

/**
 * Sets each package's entries (an empty list removes it) on its page, one compare-and-swap per page changed, then
 * the changed pages' `@updated` in the index. Returns the pages written.
 */
export async function applyVulnerabilities(
  storage: FeedStorage,
  keys: FeedKeys,
  urls: FeedUrls,
  changes: ReadonlyMap<string, readonly VulnerabilityEntry[]>,
  now: number,
): Promise<number> {
  const byPage = new Map<number, [string, readonly VulnerabilityEntry[]][]>();
  for (const [lowerId, entries] of changes) {
    const page = vulnerabilityPageOf(lowerId);
    const list = byPage.get(page) ?? [];
    list.push([lowerId, entries]);
    byPage.set(page, list);
  }
  // The pages side by side: each is its own key with its own compare-and-swap.
  const changed = await Promise.all(
    [...byPage].map(async ([page, list]) =>
      (await applyToPage(storage, keys.vulnerabilityPage(page), list)) ? page : -1,
    ),
  );
  const written = changed.filter((page) => page >= 0);
  if (written.length > 0) {
    for (let attempt = 0; ; attempt++) {
      const index = await storage.read(keys.vulnerabilityIndex());
      const updated = updatedTimes(index?.bytes, now);
      for (const page of written) updated[page] = now;
      if (await storage.writeIf(keys.vulnerabilityIndex(), vulnerabilityIndex(urls, updated), index?.tag)) break;
      if (attempt >= MAX_ATTEMPTS) throw lostTooOften(storage, keys.vulnerabilityIndex());
    }
  }
  return written.length;
}

async function applyToPage(
  storage: FeedStorage,
  key: string,
  list: readonly [string, readonly VulnerabilityEntry[]][],
): Promise<boolean> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const stored = await storage.read(key);
    const page = stored === undefined ? {} : parsePage(stored.bytes, `${storage.where} ${key}`);
    for (const [lowerId, entries] of list) {
      if (entries.length === 0) delete page[lowerId];
      else page[lowerId] = entries;
    }
    const sorted = Object.fromEntries(Object.entries(page).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    const bytes = Buffer.from(JSON.stringify(sorted));
    if (stored?.bytes.equals(bytes)) return false;
    if (await storage.writeIf(key, bytes, stored?.tag)) return true;
  }
  throw lostTooOften(storage, key);
}

function parsePage(bytes: Buffer, where: string): Record<string, readonly VulnerabilityEntry[]> {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (cause) {
    throw new FeedError(`${where}: not valid JSON`, { cause });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new FeedError(`${where}: not a vulnerability page (a JSON object of ids)`);
  return value as Record<string, readonly VulnerabilityEntry[]>;
}

/** The `@updated` of each page in a stored index (epoch ms), `now` for a page it lacks. */
function updatedTimes(bytes: Buffer | undefined, now: number): number[] {
  const times = Array.from({ length: VULNERABILITY_PAGES }, () => now);
  if (bytes === undefined) return times;
  try {
    const entries = JSON.parse(bytes.toString('utf8')) as { '@name'?: unknown; '@updated'?: unknown }[];
    for (const entry of Array.isArray(entries) ? entries : []) {
      const page = /^page-(\d+)$/.exec(String(entry['@name']))?.[1];
      const at = Date.parse(String(entry['@updated']));
      if (page !== undefined && Number(page) < VULNERABILITY_PAGES && Number.isFinite(at)) times[Number(page)] = at;
    }
  } catch {
    // A damaged index is written again whole.
  }
  return times;
}

function lostTooOften(storage: FeedStorage, key: string): FeedError {
  return new FeedError(
    `${storage.where} ${key}: the conditional write lost ${MAX_ATTEMPTS} times in a row to other writers`,
  );
}
