import { join } from 'node:path';
import { STATE_DIR } from '../stores/local-folder.js';
import { LocalLock } from '../stores/local-lock.js';
import { contentTag, type LocalSnapshotStore } from '../stores/local-snapshot-store.js';

/** What the feed uses of a folder's snapshot store (`LocalSnapshotStore`, or `LocalStore` in tests). */
export type FolderObjects = Pick<LocalSnapshotStore, 'getBytes' | 'putLeaf' | 'putStream' | 'deleteKey' | 'listKeys'>;
import type { StoredDocument } from '../view/view-documents.js';
import type { FeedObjectKind, FeedStorage } from './feed-storage.js';

/** The feed's lock file in the folder's state folder: neither the follower's nor the view's lock is taken. */
export const FEED_LOCK_FILE = 'feed.lock';

/**
 * The feed in a local folder, beside the mirror (same keys; the folder's file names, atomic durable writes). A
 * compare-and-swap is the read, the comparison and the write under the folder's feed lock, as the latest view's;
 * a package is written to a temporary file in the state folder as it arrives, then renamed into place.
 */
export class LocalFeedStorage implements FeedStorage {
  private readonly lock: LocalLock;

  constructor(
    readonly where: string,
    private readonly store: FolderObjects,
  ) {
    this.lock = new LocalLock(join(where, STATE_DIR), { fileName: FEED_LOCK_FILE });
  }

  async read(key: string): Promise<StoredDocument | undefined> {
    const bytes = await this.store.getBytes(key);
    return bytes === undefined ? undefined : { bytes, tag: contentTag(bytes) };
  }

  writeIf(key: string, bytes: Buffer, expected: string | undefined): Promise<boolean> {
    return this.lock.hold(async (held) => {
      const current = await this.store.getBytes(key);
      if ((current === undefined ? undefined : contentTag(current)) !== expected) return false;
      await held.whileHeld(() => this.store.putLeaf(key, bytes));
      return true;
    });
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
