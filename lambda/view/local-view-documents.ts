import { join } from 'node:path';
import { STATE_DIR } from '../stores/local-folder.js';
import { LocalLock } from '../stores/local-lock.js';
import { contentTag } from '../stores/local-snapshot-store.js';
import type { SnapshotReader, SnapshotStore } from '../stores/types.js';
import type { StoredDocument, ViewDocuments } from './view-documents.js';

/** The view's lock file in the folder's state folder: the follower's lock is never taken by the view. */
export const VIEW_LOCK_FILE = 'view.lock';

/**
 * The view in a local folder, beside the mirror (same key layout, atomic durable writes). A compare-and-swap is
 * the read, the comparison and the write under the folder's view lock (heartbeat, abandoned-lock breaking, and a
 * last check that the lock is still this writer's before the rename), so a writer that lost its lock writes
 * nothing.
 */
export class LocalViewDocuments implements ViewDocuments {
  private readonly lock: LocalLock;
  constructor(
    readonly where: string,
    private readonly snapshots: SnapshotReader & Pick<SnapshotStore, 'putLeaf'>,
  ) {
    this.lock = new LocalLock(join(where, STATE_DIR), { fileName: VIEW_LOCK_FILE });
  }

  async read(key: string): Promise<StoredDocument | undefined> {
    const bytes = await this.snapshots.getBytes(key);
    return bytes === undefined ? undefined : { bytes, tag: contentTag(bytes) };
  }

  writeIf(key: string, bytes: Buffer, expected: string | undefined): Promise<boolean> {
    return this.lock.hold(async (held) => {
      const current = await this.snapshots.getBytes(key);
      if ((current === undefined ? undefined : contentTag(current)) !== expected) return false;
      await held.whileHeld(() => this.snapshots.putLeaf(key, bytes, {}));
      return true;
    });
  }
}
