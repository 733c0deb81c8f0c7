/**
 * Who reads a mirror, and how far behind (issue 29): every named consumer of the mirror, its cursor, its lag behind
 * `watermark.json` in commits and in commit time, and whether an instance holds it; read from the cursor store and
 * the mirror's listing alone, never the catalog.
 */
import { consumerNameOf, CONSUMER_KEY_PREFIX } from '../contract/consumer-keys.js';
import { commitKey as commitKeyOfTicks, manifestKey } from '../contract/keys.js';
import { UNIX_EPOCH_TICKS } from '../contract/time.js';
import type { CursorState, CursorStore, LeaseRecord } from '../stores/types.js';
import { commitKeyOfManifestKey } from './documents.js';
import { consumerKey, consumerStateOf, mirrorKey, readConsumerCursor } from './consumer-cursors.js';
import { ConsumerError } from './errors.js';
import { secondsBetween } from './lag.js';
import { readWatermark, type Mirror } from './mirror.js';

/** Commits behind the watermark counted at most (one listing); past it a lag is given as "at least". */
export const LAG_COUNT_LIMIT = 100_000;

/** One named consumer of a mirror, as `catalog-sync consumers` shows it. */
export interface ConsumerStatus {
  readonly name: string;
  /** The stored cursor (7 fractional digits), or null while it has none. */
  readonly cursor: string | null;
  /** The commit key of the cursor, or null (no cursor, or one before every commit). */
  readonly commitKey: string | null;
  readonly commitId: string | null;
  readonly updatedAt: string | null;
  readonly runId: string | null;
  /** Commits after the cursor up to the watermark (all of them without a cursor); null while the mirror has no watermark. */
  readonly lagCommits: number | null;
  /** True when {@link lagCommits} stopped at {@link LAG_COUNT_LIMIT}: the lag is at least that. */
  readonly lagCommitsAtLeast: boolean;
  /** Seconds of commit time from the cursor to the watermark (0 when caught up); null without a cursor or a watermark. */
  readonly lagSeconds: number | null;
  /** The instance holding the consumer (its lease is live), or null. */
  readonly heldBy: string | null;
  /** When its lease ends (ISO), whether live or not, or null when it has none. */
  readonly leaseUntil: string | null;
}

/** A mirror's consumers and its watermark. */
export interface ConsumersView {
  readonly mirror: string;
  /** The watermark's cursor and commit key, or null while the mirror has none. */
  readonly watermark: { readonly cursor: string; readonly commitKey: string } | null;
  readonly consumers: readonly ConsumerStatus[];
}

/**
 * The consumers of `mirror` kept in `cursors`: all of them (the store's listing: a Scan of a DynamoDB table), or
 * those named in `names` (their cursors read directly, one stored under the name alone by an earlier version
 * included).
 */
export async function describeConsumers(
  mirror: Mirror,
  cursors: CursorStore,
  names?: readonly string[],
  now = Date.now(),
): Promise<ConsumersView> {
  const state = consumerStateOf(cursors);
  let found: { name: string; cursor?: CursorState; lease?: LeaseRecord }[];
  if (names !== undefined) {
    found = await Promise.all(
      names.map(async (name) => {
        const [cursor, lease] = await Promise.all([
          readConsumerCursor(cursors, mirror, name),
          state?.readLease(consumerKey(mirror, name)),
        ]);
        return { name, ...(cursor === undefined ? {} : { cursor }), ...(lease === undefined ? {} : { lease }) };
      }),
    );
  } else {
    if (state === undefined)
      throw new ConsumerError(
        "this cursor store cannot list its consumers (DynamoStore and the local folder's stores can)",
      );
    const key = mirrorKey(mirror);
    const stored = await state.listConsumers(`${CONSUMER_KEY_PREFIX}${key}#`);
    found = stored.flatMap((entry) => {
      const name = consumerNameOf(entry.key, key);
      return name === undefined
        ? []
        : [
            {
              name,
              ...(entry.cursor === undefined ? {} : { cursor: entry.cursor }),
              ...(entry.lease === undefined ? {} : { lease: entry.lease }),
            },
          ];
    });
  }
  const watermark = await readWatermark(mirror);
  const keyOf = (cursor: CursorState | undefined): string | null =>
    cursor === undefined || cursor.value < UNIX_EPOCH_TICKS ? null : commitKeyOfTicks(cursor.value);
  const counted =
    watermark === undefined
      ? undefined
      : await commitKeysBehind(
          mirror,
          found.map((entry) => keyOf(entry.cursor)),
          watermark.commitKey,
        );
  const consumers = found.map(({ name, cursor, lease }): ConsumerStatus => {
    const key = keyOf(cursor);
    const behind = counted?.behind(key);
    return {
      name,
      cursor: cursor?.stored ?? null,
      commitKey: key,
      commitId: cursor?.commitId || null,
      updatedAt: cursor?.updatedAt ?? null,
      runId: cursor?.runId ?? null,
      lagCommits: behind?.count ?? null,
      lagCommitsAtLeast: behind?.atLeast ?? false,
      lagSeconds:
        watermark !== undefined && cursor !== undefined ? secondsBetween(cursor.value, watermark.ticks) : null,
      heldBy: lease !== undefined && lease.until > now ? lease.holder : null,
      leaseUntil: lease === undefined ? null : new Date(lease.until).toISOString(),
    };
  });
  return {
    mirror: mirror.where,
    watermark: watermark === undefined ? null : { cursor: watermark.cursor, commitKey: watermark.commitKey },
    consumers,
  };
}

/** The commit keys after the lowest of `from` up to `upTo` (one listing, at most {@link LAG_COUNT_LIMIT}), and a count behind any key. */
async function commitKeysBehind(
  mirror: Mirror,
  from: readonly (string | null)[],
  upTo: string,
): Promise<{ behind(key: string | null): { count: number; atLeast: boolean } }> {
  const lowest = from.includes(null)
    ? undefined
    : from.reduce<string | undefined>((low, key) => (low === undefined || key! < low ? key! : low), undefined);
  const keys: string[] = [];
  let full = false;
  for await (const key of mirror.store.listKeys(
    `${mirror.prefix}commits/`,
    lowest === undefined ? undefined : manifestKey(mirror.prefix, lowest),
  )) {
    const commitKey = commitKeyOfManifestKey(mirror.prefix, key);
    if (commitKey === undefined) continue;
    if (commitKey > upTo) break;
    if (keys.length === LAG_COUNT_LIMIT) {
      full = true;
      break;
    }
    keys.push(commitKey);
  }
  return {
    behind: (key) => {
      // The first index whose key is after `key`: keys are in byte order.
      let low = 0;
      let high = keys.length;
      while (key !== null && low < high) {
        const middle = (low + high) >> 1;
        if (keys[middle]! <= key) low = middle + 1;
        else high = middle;
      }
      return { count: keys.length - low, atLeast: full };
    },
  };
}
