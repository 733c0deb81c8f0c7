/**
 * The drift report of a private feed (`catalog-sync verify --feed`): the written feed compared with what the feed
 * engine would write now from the same source, the mirror's latest view and its stored leaves. For each package the
 * feed consumer has passed (a package whose view moved after the feed's cursor is pending, not drift): the versions
 * the view lists that the flat container index or the registration lacks, or shows otherwise (`listed`,
 * `deprecation`, `vulnerabilities`, `packageContent`), the versions the feed offers that the view does not list,
 * the stored `.nupkg` of every offered version against its leaf's `packageHash` (SHA-512) and `packageSize`, the
 * package's vulnerability page entry, and the service index. Versions the feed knows it lacks (waiting for the
 * source, quarantined) are reported, not counted as drift.
 */
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { Mirror } from '../consumer/mirror.js';
import { readConsumerCursor } from '../consumer/consumer-cursors.js';
import { FEED_CONSUMER } from '../contract/feed.js';
import { keepsId, type IdFilter } from '../contract/id-filter.js';
import { DEFAULT_CONCURRENCY } from '../contract/settings.js';
import { parseTimestamp } from '../contract/time.js';
import type { CursorStore } from '../stores/types.js';
import { FeedKeys, FeedUrls } from '../feed/feed-keys.js';
import { serviceIndexOf } from '../feed/feed-setup.js';
import type { FeedStorage } from '../feed/feed-storage.js';
import { readLeafPackage } from '../feed/leaf-package.js';
import { parseState, type PackageState } from '../feed/package-state.js';
import { readRegistration } from '../feed/registration.js';
import { vulnerabilityEntriesOf, vulnerabilityPageOf } from '../feed/vulnerabilities.js';
import { forEachBounded, limiter } from '../view/commit-leaves.js';
import { parseIndex } from '../view/guarded-write.js';
import { leafFieldsOf } from '../view/leaf-fields.js';
import type { PackageIndex, VersionEntry } from '../view/package-index.js';
import { packageIndexKey } from '../view/view-keys.js';

/** A package the audit hashes alone, not 8 at a time (its bytes are read whole: bounded by one large one). */
const LARGE_PACKAGE_BYTES = 5 * 1024 * 1024;
import type { FeedFinding } from './feed-findings.js';

/**
 * Packages read and hashed at once (each is held whole while hashed: at most this many × 5 MiB, plus one large one).
 */
export const PACKAGE_READS = 8;

/** The feed to audit and its source. */
export interface FeedAuditTarget {
  readonly storage: FeedStorage;
  /** The mirror: its latest view and leaves; the feed is under its prefix. */
  readonly mirror: Mirror;
  /** Where the feed consumer's cursor is. */
  readonly cursors: CursorStore;
  /** The packages the feed holds (the feed's `--include`/`--exclude`); default every package of the view. */
  readonly idFilter?: IdFilter;
  /** The feed consumer's name (default `feed`). */
  readonly consumer?: string;
  /** Packages audited at once (default the settings' `DEFAULT_CONCURRENCY`). */
  readonly concurrency?: number;
}

/** Options of {@link auditFeed}. */
export interface FeedAuditOptions {
  /** Told each finding as it is made. */
  readonly onFinding?: (finding: FeedFinding) => void;
  /** Audit only these packages (any spelling), e.g. those a repair made again. */
  readonly ids?: Iterable<string>;
}

/** What the audit covered and found. */
export interface FeedAuditSummary {
  /** The base URL the feed was written for; null: no feed here (`feed-state/settings.json` missing). */
  readonly baseUrl: string | null;
  /** The feed consumer's cursor (7 fractional digits); null when it has none (nothing judged). */
  readonly feedCursor: string | null;
  readonly packages: number;
  /** Versions the feed offers or should offer, checked. */
  readonly versions: number;
  /** Packages whose bytes were read and hashed, and their bytes. */
  readonly hashed: number;
  readonly hashedBytes: number;
  /** Packages whose view moved after the feed's cursor: the feed consumer has not reached them yet. */
  readonly pending: number;
  /** Findings that are drift, and the packages they are about. */
  readonly drifted: number;
  readonly driftedPackages: number;
  readonly waiting: number;
  readonly quarantined: number;
  readonly durationMs: number;
}

