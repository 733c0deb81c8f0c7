/**
 * The folder's view lock (issue 32): one process takes it once per write round, not once per index (the 32 writers
 * of one process once raced it for every write: about 85,000 failed attempts for 856 writes, and a default
 * `view --rebuild` of 3,000 commits gave up after 60 s locked out by itself); another process's writes still wait for
 * it, and the compare-and-swap still holds across the two.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { LockEvent } from '../../../lambda/stores/local-lock.js';
import { LocalStore } from '../../../lambda/stores/local-store.js';
import { LocalViewDocuments, packageIndexKey } from '../../../lambda/view/index.js';

describe('the view lock of a folder', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  const folder = (): { dir: string; store: LocalStore } => {
    const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-view-lock-'));
    dirs.push(dir);
    return { dir, store: new LocalStore(dir) };
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
