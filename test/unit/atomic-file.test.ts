/**
 * Durable local writes (issue 10, item 7): what a power cut would lose cannot be tested without one, so this
 * observes the fsyncs themselves. A spy on FileHandle.prototype.sync records which file or folder each sync was
 * for (by inode) and whether the target already had its new name at that moment; the writes are real.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseTimestamp } from '../../lambda/contract/time.js';
import type { RunSummary } from '../../lambda/contract/run-summary.js';
import { AtomicFileWriter, unwritten } from '../../lambda/stores/atomic-file.js';
import { LocalStore, STATE_DIR } from '../../lambda/stores/index.js';

interface Sync {
  readonly ino: number;
  readonly directory: boolean;
  /** Whether the watched target existed under its final name when this sync ran. */
  readonly targetThere: boolean;
}

const dirs: string[] = [];
let syncs: Sync[] = [];
let watched = '';
let fileHandlePrototype: { sync: () => Promise<void> };
let originalSync: () => Promise<void>;

beforeAll(async () => {
  const handle = await open(import.meta.filename ?? new URL(import.meta.url).pathname, 'r');
  fileHandlePrototype = Object.getPrototypeOf(handle) as typeof fileHandlePrototype;
  originalSync = fileHandlePrototype.sync;
  await handle.close();
});
afterEach(() => vi.restoreAllMocks());
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-durable-'));
  dirs.push(dir);
  return dir;
}

/** Records every fsync from now on; `target` is the file whose rename is watched. */
function watchSyncs(target: string): void {
  syncs = [];
  watched = target;
  vi.restoreAllMocks();
  vi.spyOn(fileHandlePrototype, 'sync').mockImplementation(async function (this: {
    stat: () => Promise<{ ino: number; isDirectory: () => boolean }>;
  }) {
    const info = await this.stat();
    syncs.push({ ino: info.ino, directory: info.isDirectory(), targetThere: existsSync(watched) });
    return originalSync.call(this);
  });
}

/** The syncs of `path` (a file: the temporary file renamed to it has the same inode; a folder: itself). */
function syncsOf(path: string): Sync[] {
  const ino = statSync(path).ino;
  return syncs.filter((sync) => sync.ino === ino);
}

describe('durable local writes', () => {
  it('a leaf is synced before its rename, its folder after, and the folders it created up to the data folder', async () => {
    const root = folder();
    const store = new LocalStore(root);
    const key = 'leaves/001e9fzMHc3F/newtonsoft.json/13.0.1.json';
    const target = join(root, key);
    // The folder's file-name mode is probed and recorded by the first write (its own durable write; a read writes
    // nothing): a write outside leaves/ is done first, so the syncs watched are the leaf's alone.
    await store.putJson('commits/001e9fzMHc3E.json', {});
    watchSyncs(target);
    await store.putLeaf(key, Buffer.from('{"a leaf":1}'));
    expect(syncsOf(target)).toEqual([{ ino: statSync(target).ino, directory: false, targetThere: false }]);
    for (let dir = dirname(target); dir !== dirname(root); dir = dirname(dir)) {
      expect(syncsOf(dir).length, `sync of ${dir}`).toBeGreaterThan(0);
      expect(syncsOf(dir).every((sync) => sync.directory && sync.targetThere)).toBe(true);
    }
  });

  it('a manifest into an existing folder: the file before its rename, the folder after', async () => {
    const root = folder();
    const store = new LocalStore(root);
    await store.putJson('commits/001e9fzMHc3E.json', { earlier: true });
    const target = join(root, 'commits/001e9fzMHc3F.json');
    watchSyncs(target);
    await store.putJson('commits/001e9fzMHc3F.json', { commitId: 'c' });
    expect(syncsOf(target)).toMatchObject([{ directory: false, targetThere: false }]);
    expect(syncsOf(dirname(target))).toMatchObject([{ directory: true, targetThere: true }]);
  });

  it('state.json and the run log are synced, with their folder, before the write resolves', async () => {
    const root = folder();
    const store = new LocalStore(root);
    const state = join(root, STATE_DIR, 'state.json');
    watchSyncs(state);
    await store.compareAndSet('c', undefined, {
      value: parseTimestamp('2020-01-01T00:00:00.0000000Z'),
      commitId: 'c',
      runId: 'r',
    });
    expect(syncsOf(state)).toMatchObject([{ directory: false, targetThere: false }]);
    expect(syncsOf(dirname(state)).some((sync) => sync.directory && sync.targetThere)).toBe(true);

    const log = join(root, STATE_DIR, 'runs', 'c.jsonl');
    watchSyncs(log);
    await store.appendRun({ cursorName: 'c', runId: '0001' } as RunSummary, Math.floor(Date.now() / 1000) + 3600);
    expect(syncsOf(log)).toMatchObject([{ directory: false, targetThere: true }]);
    expect(syncsOf(dirname(log)).some((sync) => sync.directory)).toBe(true);
  });

  it('durable: false (the benchmark comparison) syncs nothing', async () => {
    const root = folder();
    const store = new LocalStore(root, { durable: false });
    watchSyncs(join(root, 'x'));
    await store.putLeaf('leaves/001e9fzMHc3F/a/1.0.0.json', Buffer.from('{}'));
    expect(syncs).toEqual([]);
  });

  it('a folder removed after the writer learnt it durable is made again, and synced again with the folders above it', async () => {
    const root = folder();
    const writer = new AtomicFileWriter(root, join(root, STATE_DIR, 'tmp'));
    await writer.write(join(root, 'a/b/first.json'), Buffer.from('1'));
    // Known durable now: the next write into a/b makes no mkdir. Another process removes the folder meanwhile.
    rmSync(join(root, 'a'), { recursive: true });
    const target = join(root, 'a/b/second.json');
    watchSyncs(target);
    await writer.write(target, Buffer.from('2'));
    expect(readFileSync(target, 'utf8')).toBe('2');
    for (const dir of [join(root, 'a/b'), join(root, 'a'), root])
      expect(
        syncsOf(dir).some((sync) => sync.directory && sync.targetThere),
        `sync of ${dir}`,
      ).toBe(true);
  });

  it('a streamed body is written whole, in writes of many pieces', async () => {
    const root = folder();
    const writer = new AtomicFileWriter(root, join(root, STATE_DIR, 'tmp'));
    const pieces = Array.from({ length: 40 }, (_, i) => Buffer.alloc(61_000 + i, i));
    async function* body(): AsyncIterable<Uint8Array> {
      yield* pieces;
    }
    await writer.write(join(root, 'p/x.nupkg'), body());
    expect(readFileSync(join(root, 'p/x.nupkg')).equals(Buffer.concat(pieces))).toBe(true);
  });

  it('after a short write, the rest is what is left of the pieces', () => {
    const pieces = [Buffer.from('abc'), Buffer.from(''), Buffer.from('defg'), Buffer.from('h')];
    const text = (rest: Uint8Array[]) => Buffer.concat(rest).toString();
    expect(text(unwritten(pieces, 0))).toBe('abcdefgh');
    expect(text(unwritten(pieces, 2))).toBe('cdefgh');
    expect(text(unwritten(pieces, 3))).toBe('defgh');
    expect(text(unwritten(pieces, 5))).toBe('fgh');
    expect(unwritten(pieces, 8)).toEqual([]);
  });
});
