/**
 * The folder's view lock (issue 32): one process takes it once per write round, not once per index (the 32 writers
 * of one process once raced it for every write: about 85,000 failed attempts for 856 writes, and a default
 * `view --rebuild` of 3,000 commits gave up after 60 s locked out by itself); another process's writes still wait for
 * it, and the compare-and-swap still holds across the two.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { readCommits, type MirrorCommit } from '../../../lambda/consumer/index.js';
import { LocalLock, type LockEvent } from '../../../lambda/stores/local-lock.js';
import { LocalStore } from '../../../lambda/stores/local-store.js';
import { applyBatchToView, LocalViewDocuments, packageIndexKey } from '../../../lambda/view/index.js';
import type { GeneratedCommit } from '../../../testkit/generated-commit.js';
import { expectedView, writeMirror } from '../../../testkit/view-mirror.js';

/** 40 commits of 5 packages each: 200 packages, one batch. */
const commits: GeneratedCommit[] = Array.from({ length: 40 }, (_, c) => ({
  commitId: `00000000-0000-4000-8000-${String(c).padStart(12, '0')}`,
  timestamp: `2024-01-01T00:00:${String(c).padStart(2, '0')}.0000000Z`,
  leaves: Array.from({ length: 5 }, (_, l) => ({
    id: `Lock.Pkg${c * 5 + l}`,
    version: '1.0.0',
    type: 'PackageDetails' as const,
    path: `/${c}/${l}.json`,
    listed: true,
  })),
}));

describe('the view lock of a folder', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  afterEach(() => vi.restoreAllMocks());
  /** `durable: false` where the fsyncs are not what a test looks at (they are most of its time). */
  const folder = (durable = true): { dir: string; store: LocalStore } => {
    const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-view-lock-'));
    dirs.push(dir);
    return { dir, store: new LocalStore(dir, { durable }) };
  };
  /** A lock's events as they come; `at(event)` resolves at the first of them, and `hold` is awaited there if given. */
  const observed = (hold?: { readonly event: LockEvent; readonly until: Promise<void> }) => {
    const events: LockEvent[] = [];
    const seen = new Map<LockEvent, () => void>();
    const firsts = new Map<LockEvent, Promise<void>>();
    const at = (event: LockEvent): Promise<void> => {
      let first = firsts.get(event);
      if (first === undefined) firsts.set(event, (first = new Promise((resolve) => seen.set(event, resolve))));
      return first;
    };
    return {
      events,
      at,
      options: {
        onLockEvent: async (event: LockEvent) => {
          const firstTime = !events.includes(event);
          events.push(event);
          void at(event);
          seen.get(event)!();
          if (firstTime && event === hold?.event) await hold.until;
        },
      },
    };
  };

  it('a batch of 200 packages takes the lock once, and the process never waits for itself', async () => {
    const { dir, store } = folder(false);
    await writeMirror(store, '', commits);
    const delivered: MirrorCommit[] = [];
    for await (const commit of readCommits({ store, prefix: '', where: dir })) delivered.push(commit);
    const acquisitions = vi.spyOn(LocalLock.prototype, 'hold');
    const lock = observed();
    const documents = new LocalViewDocuments(dir, store, lock.options);
    expect(await applyBatchToView({ documents, prefix: '' }, delivered)).toEqual({ written: 200, current: 0 });
    // Before: one acquisition per index (200), each while 31 other writers of the process spun on the lock.
    expect(acquisitions).toHaveBeenCalledTimes(1);
    expect(lock.events.filter((event) => event === 'waiting')).toEqual([]);
    const expected = expectedView('', commits, new Map());
    for (const [id, index] of expected) {
      const stored = await documents.read(packageIndexKey('', id));
      expect(JSON.parse(stored!.bytes.toString('utf8'))).toEqual(index);
    }
  });

  it("another process's writes wait while a round holds the lock, then keep the compare-and-swap", async () => {
    const { dir, store } = folder();
    let release!: () => void;
    const a = observed({ event: 'acquired', until: new Promise<void>((resolve) => (release = resolve)) });
    const b = observed();
    // Two LocalViewDocuments of one folder, each with its own lock: what two processes have.
    const first = new LocalViewDocuments(dir, store, a.options);
    const second = new LocalViewDocuments(dir, store, b.options);
    const key = packageIndexKey('', 'Shared.Pkg');
    const other = packageIndexKey('', 'Other.Pkg');
    const byFirst = first.writeMany([{ key, bytes: Buffer.from('{"by":"first"}'), expected: undefined }]);
    await a.at('acquired');
    let secondDone = false;
    const bySecond = second
      .writeMany([
        { key, bytes: Buffer.from('{"by":"second"}'), expected: undefined },
        { key: other, bytes: Buffer.from('{"by":"second"}'), expected: undefined },
      ])
      .finally(() => (secondDone = true));
    await b.at('waiting');
    expect(secondDone).toBe(false);
    release();
    expect(await byFirst).toEqual([true]);
    // The second built on "no index yet", which the first's write made false: refused; its other write goes in.
    expect(await bySecond).toEqual([false, true]);
    expect((await first.read(key))!.bytes.toString()).toBe('{"by":"first"}');
    expect((await first.read(other))!.bytes.toString()).toBe('{"by":"second"}');
    expect(b.events.filter((event) => event === 'acquired')).toHaveLength(1);
  });
});
