/**
 * The private feed's memory bounds (issue 33, part 1: memory stays bounded whatever the package's size). The budget
 * the downloads in flight share: never more taken at once than it holds, and first come, first served, so a large
 * package is not passed over by a stream of small ones. And a package written to a folder: on disk as it arrives (a
 * piece is written before the next one is read), under a temporary name until its last byte, nothing left when the
 * body fails. S3's side, parts in flight, is feed-packages.test.ts's.
 */
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HELD_PER_DOWNLOAD, LocalFeedStorage, MemoryBudget } from '../../lambda/feed/index.js';
import { LocalStore } from '../../lambda/stores/index.js';

const MiB = 1024 * 1024;

describe('the downloads’ memory budget', () => {
  it('never holds more than its bytes; a package that does not fit waits its turn, ahead of later ones', async () => {
    const budget = new MemoryBudget(40 * MiB);
    let held = 0;
    let most = 0;
    const started: string[] = [];
    const finish = new Map<string, () => void>();
    const download = (name: string, size: number) =>
      budget.run(size, async () => {
        const take = Math.min(size, HELD_PER_DOWNLOAD);
        held += take;
        most = Math.max(most, held);
        started.push(name);
        await new Promise<void>((resolve) => finish.set(name, resolve));
        held -= take;
      });
    const runs = [
      download('large-1', 250 * MiB),
      download('small-1', 1 * MiB),
      download('large-2', 240 * MiB),
      download('small-2', 1 * MiB),
      download('small-3', 1 * MiB),
    ];
    await new Promise((resolve) => setImmediate(resolve));
    // 25 + 1 taken; large-2 (25 more) does not fit, and the small ones after it wait behind it.
    expect(started).toEqual(['large-1', 'small-1']);
    finish.get('small-1')!();
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual(['large-1', 'small-1']);
    finish.get('large-1')!();
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual(['large-1', 'small-1', 'large-2', 'small-2', 'small-3']);
    for (const name of ['large-2', 'small-2', 'small-3']) finish.get(name)!();
    await Promise.all(runs);
    expect(most).toBeLessThanOrEqual(40 * MiB);
  });
});

describe('a package written to a folder', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  const folderBytes = async (dir: string): Promise<number> => {
    let bytes = 0;
    for (const entry of await readdir(dir, { withFileTypes: true, recursive: true }))
      if (entry.isFile()) bytes += (await stat(join(entry.parentPath, entry.name))).size;
    return bytes;
  };

  it('is on disk as it arrives, under its key only once whole; a failed body leaves nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'catalog-sync-feed-stream-'));
    dirs.push(dir);
    const store = new LocalStore(dir);
    const storage = new LocalFeedStorage(dir, store);
    const key = 'feed/flat/big.pkg/1.0.0/big.pkg.1.0.0.nupkg';
    const piece = Buffer.alloc(MiB, 7);
    // The folder's own record of its file names is written with the first key: the write of a small document first.
    await storage.put('feed-state/settings.json', Buffer.from('{}'), 'json');
    const before = await folderBytes(dir);
    const onDisk: number[] = [];
    async function* body(pieces: number, failAt?: number) {
      for (let n = 0; n < pieces; n++) {
        // Pulled only after every piece before it was written: the folder holds them all, the key none.
        onDisk.push((await folderBytes(dir)) - before);
        expect(await storage.read(key)).toBeUndefined();
        if (n === failAt) throw new Error('the connection dropped');
        yield piece;
      }
    }
    await expect(storage.putStream(key, body(6, 4))).rejects.toThrow('the connection dropped');
    expect(onDisk).toEqual([0, 1, 2, 3, 4].map((n) => n * MiB));
    expect(await storage.read(key)).toBeUndefined();
    expect(await folderBytes(dir)).toBe(before);

    onDisk.length = 0;
    await storage.putStream(key, body(6));
    expect(onDisk).toEqual([0, 1, 2, 3, 4, 5].map((n) => n * MiB));
    expect((await storage.read(key))?.bytes.length).toBe(6 * MiB);
  });
});
