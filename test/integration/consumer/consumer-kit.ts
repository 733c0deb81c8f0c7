/**
 * What the named-consumer tests share: a mirror written straight from generated commits (manifests and the watermark
 * only: these tests never read a leaf's body), a cursor store that logs every cursor write while keeping the store's
 * leases, and the keys of a consumer's cursor.
 */
import { consumerKey, type Mirror } from '../../../lambda/consumer/index.js';
import { commitKeyOf, manifestKey, watermarkKeyOf } from '../../../lambda/contract/keys.js';
import { formatTimestamp, parseTimestamp } from '../../../lambda/contract/time.js';
import type {
  CompareAndSetResult,
  CursorState,
  CursorStore,
  CursorTarget,
  SnapshotStore,
} from '../../../lambda/stores/types.js';
import type { GeneratedCommit } from '../../../testkit/catalog-generator.js';

/** Writes the manifests of `commits` (leaves named, not stored) and then the watermark at the last of them. */
export async function writeManifests(
  store: SnapshotStore,
  prefix: string,
  commits: readonly GeneratedCommit[],
): Promise<void> {
  await Promise.all(
    commits.map((commit) => {
      const key = commitKeyOf(commit.timestamp);
      const leaves = commit.leaves.map((leaf) => ({
        key: `${prefix}leaves/${key}/${leaf.id.toLowerCase()}/${leaf.version.toLowerCase()}.json`,
        id: leaf.id,
        version: leaf.version,
        type: leaf.type,
      }));
      leaves.sort((a, b) => (a.key < b.key ? -1 : 1));
      return store.putJson(manifestKey(prefix, key), {
        commitId: commit.commitId,
        commitTimeStamp: formatTimestamp(parseTimestamp(commit.timestamp)),
        leaves,
      });
    }),
  );
  const last = commits.at(-1);
  if (last === undefined) return;
  await store.putJson(watermarkKeyOf(prefix), {
    cursor: formatTimestamp(parseTimestamp(last.timestamp)),
    commitId: last.commitId,
    commitKey: commitKeyOf(last.timestamp),
    updatedAt: new Date(0).toISOString(),
  });
}

/** The commit keys of `commits`. */
export function keysOf(commits: readonly GeneratedCommit[]): string[] {
  return commits.map((commit) => commitKeyOf(commit.timestamp));
}

/** `store` with every successful cursor write logged as `[key, from, to]`; every other method (leases) passed through. */
export function logWrites<T extends CursorStore>(store: T): { store: T; writes: [string, string | null, string][] } {
  const writes: [string, string | null, string][] = [];
  const logged = new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'compareAndSet') {
        return async (
          key: string,
          expected: CursorState | undefined,
          next: CursorTarget,
        ): Promise<CompareAndSetResult> => {
          const result = await target.compareAndSet(key, expected, next);
          if (result.outcome === 'written') writes.push([key, expected?.stored ?? null, formatTimestamp(next.value)]);
          return result;
        };
      }
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store: logged, writes };
}

/** The stored cursor of the consumer `name` of `mirror`, or undefined. */
export async function cursorOf(cursors: CursorStore, mirror: Mirror, name: string): Promise<string | undefined> {
  return (await cursors.read(consumerKey(mirror, name)))?.stored;
}
