/**
 * The latest view (issue 23) over generated catalogs: details, deletes (some non-normalized), re-adds, relists and
 * unlists, deprecations and vulnerabilities, one identity in many commits, several commits in one millisecond,
 * leaves that begin with a UTF-8 byte-order mark (as nuget.org's writer puts on some). The
 * mirror grows in random chunks and the view consumer runs after each (incremental upkeep, several runs); then the
 * view must equal the one computed from the catalog alone, a commit applied again must change no byte, and
 * `--rebuild` (from an empty view) must give the same bytes, whatever its ranges of manifests (bounds inside
 * same-millisecond pairs, single commits) and shards, and when it crashes (stopped after k items, or failing at the
 * j-th index write) and is run again: the rerun resumes the plan, the cursor moves only at its finish, its records
 * are removed.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readCommits } from '../../../lambda/consumer/index.js';
import { LocalStore } from '../../../lambda/stores/local-store.js';
import { consumerKey } from '../../../lambda/consumer/consumer-cursors.js';
import {
  applyToView,
  keepView,
  LocalViewDocuments,
  packageIndexKey,
  rebuildView,
  type RebuildResult,
} from '../../../lambda/view/index.js';
import { generateCatalog } from '../../../testkit/catalog-generator.js';
import { mulberry32 } from '../../../testkit/prng.js';
import { decorate, expectedView, writeMirror } from '../../../testkit/view-mirror.js';

/** Every stored index, by key. */
async function viewBytes(store: LocalStore, prefix: string): Promise<Map<string, Buffer>> {
  const bytes = new Map<string, Buffer>();
  for await (const key of store.listKeys(`${prefix}packages/`)) bytes.set(key, (await store.getBytes(key))!);
  return bytes;
}

describe('latest view over generated catalogs (local folder)', () => {
  it('incremental upkeep = the view computed from the catalog = rebuild; a commit applied twice changes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.integer({ min: 3, max: 40 }),
        fc.array(fc.nat(), { maxLength: 5 }),
        fc.constantFrom('', 'mirror/'),
        fc.nat(),
        fc.integer({ min: 1, max: 7 }),
        fc.nat(),
        fc.constantFrom('none', 'stop', 'throw'),
        fc.nat(),
        async (seed, commits, cuts, prefix, again, shards, rangeDraw, crash, crashDraw) => {
          const catalog = generateCatalog({
            commits,
            seed,
            leavesPerCommit: [1, 4],
            deleteRatio: 0.25,
            semver2Ratio: 0.3,
            nonNormalizedDeleteRatio: 0.5,
            sameMillisecondPairs: 1,
            bomRatio: 0.2,
          });
          const decorations = decorate(catalog.commits, mulberry32(seed), 0.3);
          const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-view-'));
          try {
            const store = new LocalStore(dir);
            const mirror = { store, prefix, where: dir };
            const target = { documents: new LocalViewDocuments(dir, store), prefix };
            const ends = [...new Set([...cuts.map((cut) => 1 + (cut % commits)), commits])].sort((a, b) => a - b);
            let from = 0;
            for (const end of ends) {
              await writeMirror(store, prefix, catalog.commits.slice(from, end));
              const result = await keepView(target, { mirror, cursors: store });
              expect(result.commits).toBe(end - from);
              from = end;
            }
            const expected = expectedView(prefix, catalog.commits, decorations);
            const incremental = await viewBytes(store, prefix);
            expect([...incremental.keys()].sort()).toEqual(
              [...expected.values()].map((index) => packageIndexKey(prefix, (index as { id: string }).id)).sort(),
            );
            for (const index of expected.values()) {
              expect(
                JSON.parse(incremental.get(packageIndexKey(prefix, (index as { id: string }).id))!.toString('utf8')),
              ).toEqual(index);
            }
            // A commit delivered again (a crash before its checkpoint): every byte stays.
            let n = 0;
            for await (const commit of readCommits(mirror)) {
              if (n++ !== again % commits) continue;
              const counts = await applyToView(target, commit);
              expect(counts.written).toBe(0);
            }
            expect(await viewBytes(store, prefix)).toEqual(incremental);
            // Rebuild from the history into an empty view: the same bytes. Under a consumer of its own, so the
            // cursor it moves at its finish starts from nothing.
            rmSync(join(dir, prefix, 'packages'), { recursive: true });
            const spills = join(dir, 'spills');
            mkdirSync(spills);
            const rangeManifests = 1 + (rangeDraw % commits);
            const options = { shards, rangeManifests, tempDir: spills, name: 'view-rebuilt' };
            const cursor = consumerKey(mirror, 'view-rebuilt');
            let rebuilt: RebuildResult | undefined;
            if (crash !== 'none') {
              const stop = new AbortController();
              let items = 0;
              let writes = 0;
              const crashed = rebuildView(
                crash === 'throw'
                  ? {
                      ...target,
                      beforeWrite: () => {
                        if (writes++ === crashDraw % expected.size) throw new Error('crash');
                      },
                    }
                  : target,
                mirror,
                store,
                {
                  ...options,
                  signal: stop.signal,
                  onItem: () => {
                    if (crash === 'stop' && ++items === crashDraw % (Math.ceil(commits / rangeManifests) + shards))
                      stop.abort();
                  },
                },
              );
              if (crash === 'throw') await expect(crashed).rejects.toThrow('crash');
              else rebuilt = await crashed;
              // Stopped, or failed: the cursor has not moved, and the lease was given back.
              if (rebuilt === undefined || !rebuilt.complete) expect(await store.read(cursor)).toBeUndefined();
            }
            if (rebuilt === undefined || !rebuilt.complete) {
              const resumed = await rebuildView(target, mirror, store, options);
              expect(resumed.resumed).toBe(crash !== 'none');
              rebuilt = resumed;
            }
            expect(rebuilt).toMatchObject({ commits, packages: expected.size, cursorMoved: true, complete: true });
            expect(rebuilt.written + rebuilt.current).toBe(expected.size);
            if (crash !== 'throw') expect(rebuilt.written).toBe(expected.size);
            expect((await store.read(cursor))?.value).toBe(
              (await store.read(consumerKey(mirror, 'view-latest')))?.value,
            );
            expect(readdirSync(spills)).toEqual([]);
            // Only the latest details leaf of each identity is read, once.
            const latestDetails = [...expected.values()]
              .flatMap((index) => (index as { versions: { type: string }[] }).versions)
              .filter((entry) => entry.type === 'details').length;
            expect(rebuilt.bodiesRead).toBe(latestDetails);
            rmSync(spills, { recursive: true });
            expect(await viewBytes(store, prefix)).toEqual(incremental);
          } finally {
            rmSync(dir, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: 12 },
    );
  }, 120_000);
});
