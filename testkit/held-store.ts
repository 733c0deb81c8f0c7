/**
 * A snapshot store in front of another whose PUT of one key (a leaf or a JSON document) waits until the test
 * releases it (then fails, with `fail`), and that tells when a set of other keys has been stored: the order of
 * completions is set by the test, with no timing.
 */
import type { SnapshotStore } from '../lambda/stores/types.js';

/** What {@link holdKey} gives a test. */
export interface HeldStore {
  readonly store: SnapshotStore;
  /** Resolves when the held PUT is asked for. */
  readonly reached: Promise<void>;
  /** Lets the held PUT go on (or fail). */
  release(): void;
  /** Resolves once every one of `keys` is stored through this store. */
  whenStored(keys: readonly string[]): Promise<void>;
  /** Keys stored through this store. */
  readonly stored: ReadonlySet<string>;
}

/** Options of {@link holdKey}. */
export interface HoldOptions {
  /** The held PUT fails once released. */
  readonly fail?: boolean;
  /** Called before each JSON PUT is passed on (to observe, at that instant, what a watermark names). */
  readonly beforeJson?: (key: string, value: unknown) => Promise<void> | void;
}

/** Holds the PUT of `key` in front of `inner`. */
export function holdKey(inner: SnapshotStore, key: string, options: HoldOptions = {}): HeldStore {
  let release!: () => void;
  let reached!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const reachedPromise = new Promise<void>((resolve) => (reached = resolve));
  const stored = new Set<string>();
  const waiters: { keys: readonly string[]; resolve: () => void }[] = [];
  const hold = async (k: string): Promise<void> => {
    if (k !== key) return;
    reached();
    await released;
    if (options.fail) throw new Error(`injected: PUT ${k} failed`);
  };
  const storedNow = (k: string): void => {
    stored.add(k);
    for (const waiter of waiters) if (waiter.keys.every((w) => stored.has(w))) waiter.resolve();
  };
  const store: SnapshotStore = {
    putLeaf: async (k, body, metadata) => {
      await hold(k);
      await inner.putLeaf(k, body, metadata);
      storedNow(k);
    },
    putJson: async (k, value) => {
      await hold(k);
      await options.beforeJson?.(k, value);
      await inner.putJson(k, value);
      storedNow(k);
    },
    putJsonIf: async (k, value, expected, writeOptions) => {
      await hold(k);
      await options.beforeJson?.(k, value);
      const written = await inner.putJsonIf(k, value, expected, writeOptions);
      if (written) storedNow(k);
      return written;
    },
    getJson: (k) => inner.getJson(k),
    getTagged: (k, readOptions) => inner.getTagged(k, readOptions),
    deleteKey: (k) => inner.deleteKey(k),
    listKeys: (prefix, startAfter) => inner.listKeys(prefix, startAfter),
    ...(inner.maxKeySegmentBytes === undefined ? {} : { maxKeySegmentBytes: inner.maxKeySegmentBytes }),
  };
  const whenStored = (keys: readonly string[]): Promise<void> =>
    new Promise((resolve) => {
      if (keys.every((k) => stored.has(k))) resolve();
      else waiters.push({ keys, resolve });
    });
  return { store, reached: reachedPromise, release, whenStored, stored };
}
