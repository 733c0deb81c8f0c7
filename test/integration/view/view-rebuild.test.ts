/**
 * The rebuild's records (local folder): kept when it fails or is stopped, so the next run resumes its plan and
 * removes them at its finish; a bad shard count or records folder refused naming it; a rebuild stopped by its signal
 * moving no cursor. Same bytes as upkeep is view-property.test.ts's.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumerKey, StoredLeafError } from '../../../lambda/consumer/index.js';
import { commitKeyOf, leafKey } from '../../../lambda/contract/keys.js';
import { LocalStore } from '../../../lambda/stores/local-store.js';
import { LocalViewDocuments, rebuildView } from '../../../lambda/view/index.js';
import { generateCatalog } from '../../../testkit/catalog-generator.js';
import { writeMirror } from '../../../testkit/view-mirror.js';

describe('view rebuild in-process: its records, a failure, a stop', () => {
  let dir: string;
  let store: LocalStore;
  const catalog = generateCatalog({ commits: 12, seed: 7, deleteRatio: 0 });
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'catalog-sync-view-rebuild-'));
    store = new LocalStore(dir);
    await writeMirror(store, '', catalog.commits);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const target = (): { documents: LocalViewDocuments; prefix: string } => ({
    documents: new LocalViewDocuments(dir, store),
    prefix: '',
  });
  const mirror = (): { store: LocalStore; prefix: string; where: string } => ({ store, prefix: '', where: dir });

  it('refuses a shard count that is not a whole number >= 1, and a temporary folder that cannot be made, naming them', async () => {
    await expect(rebuildView(target(), mirror(), store, { shards: 0 })).rejects.toThrow(
      'shards: must be a whole number from 1 to 4096 (got 0)',
    );
    const missing = join(dir, 'no', 'such', 'folder');
    await expect(rebuildView(target(), mirror(), store, { tempDir: missing, name: 'view-missing' })).rejects.toThrow(
      `${missing}: cannot make the rebuild's folder there`,
    );
  });

  it('fails on a leaf the manifest lists that is missing, moves no cursor, gives its lease back, and a rerun resumes it', async () => {
    const last = catalog.commits[catalog.commits.length - 1]!;
    const leaf = last.leaves[0]!;
    const key = leafKey('', commitKeyOf(last.timestamp), leaf.id, leaf.version);
    const bytes = (await store.getBytes(key))!;
    await store.deleteKey(key);
    const spills = join(dir, 'spills-failing');
    mkdirSync(spills);
    const options = { shards: 3, tempDir: spills, name: 'view-failing' };
    try {
      const failing = rebuildView(target(), mirror(), store, options);
      await expect(failing).rejects.toBeInstanceOf(StoredLeafError);
      await expect(failing).rejects.toThrow(
        `${key} (commit ${commitKeyOf(last.timestamp)}): listed in its commit's manifest but not stored`,
      );
      expect(await store.read(consumerKey(mirror(), 'view-failing'))).toBeUndefined();
      // Its records stay for the rerun: one folder, the plan's.
      expect(readdirSync(spills)).toHaveLength(1);
    } finally {
      await store.putLeaf(key, bytes);
    }
    const resumed = await rebuildView(target(), mirror(), store, options);
    expect(resumed).toMatchObject({ resumed: true, complete: true, cursorMoved: true, commits: 12 });
    expect(readdirSync(spills)).toEqual([]);
  });

  it('stopped by its signal: writes nothing more, moves no cursor, keeps its records for the rerun that resumes it', async () => {
    const spills = join(dir, 'spills-stopped');
    mkdirSync(spills);
    const stop = new AbortController();
    stop.abort();
    const options = { shards: 2, tempDir: spills, name: 'view-stopped' };
    const result = await rebuildView(target(), mirror(), store, { ...options, signal: stop.signal });
    expect(result).toMatchObject({ complete: false, cursorMoved: false, written: 0 });
    expect(await store.read(consumerKey(mirror(), 'view-stopped'))).toBeUndefined();
    expect(readdirSync(spills)).toEqual([result.rebuildId]);
    const resumed = await rebuildView(target(), mirror(), store, options);
    expect(resumed).toMatchObject({ rebuildId: result.rebuildId, resumed: true, complete: true, cursorMoved: true });
    // And whole, with many shards and ranges of one manifest, it writes every package and moves the cursor.
    writeFileSync(join(spills, 'unrelated'), '');
    const whole = await rebuildView(target(), mirror(), store, {
      shards: 5,
      rangeManifests: 1,
      tempDir: spills,
      name: 'view-whole',
    });
    expect(whole).toMatchObject({ complete: true, cursorMoved: true, commits: 12, ranges: 12, shards: 5 });
    expect(readdirSync(spills)).toEqual(['unrelated']);
  });
});
