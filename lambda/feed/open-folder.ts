import { openFolderMirror, type ConsumerStores } from '../consumer/open-folder.js';
import type { FeedStorage } from './feed-storage.js';
import { LocalFeedStorage } from './local-feed-storage.js';

/** The mirror, the consumer cursors and the feed's storage of one store. */
export interface FeedStores extends ConsumerStores {
  readonly storage: FeedStorage;
}

/**
 * The feed in a local folder (the CLI's `--data-dir`), beside the mirror, its view and its cursors. A file of its
 * own, apart from the S3 stores (`open.ts`): a command on a folder never loads the AWS SDK.
 */
export function folderFeedStores(dataDir: string, options: { readonly prefix?: string } = {}): FeedStores {
  const { root, stores, mirror } = openFolderMirror(dataDir, options.prefix);
  return {
    mirror,
    cursors: stores.cursors,
    storage: new LocalFeedStorage(root, stores.snapshots),
    close: () => undefined,
  };
}
