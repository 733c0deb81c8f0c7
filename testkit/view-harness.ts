/** The latest view's stores for tests, on S3 + DynamoDB Local (s3rver with conditional PUTs) or a local folder. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Mirror } from '../lambda/consumer/index.js';
import { LocalStore } from '../lambda/stores/local-store.js';
import type { CursorStore, SnapshotReader, SnapshotStore } from '../lambda/stores/types.js';
import { LocalViewDocuments, S3ViewDocuments, type ViewDocuments } from '../lambda/view/index.js';
import { SyncHarness } from './sync-harness.js';

/** The two stores a view is kept in. */
export const VIEW_KINDS = ['S3 + DynamoDB', 'local folder'] as const;

/** A fresh mirror, its cursors and its view documents. */
export interface ViewTestTarget {
  readonly store: SnapshotStore & SnapshotReader;
  readonly cursors: CursorStore;
  readonly documents: ViewDocuments;
  readonly mirror: Mirror;
  /** CLI store flags (`--bucket … --cursor-table …`, or `--data-dir …`) and the environment they need. */
  readonly cli: { readonly args: readonly string[]; readonly env: Record<string, string> };
  /** S3: the harness (raw PUTs for the conditional-write checks). */
  readonly harness?: SyncHarness;
  close(): void;
}

export async function openViewTarget(kind: (typeof VIEW_KINDS)[number], prefix = ''): Promise<ViewTestTarget> {
  if (kind === 'S3 + DynamoDB') {
    const harness = await SyncHarness.create();
    return {
      store: harness.snapshots,
      cursors: harness.store,
      documents: new S3ViewDocuments(harness.bucket, harness.clients.s3),
      mirror: { store: harness.snapshots, prefix, where: `s3://${harness.bucket}/${prefix}` },
      cli: {
        args: ['--bucket', harness.bucket, '--cursor-table', harness.table, '--prefix', prefix],
        env: harness.env(),
      },
      harness,
      close: () => {
        harness.clients.dynamo.destroy();
        harness.clients.s3.destroy();
      },
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-view-'));
  const store = new LocalStore(dir);
  return {
    store,
    cursors: store,
    documents: new LocalViewDocuments(dir, store),
    mirror: { store, prefix, where: dir },
    cli: { args: ['--data-dir', dir, '--prefix', prefix], env: {} },
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}
