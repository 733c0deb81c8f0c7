import { join } from 'node:path';
import { openFolderMirror, type ConsumerStores } from '../consumer/open-folder.js';
import { STATE_DIR } from '../stores/local-folder.js';
import type { BackfillStore } from '../stores/types.js';
import { LocalViewDocuments } from './local-view-documents.js';
import { FolderRecordStore, type RecordStore } from './rebuild/record-store.js';
import type { ViewDocuments } from './view-documents.js';

/** The mirror, the consumer cursors, the view's documents, and a rebuild's plans and records, of one store. */
export interface ViewStores extends ConsumerStores {
  readonly documents: ViewDocuments;
  readonly prefix: string;
  /** A rebuild's plan, lease and item states (and upkeep's check for a running rebuild). */
  readonly plans: BackfillStore;
  /** A rebuild's items files and records. */
  readonly records: RecordStore;
}

/**
 * The view in a local folder (the CLI's `--data-dir`), beside the mirror and its cursors; a rebuild's plans in the
 * folder's state folder, its records in `.catalog-sync/view-rebuild/` (or `recordsDir`).
 */
export function folderViewStores(
  dataDir: string,
  options: { readonly prefix?: string; readonly recordsDir?: string } = {},
): ViewStores {
  const prefix = options.prefix ?? '';
  const { root, stores, mirror } = openFolderMirror(dataDir, prefix);
  return {
    mirror,
    cursors: stores.cursors,
    documents: new LocalViewDocuments(root, stores.snapshots),
    prefix,
    plans: stores.backfills,
    records: new FolderRecordStore(options.recordsDir ?? join(root, STATE_DIR, 'view-rebuild')),
    close: () => undefined,
  };
}
