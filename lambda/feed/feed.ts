/**
 * A feed opened on its storage and source: its batches (the packages a run of commits touches, each made from the
 * latest view), the retries of packages the source did not serve yet, and the rebuild of every package.
 */
import type { HttpClient } from '../catalog/http-client.js';
import type { MirrorCommit, Mirror } from '../consumer/mirror.js';
import type { IdFilter } from '../contract/id-filter.js';
import { keepsId } from '../contract/id-filter.js';
import { limiter } from '../view/commit-leaves.js';
import { FeedError } from './errors.js';
import { DEFAULT_MAX_PACKAGE_BYTES, zeroCounts, type FeedContext, type FeedCounts } from './feed-context.js';
import { FeedKeys, FeedUrls } from './feed-keys.js';
import type { FeedStorage } from './feed-storage.js';
import { setUpFeed } from './feed-setup.js';
import { DEFAULT_DOWNLOAD_MEMORY, DEFAULT_WAIT_POLICY, MemoryBudget, type WaitPolicy } from './package-fetch.js';
import { PackageSource } from './package-source.js';
import { PackageRuns } from './package-runs.js';
import { syncPackage, type LeafRef, type PackageOutcome, type SyncPackageOptions } from './package-sync.js';
import { applyVulnerabilities, type VulnerabilityEntry } from './vulnerabilities.js';

/**
 * Packages made at once in a batch: four times the downloads, so that the requests around a download (the view's
 * index, the state and the leaf before it; the documents and the state after) overlap other packages' downloads
 * instead of leaving download slots idle (on S3 each waits 20-50 ms on latency, not on CPU). A package in flight
 * holds its view index, its state and the leaves it reads (at most {@link DEFAULT_FEED_READS} read at once).
 */
export const DEFAULT_FEED_CONCURRENCY = 64;
/** Downloads in flight at once. */
export const DEFAULT_FEED_DOWNLOADS = 16;
/** Leaf bodies read at once. */
export const DEFAULT_FEED_READS = 32;
/** How often, at most, a batch looks for packages whose retry is due (a listing of `feed-state/waiting/`). */
export const RETRY_CHECK_MS = 60_000;

/** Where a feed is kept and how. */
export interface FeedTarget {
  readonly storage: FeedStorage;
  /** The mirror (its leaves, and the latest view under its prefix); the feed is under the same prefix. */
  readonly mirror: Mirror;
  /** The URL at which `{prefix}feed/` is served: every URL in the documents is under it. */
  readonly baseUrl: string;
  /** The HTTP client the packages are downloaded with (its origin rules, retries, proxies). */
  readonly http: HttpClient;
  /** The source's service index (its `PackageBaseAddress/3.0.0` is where packages come from). */
  readonly source: string;
  /** The source's flat container, when the source names none (a catalog index as the source). */
  readonly packageBaseAddress?: string;
  /** The packages the feed holds (the sync's `--include`/`--exclude`); default every package of the mirror. */
  readonly idFilter?: IdFilter;
  /** Packages made at once (default {@link DEFAULT_FEED_CONCURRENCY}). */
  readonly concurrency?: number;
  /** Downloads at once (default {@link DEFAULT_FEED_DOWNLOADS}). */
  readonly downloads?: number;
  /** Bytes the downloads in flight may hold together (default {@link DEFAULT_DOWNLOAD_MEMORY}: 160 MiB). */
  readonly downloadMemory?: number;
  readonly wait?: WaitPolicy;
  readonly maxPackageBytes?: number;
  /** Epoch ms now (tests move it). */
  readonly now?: () => number;
  readonly signal?: AbortSignal;
  /** Write the documents for a base URL other than the one the feed was written for (a rebuild). */
  readonly rebase?: boolean;
  /** Told the bytes of each piece of a package stored (for figures). */
  readonly onBytes?: (bytes: number) => void;
}

/** An opened feed. See the module documentation. */
export class Feed {
  readonly counts: FeedCounts;
  private nextRetryCheck = 0;

  private constructor(
    private readonly ctx: FeedContext,
    private readonly runs: PackageRuns,
    /** The setup's writes (service index, vulnerability documents), settled before any batch or retry ends. */
    private readonly setup: Promise<void>,
  ) {
    this.counts = ctx.counts;
  }

