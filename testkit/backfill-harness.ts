/**
 * Backfill tests' stores: one "target" is where a backfill (or a follower) writes, either S3 + DynamoDB on the
 * shared emulators or a local folder, with what the tests read back: every key and its bytes (and S3 metadata),
 * the cursor, the run log, and the generated-catalog verifier of that kind of store. Range workers get a catalog
 * client of their own, as separate Lambdas or processes would.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CatalogClient } from '../lambda/catalog/catalog-client.js';
import { HttpClient } from '../lambda/catalog/http-client.js';
import type { RunSummary } from '../lambda/contract/run-summary.js';
import { parseSettings, type RawSettings, type SyncSettings } from '../lambda/contract/settings.js';
import type { Ticks } from '../lambda/contract/time.js';
import { LocalStore } from '../lambda/stores/local-store.js';
import type { BackfillStore, CursorStore, RunLogStore, SnapshotReader, SnapshotStore } from '../lambda/stores/types.js';
import type { BackfillDeps } from '../lambda/sync/index.js';
import type { GeneratedCatalog } from './catalog-generator.js';
import { localKeys, verifyLocal } from './local-verify.js';
import { FAST_RETRY, SyncHarness } from './sync-harness.js';

/** Where a backfill or a follower writes, and how a test reads it back. */
export interface BackfillTarget {
  readonly kind: string;
  readonly stores: {
    cursors: CursorStore;
    snapshots: SnapshotStore & SnapshotReader;
    runLog: RunLogStore;
    backfills: BackfillStore;
  };
  /** Every snapshot key (not the state folder), in byte order. */
  keys(): Promise<string[]>;
  /** A key's bytes, and its S3 user metadata where the store keeps it. */
  object(key: string): Promise<{ body: Buffer; metadata?: Record<string, string> }>;
  /** The generated-catalog verifier of this kind of store: every commit up to `upTo` stored whole and exactly. */
  verify(catalog: GeneratedCatalog, origin: string, upTo: Ticks): Promise<string[]>;
  close(): void;
}

/** The kinds of target every backfill test runs on. */
export const TARGET_KINDS = ['S3 + DynamoDB', 'local folder'] as const;

/** A fresh, empty target of `kind`. */
export async function openTarget(kind: (typeof TARGET_KINDS)[number]): Promise<BackfillTarget> {
  if (kind === 'S3 + DynamoDB') {
    const harness = await SyncHarness.create();
    return {
      kind,
      stores: { cursors: harness.store, snapshots: harness.snapshots, runLog: harness.store, backfills: harness.store },
      keys: () => harness.keys(),
      object: async (key) => harness.getObject(key),
      // The S3 verifier checks commits; a backfill's ranges file is the only other kind of key it leaves.
      verify: (catalog, origin, upTo) => harness.verify(catalog, origin, upTo),
      close: () => {
        harness.clients.dynamo.destroy();
        harness.clients.s3.destroy();
      },
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-backfill-'));
  const store = new LocalStore(dir);
  return {
    kind,
    stores: { cursors: store, snapshots: store, runLog: store, backfills: store },
    keys: () => localKeys(dir),
    object: async (key) => ({ body: readFileSync(join(dir, key)) }),
    // Ranges files are the backfill's own keys: not a commit's, so the folder verifier would call them unexpected.
    verify: async (catalog, origin, upTo) =>
      (await verifyLocal(dir, catalog, origin, upTo)).filter(
        (problem) => !/^unexpected file backfill\/[^/]+\/ranges\.json$/.test(problem),
      ),
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Settings of a run or worker of `source`. */
export function settingsOf(source: string, raw: RawSettings = {}): SyncSettings {
  return parseSettings({ CATALOG_SOURCE: source, ...raw });
}

/** Runs `action` with the target's stores and a catalog client of its own (closed afterwards). */
export async function withDeps<T>(
  target: BackfillTarget,
  settings: SyncSettings,
  action: (deps: BackfillDeps) => Promise<T>,
  extra: Partial<BackfillDeps> = {},
): Promise<T> {
  const http = new HttpClient({ connections: settings.concurrency, retry: FAST_RETRY });
  try {
    return await action({
      catalog: new CatalogClient(http, settings.source, settings.allowedOrigins),
      ...target.stores,
      ...extra,
    });
  } finally {
    await http.close();
  }
}

/** Keys two targets should hold alike: every snapshot key but the backfill's ranges files and the watermark. */
export function comparableKeys(keys: readonly string[]): string[] {
  return keys.filter((key) => !key.startsWith('backfill/') && key !== 'watermark.json');
}

/** The runs of a cursor in the target's run log, newest first. */
export function runsOf(target: BackfillTarget, cursorName = 'catalog-to-s3'): Promise<RunSummary[]> {
  return target.stores.runLog.listRuns(cursorName, { limit: 100 });
}
