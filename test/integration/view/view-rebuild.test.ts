/**
 * The rebuild's temporary shard files (local folder): removed when it fails too, a bad shard count or temporary
 * folder refused naming it, and a rebuild stopped by its signal moving no cursor. Same bytes as upkeep is
 * view-property.test.ts's.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumerKey, StoredLeafError } from '../../../lambda/consumer/index.js';
import { commitKeyOf, leafKey } from '../../../lambda/contract/keys.js';
import { LocalStore } from '../../../lambda/stores/local-store.js';
import { LocalViewDocuments, rebuildView, ViewError } from '../../../lambda/view/index.js';
import { LatestLeafSpill, type LeafRecord } from '../../../lambda/view/latest-leaf-spill.js';
import { generateCatalog } from '../../../testkit/catalog-generator.js';
import { mulberry32 } from '../../../testkit/prng.js';
import { writeMirror } from '../../../testkit/view-mirror.js';

describe('view rebuild: its shard files', () => {
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
      new ViewError('rebuild shards 0: must be a whole number >= 1'),
    );
    const missing = join(dir, 'no', 'such', 'folder');
    await expect(rebuildView(target(), mirror(), store, { tempDir: missing })).rejects.toThrow(
      `${missing}: cannot make the rebuild's temporary folder there`,
    );
  });

  it('removes its shard files when a leaf the manifest lists is missing, and moves no cursor', async () => {
    const last = catalog.commits[catalog.commits.length - 1]!;
    const leaf = last.leaves[0]!;
    const key = leafKey('', commitKeyOf(last.timestamp), leaf.id, leaf.version);
    const bytes = (await store.getBytes(key))!;
    await store.deleteKey(key);
    const spills = join(dir, 'spills-failing');
    mkdirSync(spills);
    try {
      const failing = rebuildView(target(), mirror(), store, { shards: 3, tempDir: spills, name: 'view-failing' });
      await expect(failing).rejects.toBeInstanceOf(StoredLeafError);
      await expect(failing).rejects.toThrow(
        `${key} (commit ${commitKeyOf(last.timestamp)}): listed in its commit's manifest but not stored`,
      );
      expect(readdirSync(spills)).toEqual([]);
      expect(await store.read(consumerKey(mirror(), 'view-failing'))).toBeUndefined();
    } finally {
      await store.putLeaf(key, bytes);
    }
  });

  it('stopped by its signal: writes nothing more, moves no cursor, removes its shard files', async () => {
    const spills = join(dir, 'spills-stopped');
    mkdirSync(spills);
    const stop = new AbortController();
    stop.abort();
    const result = await rebuildView(target(), mirror(), store, {
      shards: 2,
      tempDir: spills,
      name: 'view-stopped',
      signal: stop.signal,
    });
    expect(result).toMatchObject({ complete: false, cursorMoved: false, written: 0 });
    expect(readdirSync(spills)).toEqual([]);
    expect(await store.read(consumerKey(mirror(), 'view-stopped'))).toBeUndefined();
    // And whole, with many shards and a one-record buffer, it writes every package and moves the cursor.
    writeFileSync(join(spills, 'unrelated'), '');
    const whole = await rebuildView(target(), mirror(), store, {
      shards: 5,
      buffer: 1,
      tempDir: spills,
      name: 'view-whole',
    });
    expect(whole).toMatchObject({ complete: true, cursorMoved: true, commits: 12 });
    expect(readdirSync(spills)).toEqual(['unrelated']);
  });

  it("gives each shard's records back in the order added, the latest of an identity buffered in its place, across chunk boundaries and multi-byte ids", async () => {
    const spill = await LatestLeafSpill.open({ shards: 3, buffer: 300, tempDir: dir });
    try {
      const added: LeafRecord[] = [];
      const random = mulberry32(5);
      for (let i = 0; i < 6_000; i++) {
        // Ids of 2- and 3-byte characters, so the 64 KiB reads cut some inside a character; identities repeat.
        const record: LeafRecord = {
          commitKey: `001a${String(i).padStart(8, '0')}`,
          commitTimeStamp: `t${i}`,
          id: `Ünïcødé.日本.${random.int(0, 60)}`,
          version: `1.0.${random.int(0, 10)}`,
          type: i % 11 === 0 ? 'PackageDelete' : 'PackageDetails',
          quarantined: i % 17 === 0 && i % 11 !== 0,
          key: `leaves/${i}/ü.json`,
        };
        added.push(record);
        if (spill.add(record)) await spill.flush();
      }
      await spill.flush();
      const read: LeafRecord[] = [];
      for (let shard = 0; shard < 3; shard++) for await (const record of spill.records(shard)) read.push(record);
      // Last wins per identity, whatever was dropped from the buffer: the latest record of each identity is read.
      const latest = new Map<string, LeafRecord>();
      for (const record of added) latest.set(`${record.id.toLowerCase()}\n${record.version}`, record);
      const lastRead = new Map<string, LeafRecord>();
      for (const record of read) lastRead.set(`${record.id.toLowerCase()}\n${record.version}`, record);
      expect(lastRead).toEqual(latest);
      // Within a shard, the order of the records read is the order they were added in.
      for (let shard = 0; shard < 3; shard++) {
        const order = read
          .filter((record) => spill.shardOf(record.id.toLowerCase()) === shard)
          .map((record) => Number(record.commitTimeStamp.slice(1)));
        expect(order).toEqual([...order].sort((a, b) => a - b));
      }
      // 671 identities in a 300-record buffer: some records were replaced before being written, some written again.
      expect(read.length).toBeLessThan(added.length);
      expect(read.length).toBeGreaterThan(latest.size);
    } finally {
      await spill.remove();
    }
  });

  it('writes the commit\'s timestamp and the follower\'s leaf key as "" and makes them again when read', async () => {
    const spill = await LatestLeafSpill.open({ shards: 1, tempDir: dir, keyPrefix: 'm/' });
    try {
      const commitKey = commitKeyOf('2023-03-08T07:46:13.8311924Z');
      const usual: LeafRecord = {
        commitKey,
        commitTimeStamp: '2023-03-08T07:46:13.8311924Z',
        id: 'Newtonsoft.Json',
        version: '13.0.3',
        type: 'PackageDetails',
        quarantined: false,
        key: leafKey('m/', commitKey, 'Newtonsoft.Json', '13.0.3'),
      };
      const unusual: LeafRecord = {
        ...usual,
        version: '13.0.4',
        commitTimeStamp: '2023-03-08T07:46:13.8311925Z',
        key: 'm/leaves/elsewhere.json',
      };
      spill.add(usual);
      spill.add(unusual);
      await spill.flush();
      const lines = readFileSync(join(spill.dir, 'shard-0.jsonl'), 'utf8').trim().split('\n');
      expect(lines[0]).toBe(`["${commitKey}","","Newtonsoft.Json","13.0.3",1,""]`);
      expect(lines[1]).toContain('"2023-03-08T07:46:13.8311925Z"');
      expect(lines[1]).toContain('"m/leaves/elsewhere.json"');
      const read: LeafRecord[] = [];
      for await (const record of spill.records(0)) read.push(record);
      expect(read).toEqual([usual, unusual]);
    } finally {
      await spill.remove();
    }
  });
});