/** The summary and, per drifted package (lowercased id), the versions whose bytes a repair downloads again. */
export interface FeedAudit {
  readonly summary: FeedAuditSummary;
  readonly drift: ReadonlyMap<string, ReadonlySet<string>>;
}

/** Audits the feed of `target.mirror` against its latest view. */
export async function auditFeed(target: FeedAuditTarget, options: FeedAuditOptions = {}): Promise<FeedAudit> {
  const started = Date.now();
  const keys = new FeedKeys(target.mirror.prefix);
  const drift = new Map<string, Set<string>>();
  const counts = { packages: 0, versions: 0, hashed: 0, hashedBytes: 0, pending: 0, drifted: 0, waiting: 0 };
  let quarantined = 0;
  const report = (finding: FeedFinding): void => {
    if (finding.kind === 'waiting') counts.waiting++;
    else if (finding.kind === 'quarantined') quarantined++;
    else {
      counts.drifted++;
      if ('id' in finding) {
        const versions = drift.get(finding.id.toLowerCase()) ?? new Set<string>();
        if (finding.kind === 'package-missing' || finding.kind === 'package-differs') versions.add(finding.version);
        drift.set(finding.id.toLowerCase(), versions);
      }
    }
    options.onFinding?.(finding);
  };
  const summary = (baseUrl: string | null, feedCursor: string | null): FeedAudit => ({
    summary: {
      baseUrl,
      feedCursor,
      ...counts,
      driftedPackages: drift.size,
      quarantined,
      durationMs: Date.now() - started,
    },
    drift,
  });

  const baseUrl = await readBaseUrl(target.storage, keys);
  if (baseUrl === undefined) return summary(null, null);
  const urls = new FeedUrls(baseUrl);
  const cursor = await readConsumerCursor(target.cursors, target.mirror, target.consumer ?? FEED_CONSUMER);
  if (cursor === undefined) return summary(baseUrl, null);
  const service = await target.storage.read(keys.serviceIndex());
  if (!service?.bytes.equals(serviceIndexOf(urls)))
    report({
      kind: 'document-differs',
      key: keys.serviceIndex(),
      reason: service === undefined ? 'not stored' : `not the service index of the base URL ${baseUrl}`,
    });

  const ids = options.ids === undefined ? await feedPackages(target) : new Set([...options.ids].map(lower));
  const audit: PackageAudit = {
    target,
    keys,
    urls,
    cursor: cursor.value,
    pages: new Map(),
    small: limiter(PACKAGE_READS),
    large: limiter(1),
    report,
    counts,
  };
  await forEachBounded(ids, target.concurrency ?? DEFAULT_CONCURRENCY, (id) => auditPackage(audit, id));
  return summary(baseUrl, cursor.stored);
}

/** What every package's audit shares. */
interface PackageAudit {
  readonly target: FeedAuditTarget;
  readonly keys: FeedKeys;
  readonly urls: FeedUrls;
  /** The feed consumer's cursor (ticks). */
  readonly cursor: bigint;
  /** Vulnerability pages read so far, by number. */
  readonly pages: Map<number, Promise<Record<string, unknown>>>;
  /** Packages are held whole while hashed: at most {@link PACKAGE_READS} small ones at once, large ones one at a time. */
  readonly small: <R>(task: () => Promise<R>) => Promise<R>;
  readonly large: <R>(task: () => Promise<R>) => Promise<R>;
  readonly report: (finding: FeedFinding) => void;
  readonly counts: { packages: number; versions: number; hashed: number; hashedBytes: number; pending: number };
}

