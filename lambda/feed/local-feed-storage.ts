import { join } from 'node:path';
import { STATE_DIR } from '../stores/local-folder.js';
import { LocalLock } from '../stores/local-lock.js';
import { contentTag, type LocalSnapshotStore } from '../stores/local-snapshot-store.js';
import { fnv1a32 } from '../view/leaf-record.js';
import type { StoredDocument } from '../view/view-documents.js';
import type { FeedObjectKind, FeedStorage } from './feed-storage.js';

/** What the feed uses of a folder's snapshot store (`LocalSnapshotStore`, or `LocalStore` in tests). */
export type FolderObjects = Pick<LocalSnapshotStore, 'getBytes' | 'putLeaf' | 'putStream' | 'deleteKey' | 'listKeys'>;

/**
 * The feed's lock files in the folder's state folder, `{n}` from 0 to {@link FEED_LOCKS} - 1: neither the follower's
 * nor the view's lock. A key's compare-and-swap always takes the same one (by a hash of the key).
 */
export const FEED_LOCK_FILE = 'feed-{n}.lock';
/**
 * Lock files the feed's keys are spread over: under one lock, the compare-and-swaps of different packages (16 at once
 * by default) queued behind one another, though they never touch the same key.
 */
export const FEED_LOCKS = 16;

/**
 * The feed in a local folder, beside the mirror (same keys; the folder's file names, atomic durable writes). A
 * compare-and-swap is the read, the comparison and the write under the folder's feed lock of that key, as the latest
 * view's under its lock; a package is written to a temporary file in the state folder as it arrives, then renamed
 * into place.
 */
export class LocalFeedStorage implements FeedStorage {
  private readonly locks: LocalLock[];
  /**
   * This process's turn at each lock: its writers queue here, one at a time, rather than all trying the lock file
   * (a failed try is a file created, a holder judged and a pause: with 64 packages at once, most of the feed's CPU on
   * a folder). Other processes still meet at the lock file.
   */
  private readonly turns: Promise<unknown>[];

  constructor(
    readonly where: string,
    private readonly store: FolderObjects,
  ) {
    this.locks = Array.from(
      { length: FEED_LOCKS },
      (_, n) => new LocalLock(join(where, STATE_DIR), { fileName: FEED_LOCK_FILE.replace('{n}', String(n)) }),
    );
    this.turns = this.locks.map(() => Promise.resolve());
  }

  async read(key: string): Promise<StoredDocument | undefined> {
    const bytes = await this.store.getBytes(key);
    return bytes === undefined ? undefined : { bytes, tag: contentTag(bytes) };
  }

  writeIf(key: string, bytes: Buffer, expected: string | undefined): Promise<boolean> {
    const n = fnv1a32(key) % FEED_LOCKS;
    const write = () =>
      this.locks[n]!.hold(async (held) => {
        const current = await this.store.getBytes(key);
        if ((current === undefined ? undefined : contentTag(current)) !== expected) return false;
        await held.whileHeld(() => this.store.putLeaf(key, bytes));
        return true;
      });
    const turn = this.turns[n]!.then(write, write);
    this.turns[n] = turn.catch(() => undefined);
    return turn;
  }

  async put(key: string, bytes: Buffer, _kind: FeedObjectKind): Promise<void> {
    await this.store.putLeaf(key, bytes);
  }

  putStream(key: string, body: AsyncIterable<Uint8Array>): Promise<void> {
    return this.store.putStream(key, body);
  }

  delete(key: string): Promise<void> {
    return this.store.deleteKey(key);
  }

  list(prefix: string): AsyncIterable<string> {
    return this.store.listKeys(prefix);
  }
}
