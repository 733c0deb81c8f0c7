import type { LocalSnapshotStore } from '../stores/local-snapshot-store.js';
import { LocalViewDocuments } from '../view/local-view-documents.js';
import type { StoredDocument } from '../view/view-documents.js';
import type { FeedObjectKind, FeedStorage } from './feed-storage.js';

/** What the feed uses of a folder's snapshot store (`LocalSnapshotStore`, or `LocalStore` in tests). */
export type FolderObjects = Pick<
  LocalSnapshotStore,
  'getBytes' | 'putLeaf' | 'putStream' | 'deleteKey' | 'listKeys' | 'stage'
>;

/**
 * The feed's lock file in the folder's state folder: neither the follower's nor the view's lock. Its compare-and-swaps
 * take it in rounds (see {@link LocalFeedStorage}).
 */
export const FEED_LOCK_FILE = 'feed.lock';

/**
 * The feed in a local folder, beside the mirror (same keys; the folder's file names, atomic durable writes). A
 * compare-and-swap is the read, the comparison and the rename under the folder's feed lock, as the latest view's under
 * its lock, and in rounds as the view's are (`LocalViewDocuments`): each state is written aside and fsynced outside
 * the lock, one round takes the lock once for every state queued by then and renames those whose stored state is the
 * one expected (microseconds each), releases it, then syncs their folder once, and each write is answered once its
 * rename is durable. A package is written to a temporary file in the state folder as it arrives, then renamed into
 * place.
 */
export class LocalFeedStorage implements FeedStorage {
  private readonly states: LocalViewDocuments;

  constructor(
    readonly where: string,
    private readonly store: FolderObjects,
  ) {
    this.states = new LocalViewDocuments(where, store, { fileName: FEED_LOCK_FILE });
  }

  /** The tag is the content's, as the compare-and-swap ({@link writeIf}) compares it. */
  read(key: string): Promise<StoredDocument | undefined> {
    return this.states.read(key);
  }

  writeIf(key: string, bytes: Buffer, expected: string | undefined): Promise<boolean> {
    return this.states.writeIf(key, bytes, expected);
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