  /**
   * Finds the source's flat container, checks the base URL against the one the feed was written for, and writes the
   * service index and the vulnerability documents where they are missing.
   *
   * @throws {@link FeedError} for a base URL or a source the feed cannot work with.
   */
  static async open(target: FeedTarget): Promise<Feed> {
    const keys = new FeedKeys(target.mirror.prefix);
    const urls = new FeedUrls(target.baseUrl);
    const now = target.now ?? Date.now;
    const source = await PackageSource.open(target.http, target.source, {
      ...(target.packageBaseAddress === undefined ? {} : { baseAddress: target.packageBaseAddress }),
      ...(target.signal === undefined ? {} : { signal: target.signal }),
    });
    const setup = await setUpFeed(target.storage, keys, urls, {
      now: now(),
      ...(target.rebase ? { rebase: true } : {}),
    });
    const ctx: FeedContext = {
      storage: target.storage,
      keys,
      urls,
      mirror: target.mirror,
      http: target.http,
      source,
      ...(target.idFilter === undefined ? {} : { idFilter: target.idFilter }),
      wait: target.wait ?? DEFAULT_WAIT_POLICY,
      maxPackageBytes: target.maxPackageBytes ?? DEFAULT_MAX_PACKAGE_BYTES,
      slots: limiter(target.downloads ?? DEFAULT_FEED_DOWNLOADS),
      memory: new MemoryBudget(target.downloadMemory ?? DEFAULT_DOWNLOAD_MEMORY),
      reads: limiter(DEFAULT_FEED_READS),
      now,
      counts: zeroCounts(),
      ...(target.signal === undefined ? {} : { signal: target.signal }),
      ...(target.onBytes === undefined ? {} : { onBytes: target.onBytes }),
    };
    return new Feed(ctx, new PackageRuns(target.concurrency ?? DEFAULT_FEED_CONCURRENCY), setup.written);
  }

  /** The counts since the last call (or since the feed was opened), set back to zero: one invocation's. */
  takeCounts(): FeedCounts {
    const taken = { ...this.ctx.counts };
    Object.assign(this.ctx.counts, zeroCounts());
    return taken;
  }

  /** The feed's keys and URLs. */
  get keys(): FeedKeys {
    return this.ctx.keys;
  }
  get urls(): FeedUrls {
    return this.ctx.urls;
  }

  /**
   * Applies a run of consecutive commits: every package they touch (that the filter keeps) is made from the latest
   * view, each by one writer, then the vulnerability pages of those packages; then, at most once a minute, the
   * packages whose retry is due.
   */
  async applyBatch(commits: readonly MirrorCommit[]): Promise<void> {
    const runs = new Map<string, Promise<PackageOutcome>>();
    for (const commit of commits) {
      const readAhead = this.runs.take(commit);
      for (const [lower, { id, leaves }] of this.idsOf(commit))
        runs.set(lower, readAhead?.get(lower) ?? runs.get(lower) ?? this.start(id, { leaves }));
    }
    await this.settle(runs);
    await this.retryDueUnlessChecked();
  }

  /**
   * {@link retryDue}, unless this feed looked for due packages less than {@link RETRY_CHECK_MS} ago (a run's end after
   * its first batch looked: no listing of `feed-state/waiting/` in a row after its last package). Returns how many.
   */
  async retryDueUnlessChecked(): Promise<number> {
    return this.ctx.now() >= this.nextRetryCheck ? this.retryDue() : 0;
  }

  /**
   * Starts the packages of a commit as soon as it is read (the consumer's `onRead`), ahead of its batch, which then
   * awaits them: their requests overlap the batch before, its downloads and its documents.
   */
  readAhead(commit: MirrorCommit): void {
    const ids = this.idsOf(commit);
    this.runs.read(commit, ids, (lower) =>
      syncPackage(this.ctx, ids.get(lower)!.id, { leaves: ids.get(lower)!.leaves }),
    );
  }

  /** The ids of a commit's leaves the filter keeps, by lowercased id, with the details leaves it names of each. */
  private idsOf(commit: MirrorCommit): Map<string, { id: string; leaves: LeafRef[] }> {
    const ids = new Map<string, { id: string; leaves: LeafRef[] }>();
    for (const leaf of commit.leaves) {
      if (!keepsId(this.ctx.idFilter, leaf.id)) continue;
      const lower = leaf.id.toLowerCase();
      const of = ids.get(lower) ?? { id: leaf.id, leaves: [] };
      if (leaf.type === 'PackageDetails' && !leaf.quarantined)
        of.leaves.push({ key: leaf.key, commitKey: commit.commitKey });
      ids.set(lower, of);
    }
    return ids;
  }