async function auditPackage(audit: PackageAudit, lowerId: string): Promise<void> {
  const { target, keys } = audit;
  const view = await readJson(target.storage, packageIndexKey(target.mirror.prefix, lowerId), parseIndex);
  if (view !== undefined && parseTimestamp(view.commitTimeStamp) > audit.cursor) {
    audit.counts.pending++;
    return;
  }
  const state = await readJson(target.storage, keys.packageState(lowerId), parseState);
  audit.counts.packages++;
  const id = view?.id ?? state?.id ?? lowerId;
  const included = view !== undefined && keepsId(target.idFilter, view.id);
  const offered = included ? offeredVersions(audit, id, view, state) : [];
  const expected = new Set(offered.map((entry) => entry.version));
  const whyNot = (version: string): string =>
    view === undefined
      ? 'the source does not have the package'
      : !included
        ? 'the id filter leaves the package out'
        : view.versions.find((entry) => entry.version === version)?.type === 'delete'
          ? 'the source deleted it'
          : 'the source does not list it';

  const flatKey = keys.flatIndex(id);
  // A document that is not one lists nothing: every version it should name is reported missing, and repaired.
  const flat = await readJson(target.storage, flatKey, (bytes) => {
    try {
      const versions = (JSON.parse(bytes.toString('utf8')) as { versions?: unknown } | null)?.versions;
      return Array.isArray(versions) ? versions.map(String) : [];
    } catch {
      return [];
    }
  });
  const flatVersions = new Set(flat ?? []);
  for (const { version } of offered)
    if (!flatVersions.has(version)) audit.report({ kind: 'version-missing', id, version, where: flatKey });
  for (const version of flatVersions)
    if (!expected.has(version))
      audit.report({ kind: 'version-extra', id, version, where: flatKey, reason: whyNot(version) });

  const registration = await readRegistration(target.storage, keys, id).catch(() => ({ items: new Map() }));
  const registrationKey = keys.registrationIndex(id);
  for (const [version] of registration.items)
    if (!expected.has(version) && !flatVersions.has(version))
      audit.report({ kind: 'version-extra', id, version, where: registrationKey, reason: whyNot(version) });
  for (const entry of offered) {
    audit.counts.versions++;
    const item = registration.items.get(entry.version);
    if (item === undefined)
      audit.report({ kind: 'version-missing', id, version: entry.version, where: registrationKey });
    else compareEntry(audit, id, entry, item);
  }
  await Promise.all(offered.map((entry) => checkPackage(audit, id, entry, state)));
  await compareVulnerabilities(audit, id, offered);
}

/**
 * The versions the feed should offer: the view's details entries whose package it holds or should hold. A version
 * waiting for the source or quarantined (by the feed, or its leaf by the mirror) is reported as such and not offered.
 */
function offeredVersions(
  audit: PackageAudit,
  id: string,
  view: PackageIndex,
  state: PackageState | undefined,
): VersionEntry[] {
  const offered: VersionEntry[] = [];
  for (const entry of view.versions) {
    const version = entry.version;
    if (entry.type === 'delete') continue;
    if (state?.held[version] !== undefined) offered.push(entry);
    else if (state?.waiting[version] !== undefined)
      audit.report({ kind: 'waiting', id, version, reason: state.waiting[version].reason });
    else if (state?.quarantined[version] !== undefined)
      audit.report({ kind: 'quarantined', id, version, reason: state.quarantined[version].reason });
    else if (entry.quarantined)
      audit.report({
        kind: 'quarantined',
        id,
        version,
        reason: 'the mirror set its leaf aside (catalog-sync quarantine)',
      });
    else offered.push(entry);
  }
  return offered;
}

/** The registration item's `catalogEntry` against the view's entry (the leaf's fields as the view keeps them). */
function compareEntry(audit: PackageAudit, id: string, entry: VersionEntry, item: Readonly<Record<string, unknown>>) {
  const catalogEntry = item['catalogEntry'];
  const shown = leafFieldsOf(catalogEntry);
  const packageContent = audit.urls.nupkg(id, entry.version);
  if (item['packageContent'] !== packageContent)
    audit.report({
      kind: 'version-differs',
      id,
      version: entry.version,
      field: 'packageContent',
      feed: item['packageContent'],
      source: packageContent,
    });
  // A leaf the mirror set aside: its fields are unknown, the feed keeps what it showed.
  if (entry.quarantined) return;
  for (const field of ['listed', 'deprecation', 'vulnerabilities'] as const)
    if (!isDeepStrictEqual(shown[field], entry[field]))
      audit.report({
        kind: 'version-differs',
        id,
        version: entry.version,
        field,
        feed: shown[field],
        source: entry[field],
      });
}

