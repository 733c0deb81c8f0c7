import { resolve } from 'node:path';
import { openLocalStores, type LocalStores } from '../stores/local-store.js';
import type { CursorStore } from '../stores/types.js';
import type { Mirror } from './mirror.js';

/** A mirror and the cursor store a named consumer keeps its cursor in. */
export interface ConsumerStores {
  readonly mirror: Mirror;
  readonly cursors: CursorStore;
  /** Releases sockets, so the process can exit. */
  close(): void;
}

/** A local folder's stores, opened once, and the mirror in it as a reader sees it. */
export interface FolderMirror {
  /** The folder, resolved. */
  readonly root: string;
  readonly stores: LocalStores;
  readonly mirror: Mirror;
}

/**
 * Opens the folder `dataDir` (the CLI's `--data-dir`) and its mirror under `prefix`: what every wing's folder stores
 * are made from (the consumer's, the view's, the feed's). A file of its own, apart from the S3 stores: a command on a
 * folder never loads the AWS SDK. Opening checks nothing and writes nothing.
 */
export function openFolderMirror(dataDir: string, prefix = ''): FolderMirror {
  const root = resolve(dataDir);
  const stores = openLocalStores(root);
  return { root, stores, mirror: { store: stores.snapshots, prefix, where: root, folder: root } };
}

/**
 * The mirror in a local folder (the CLI's `--data-dir`) and the folder's own cursors: a named consumer's cursor is
 * kept in the folder's state file beside the follower's, with the same locked compare-and-set. Opening checks
 * nothing and writes nothing: the first read throws `NoMirrorError` when the folder holds no mirror, and only a
 * named consumer's checkpoint writes (its cursor).
 */
export function folderConsumerStores(dataDir: string, options: { readonly prefix?: string } = {}): ConsumerStores {
  const { mirror, stores } = openFolderMirror(dataDir, options.prefix);
  return { mirror, cursors: stores.cursors, close: () => undefined };
}
