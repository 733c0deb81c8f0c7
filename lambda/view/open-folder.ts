import { resolve } from 'node:path';
import type { ConsumerStores } from '../consumer/open.js';
import { openLocalStores } from '../stores/local-store.js';
import { LocalViewDocuments } from './local-view-documents.js';
import type { ViewDocuments } from './view-documents.js';

/** The mirror, the consumer cursors and the view's documents of one store. */
export interface ViewStores extends ConsumerStores {
  readonly documents: ViewDocuments;
  readonly prefix: string;
}

/** The view in a local folder (the CLI's `--data-dir`), beside the mirror and its cursors. */
export function folderViewStores(dataDir: string, options: { readonly prefix?: string } = {}): ViewStores {
  const root = resolve(dataDir);
  const { cursors, snapshots } = openLocalStores(root);
  const prefix = options.prefix ?? '';
  return {
    mirror: { store: snapshots, prefix, where: root, folder: root },
    cursors,
    documents: new LocalViewDocuments(root, snapshots),
    prefix,
    close: () => undefined,
  };
}