  /** A run of `id`: shared with a run queued and not begun yet, unless it has options of its own (`leaves` aside). */
  private start(id: string, options: SyncPackageOptions = {}): Promise<PackageOutcome> {
    const { leaves: _leaves, ...own } = options;
    return this.runs.start(id, () => syncPackage(this.ctx, id, options), Object.keys(own).length === 0);
  }

  /**
   * The read stopped early (a time budget, a failure): packages started ahead for commits no batch took, and not begun
   * yet, are not made (their commits are read again by the next run). Only once no batch is under way.
   */
  abandonReadAhead(): void {
    this.runs.abandonReadAhead();
  }

  /**
   * Resolves once no package is being made (runs read ahead for commits whose batch never came included: a run that
   * ended early, or failed); a face awaits it before it returns, so that no write outlives its run.
   */
  idle(): Promise<void> {
    return this.runs.idle();
  }

  /** Makes again every package whose retry is due (`feed-state/waiting/`). Returns how many. */
  async retryDue(): Promise<number> {
    const now = this.ctx.now();
    this.nextRetryCheck = now + RETRY_CHECK_MS;
    const due: string[] = [];
    for await (const key of this.ctx.storage.list(this.ctx.keys.waitingFolder())) {
      const marker = await this.ctx.storage.read(key);
      if (marker === undefined) continue;
      let parsed: { id?: unknown; due?: unknown };
      try {
        parsed = JSON.parse(marker.bytes.toString('utf8')) as typeof parsed;
      } catch (cause) {
        throw new FeedError(`${this.ctx.storage.where} ${key}: not valid JSON`, { cause });
      }
      const { id, due: at } = parsed;
      if (typeof id === 'string' && typeof at === 'number' && at <= now) due.push(id);
    }
    await this.syncAll(due);
    return due.length;
  }

  /**
   * Makes every package again from the latest view (the documents written anew; packages whose bytes are held kept),
   * those the filter no longer keeps, or the view no longer has, removed. For a new base URL or id filter.
   */
  async rebuild(): Promise<number> {
    const ids = new Set<string>();
    const viewFolder = `${this.ctx.mirror.prefix}packages/`;
    for await (const key of this.ctx.storage.list(viewFolder)) {
      const segment = key.slice(viewFolder.length).split('/')[0];
      if (segment !== undefined && key.endsWith('/index.json')) ids.add(idOfSegment(segment));
    }
    const statesFolder = `${this.ctx.keys.state}packages/`;
    for await (const key of this.ctx.storage.list(statesFolder))
      if (key.endsWith('.json')) ids.add(idOfSegment(key.slice(statesFolder.length, -'.json'.length)));
    await this.syncAll(ids, { force: true, removeExcluded: true });
    return ids.size;
  }

  /**
   * Makes `packages` (lowercased id to the versions whose stored bytes are to be downloaded again) again from the
   * latest view, every document written anew from the leaves, none of its registration items kept, through the same
   * writers and compare-and-swap as a batch (`verify --feed --repair`). A package the filter leaves out is removed.
   */
  async repair(packages: ReadonlyMap<string, ReadonlySet<string>>): Promise<void> {
    await this.syncAll(packages.keys(), {
      force: true,
      fresh: true,
      removeExcluded: true,
      refetch: (id, version) => packages.get(id.toLowerCase())?.has(version) === true,
    });
  }

  /** Resolves once the setup's documents are written (every batch, retry, rebuild and repair waits for it too). */
  ready(): Promise<void> {
    return this.setup;
  }

  private async syncAll(ids: Iterable<string>, options: SyncPackageOptions = {}): Promise<void> {
    const runs = new Map<string, Promise<PackageOutcome>>();
    for (const id of ids) runs.set(id.toLowerCase(), this.start(id, options));
    await this.settle(runs);
  }

  /** Awaits the runs of packages (by lowercased id), then writes the vulnerability pages of those that changed. */
  private async settle(runs: ReadonlyMap<string, Promise<PackageOutcome>>): Promise<void> {
    const changes = new Map<string, readonly VulnerabilityEntry[]>();
    const outcomes = await Promise.all(runs.values());
    for (const [i, lower] of [...runs.keys()].entries()) {
      const outcome = outcomes[i]!;
      if (!outcome.noVulnerabilityChange) changes.set(lower, outcome.vulnerabilities ?? []);
    }
    await this.setup;
    const written = await applyVulnerabilities(this.ctx.storage, this.ctx.keys, this.ctx.urls, changes, this.ctx.now());
    this.ctx.counts.documents += written;
  }
}

/** The id a key segment (`idSegment`) was made from: lowercased, which names the same package. */
function idOfSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
