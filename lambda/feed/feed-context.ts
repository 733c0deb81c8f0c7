/** What every step of the feed is given: where it reads and writes, its settings, its bounds and its counters. */
import type { Mirror } from '../consumer/mirror.js';
import type { IdFilter } from '../contract/id-filter.js';
import type { FeedKeys, FeedUrls } from './feed-keys.js';
import type { PackageFetcher, WaitPolicy } from './package-fetch.js';

/** Counts of what the feed did, added up over a run. */
export interface FeedCounts {
  /** Packages looked at (touched by a commit, or due for a retry). */
  packages: number;
  /** Packages whose feed was already made from the view's latest state. */
  current: number;
  /** Packages downloaded, checked and stored, and their bytes. */
  stored: number;
  storedBytes: number;
  /** Packages deleted from the feed (a delete leaf, or an id the filter no longer keeps). */
  removed: number;
  /** Downloads the source did not serve (yet): tried again later. */
  waiting: number;
  /** Versions quarantined: bytes that were not the leaf's, a leaf with no hash, or not served for too long. */
  quarantined: number;
  /** Documents (indexes, registration pages, vulnerability pages) written. */
  documents: number;
}

/** New zero counts. */
export function zeroCounts(): FeedCounts {
  return { packages: 0, current: 0, stored: 0, storedBytes: 0, removed: 0, waiting: 0, quarantined: 0, documents: 0 };
}

/** Everything a package's sync needs. */
export interface FeedContext extends PackageFetcher {
  readonly keys: FeedKeys;
  readonly urls: FeedUrls;
  /** The mirror: its leaves (the stored bodies) and the latest view under its prefix. */
  readonly mirror: Mirror;
  /** The packages the feed holds; undefined: every package of the mirror. */
  readonly idFilter?: IdFilter;
  readonly wait: WaitPolicy;
  /** Packages whose leaf gives more bytes than this are quarantined, not downloaded. */
  readonly maxPackageBytes: number;
  /** Bounds the leaf bodies read at once (a package's first build reads one per version). */
  readonly reads: <R>(task: () => Promise<R>) => Promise<R>;
  /** Epoch ms now (tests move it). */
  readonly now: () => number;
  readonly counts: FeedCounts;
}

/** The most bytes a package may have by default: nuget.org takes 250 MB; twice that leaves room. */
export const DEFAULT_MAX_PACKAGE_BYTES = 512 * 1024 * 1024;