/** The stored package of an offered version against its leaf's hash and size. */
async function checkPackage(
  audit: PackageAudit,
  id: string,
  entry: VersionEntry,
  state: PackageState | undefined,
): Promise<void> {
  const { target, keys } = audit;
  const leafKey = entry.quarantined ? state?.held[entry.version]?.leaf : entry.leaf;
  if (leafKey === undefined) return;
  const leaf = await readLeafPackage(target.mirror.store, target.mirror.where, {
    leaf: leafKey,
    commitKey: entry.commitKey,
  });
  // A leaf without a digest cannot be checked (the feed quarantines its package).
  if ('problem' in leaf.digest) return;
  const expected = leaf.digest;
  const key = keys.nupkg(id, entry.version);
  const hashOf = async () => {
    const stored = await target.storage.read(key);
    if (stored === undefined) return undefined;
    return { hash: createHash('sha512').update(stored.bytes).digest('base64'), size: stored.bytes.byteLength };
  };
  const actual = await (expected.size > LARGE_PACKAGE_BYTES ? audit.large(hashOf) : audit.small(hashOf));
  if (actual === undefined) {
    audit.report({ kind: 'package-missing', id, version: entry.version, key });
    return;
  }
  audit.counts.hashed++;
  audit.counts.hashedBytes += actual.size;
  if (actual.hash !== expected.hash || actual.size !== expected.size)
    audit.report({ kind: 'package-differs', id, version: entry.version, key, expected, actual });
}

/** The package's entry on its vulnerability page against the entries its offered versions give. */
async function compareVulnerabilities(audit: PackageAudit, id: string, offered: readonly VersionEntry[]) {
  const lowerId = lower(id);
  const number = vulnerabilityPageOf(lowerId);
  const key = audit.keys.vulnerabilityPage(number);
  let page = audit.pages.get(number);
  if (page === undefined) {
    page = readJson(audit.target.storage, key, (bytes) => JSON.parse(bytes.toString('utf8')) as Record<string, unknown>)
      .then((value) => (typeof value === 'object' && value !== null ? value : {}))
      .catch(() => ({}));
    audit.pages.set(number, page);
  }
  const shown = (await page)[lowerId];
  const source = vulnerabilityEntriesOf(offered.filter((entry) => !entry.quarantined));
  if (!isDeepStrictEqual(shown ?? [], source))
    audit.report({ kind: 'vulnerabilities-differ', id, key, feed: shown, source: source.length ? source : undefined });
}

/** The lowercased ids of the view's packages and of the feed's package states. */
async function feedPackages(target: FeedAuditTarget): Promise<Set<string>> {
  const ids = new Set<string>();
  const viewFolder = `${target.mirror.prefix}packages/`;
  for await (const key of target.storage.list(viewFolder))
    if (key.endsWith('/index.json')) ids.add(segmentId(key.slice(viewFolder.length, -'/index.json'.length)));
  const statesFolder = `${new FeedKeys(target.mirror.prefix).state}packages/`;
  for await (const key of target.storage.list(statesFolder))
    if (key.endsWith('.json')) ids.add(segmentId(key.slice(statesFolder.length, -'.json'.length)));
  return ids;
}

async function readBaseUrl(storage: FeedStorage, keys: FeedKeys): Promise<string | undefined> {
  const settings = await readJson(storage, keys.settings(), (bytes) => JSON.parse(bytes.toString('utf8')) as unknown);
  const baseUrl = (settings as { baseUrl?: unknown } | undefined)?.baseUrl;
  return typeof baseUrl === 'string' ? baseUrl : undefined;
}

async function readJson<T>(
  storage: FeedStorage,
  key: string,
  parse: (bytes: Buffer, where: string) => T,
): Promise<T | undefined> {
  const stored = await storage.read(key);
  return stored === undefined ? undefined : parse(stored.bytes, `${storage.where} ${key}`);
}

function segmentId(segment: string): string {
  try {
    return lower(decodeURIComponent(segment));
  } catch {
    return lower(segment);
  }
}

function lower(id: string): string {
  return id.toLowerCase();
}
