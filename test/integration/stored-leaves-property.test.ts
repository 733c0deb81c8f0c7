/**
 * Generated catalogs whose leaves begin with a UTF-8 byte-order mark (the generator's `bomRatio`, as nuget.org's
 * writer does for some), through the real follower into a local folder: the replica serves the mark, the store keeps
 * each leaf byte for byte, and every reader reads every leaf: `MirrorLeaf.json()`, the view's upkeep (equal to the
 * view computed from the catalog alone) and the rebuild (the same bytes).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogClient } from '../../lambda/catalog/catalog-client.js';
import { HttpClient } from '../../lambda/catalog/http-client.js';
import { readCommits } from '../../lambda/consumer/index.js';
import { commitKeyOf, leafKey } from '../../lambda/contract/keys.js';
import { parseSettings } from '../../lambda/contract/settings.js';
import { LocalStore } from '../../lambda/stores/local-store.js';
import { runSlice } from '../../lambda/sync/index.js';
import { keepView, LocalViewDocuments, packageIndexKey, rebuildView } from '../../lambda/view/index.js';
import { generateCatalog, leafBody } from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { FAST_RETRY } from '../../testkit/sync-harness.js';
import { expectedView } from '../../testkit/view-mirror.js';

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** Every key under `prefix` with its bytes. */
async function bytesUnder(store: LocalStore, prefix: string): Promise<Map<string, Buffer>> {
  const bytes = new Map<string, Buffer>();
  for await (const key of store.listKeys(prefix)) bytes.set(key, (await store.getBytes(key))!);
  return bytes;
}

describe('generated catalogs with byte-order-mark leaves, through the follower (local folder)', () => {
  let replica: CatalogReplica;
  beforeAll(async () => {
    replica = await CatalogReplica.start({ pageSize: 7 });
  });
  afterAll(() => replica.stop());

  it("are stored byte for byte and read by json(), the view's upkeep and the rebuild", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.integer({ min: 2, max: 12 }),
        fc.constantFrom(0.3, 0.7, 1),
        fc.constantFrom('', 'mirror/'),
        async (seed, commits, bomRatio, prefix) => {
          const catalog = generateCatalog({
            commits,
            seed,
            bomRatio,
            leavesPerCommit: [1, 4],
            deleteRatio: 0.2,
            semver2Ratio: 0.3,
          });
          replica.setCatalog(catalog);
          const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-bom-'));
          const http = new HttpClient({ connections: 4, retry: FAST_RETRY });
          try {
            const store = new LocalStore(dir);
            const settings = parseSettings({ CATALOG_SOURCE: replica.serviceIndexUrl, SNAPSHOT_PREFIX: prefix });
            const summary = await runSlice(settings, {
              catalog: new CatalogClient(http, settings.source, settings.allowedOrigins),
              cursors: store,
              snapshots: store,
            });
            expect(summary).toMatchObject({ commits, stoppedBy: 'caught-up' });
            // Served and stored: the mark, then the JSON, byte for byte.
            const bodies = new Map<string, Buffer>();
            for (const commit of catalog.commits) {
              for (const leaf of commit.leaves) {
                const served = Buffer.from(leafBody(catalog, leaf, replica.origin));
                expect(served.subarray(0, 3).equals(BOM)).toBe(leaf.bom === true);
                const key = leafKey(prefix, commitKeyOf(commit.timestamp), leaf.id, leaf.version);
                expect((await store.getBytes(key))?.equals(served), key).toBe(true);
                bodies.set(key, served);
              }
            }
            // json(): every leaf's JSON.
            const mirror = { store, prefix, where: dir };
            for await (const commit of readCommits(mirror)) {
              for (const leaf of commit.leaves)
                expect(await leaf.json()).toEqual(
                  JSON.parse(
                    bodies
                      .get(leaf.key)!
                      .toString('utf8')
                      .replace(/^\uFEFF/, ''),
                  ),
                );
            }
            // The upkeep: the view computed from the catalog alone; the rebuild: the same bytes.
            const target = { documents: new LocalViewDocuments(dir, store), prefix };
            expect(await keepView(target, { mirror, cursors: store })).toMatchObject({ commits });
            const view = await bytesUnder(store, `${prefix}packages/`);
            const expected = expectedView(prefix, catalog.commits, new Map());
            expect(view.size).toBe(expected.size);
            for (const index of expected.values())
              expect(
                JSON.parse(view.get(packageIndexKey(prefix, (index as { id: string }).id))!.toString('utf8')),
              ).toEqual(index);
            rmSync(join(dir, prefix, 'packages'), { recursive: true });
            expect(
              await rebuildView(target, mirror, store, { name: 'view-rebuilt', tempDir: dir, shards: 4 }),
            ).toMatchObject({ complete: true });
            expect(await bytesUnder(store, `${prefix}packages/`)).toEqual(view);
          } finally {
            await http.close();
            rmSync(dir, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: 8 },
    );
  }, 120_000);
});
