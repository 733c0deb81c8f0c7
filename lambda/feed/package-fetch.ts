/**
 * One package from the source into the feed: streamed from the source's flat container through the check of the
 * leaf's hash and size into the feed's storage, memory bounded whatever its size. What a failed download means for
 * the feed: a package the source does not serve (404: a CDN behind the catalog) or cannot serve now (5xx, resets,
 * after the HTTP client's retries) waits and is tried again later ({@link WaitPolicy}); bytes that are not the leaf's
 * are quarantined; anything else (a refused origin, 401/403, a store that fails) stops the batch.
 */
import { FetchError } from '../catalog/http-errors.js';
import type { HttpClient } from '../catalog/http-client.js';
import { PackageMismatchError, type PackageDigest } from './errors.js';
import type { FeedKeys } from './feed-keys.js';
import type { FeedStorage } from './feed-storage.js';
import type { PackageSource } from './package-source.js';
import { verifiedBody } from './verified-body.js';

/** How long a package the source does not serve is waited for, and how often it is tried meanwhile. */
export interface WaitPolicy {
  /** The wait before the first retry, in ms; each retry waits twice the one before. */
  readonly firstDelayMs: number;
  /** The longest wait between two tries. */
  readonly maxDelayMs: number;
  /** After this long since the first failure, the version is quarantined (`not served`). */
  readonly giveUpAfterMs: number;
}

/**
 * nuget.org's CDN serves a new package within seconds to minutes of its catalog commit: retried after 1, 2, 4, …
 * minutes, at most an hour apart, for a day; then quarantined (a later leaf of the version tries again).
 */
export const DEFAULT_WAIT_POLICY: WaitPolicy = {
  firstDelayMs: 60_000,
  maxDelayMs: 60 * 60_000,
  giveUpAfterMs: 24 * 60 * 60_000,
};

/**
 * The most of one package held in memory while it streams: to S3, the parts in flight and the one filling
 * (`(DEFAULT_PARTS_AT_ONCE + 1) × DEFAULT_PART_BYTES`); a smaller package whole, at most. A package over 1 MiB also
 * has up to 3 MiB on its way to the hashing thread (off-thread-hash.ts: the piece filling and 2 MiB waiting), which
 * the budget does not count: 48 MiB more for 16 such downloads at once, at worst.
 */
export const HELD_PER_DOWNLOAD = 25 * 1024 * 1024;

/** The memory all downloads in flight may hold together by default: 160 MiB (six large packages at once). */
export const DEFAULT_DOWNLOAD_MEMORY = 160 * 1024 * 1024;

/**
 * A budget of bytes shared by the downloads in flight: each takes what it may hold at once (its size, at most
 * {@link HELD_PER_DOWNLOAD}) before it starts, and gives it back when it ends; one that does not fit waits, in turn
 * (first come, first served: a large package is not passed over by a stream of small ones).
 */
export class MemoryBudget {
  private used = 0;
  private readonly queue: { readonly take: number; readonly resolve: () => void }[] = [];

  constructor(readonly bytes: number) {}

  async run<R>(bytes: number, task: () => Promise<R>): Promise<R> {
    const take = Math.min(bytes, HELD_PER_DOWNLOAD, this.bytes);
    if (this.queue.length > 0 || this.used + take > this.bytes)
      await new Promise<void>((resolve) => this.queue.push({ take, resolve }));
    else this.used += take;
    try {
      return await task();
    } finally {
      this.used -= take;
      while (this.queue.length > 0 && this.used + this.queue[0]!.take <= this.bytes) {
        const next = this.queue.shift()!;
        this.used += next.take;
        next.resolve();
      }
    }
  }
}

/** What one download did. */
export type FetchOutcome =
  | { readonly kind: 'stored' }
  | { readonly kind: 'not-served'; readonly reason: string }
  | { readonly kind: 'mismatch'; readonly error: PackageMismatchError };

/** What a download needs. */
export interface PackageFetcher {
  readonly http: HttpClient;
  readonly source: PackageSource;
  readonly storage: FeedStorage;
  readonly keys: FeedKeys;
  /** Bounds the downloads in flight (shared by every package of the batch). */
  readonly slots: <R>(task: () => Promise<R>) => Promise<R>;
  /** Bounds the memory the downloads in flight hold together. */
  readonly memory: MemoryBudget;
  readonly signal?: AbortSignal;
  /** Told the bytes of each piece stored (for figures). */
  readonly onBytes?: (bytes: number) => void;
}

/** Downloads the package of `id` `version` (identity form) and stores it at its feed key, checked against `digest`. */
export async function fetchPackage(
  fetcher: PackageFetcher,
  id: string,
  version: string,
  digest: PackageDigest,
): Promise<FetchOutcome> {
  const url = fetcher.source.packageUrl(id, version);
  const key = fetcher.keys.nupkg(id, version);
  return fetcher.slots(() =>
    fetcher.memory.run(digest.size, async () => {
      try {
        await fetcher.http.stream(url, fetcher.signal === undefined ? {} : { signal: fetcher.signal }, (body) =>
          fetcher.storage.putStream(key, verifiedBody(body, digest, url, fetcher.onBytes)),
        );
        return { kind: 'stored' };
      } catch (error) {
        if (error instanceof PackageMismatchError) return { kind: 'mismatch', error };
        if (error instanceof FetchError && error.constructor === FetchError) {
          if (error.status === 404) return { kind: 'not-served', reason: 'HTTP 404' };
          if (error.retryable) return { kind: 'not-served', reason: error.reason };
        }
        throw error;
      }
    }),
  );
}

/** When a version that failed `attempts` times, first at `since`, is tried next; undefined: give up. */
export function nextTry(policy: WaitPolicy, since: number, attempts: number, now: number): number | undefined {
  if (now - since >= policy.giveUpAfterMs) return undefined;
  const delay = Math.min(policy.maxDelayMs, policy.firstDelayMs * 2 ** Math.max(0, attempts - 1));
  return now + delay;
}
