import { resolve } from 'node:path';
import type { ConsumerStores } from '../consumer/open.js';
import { openLocalStores } from '../stores/local-store.js';
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
  const root = resolve(dataDir);
  const { cursors, snapshots } = openLocalStores(root);
  return {
    mirror: { store: snapshots, prefix: options.prefix ?? '', where: root, folder: root },
    cursors,
    storage: new LocalFeedStorage(root, snapshots),
    close: () => undefined,
  };
}
