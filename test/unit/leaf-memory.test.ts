/**
 * The leaf memory budget (issue 30, item 3): its size from the process's memory (contract/leaf-memory.ts), and the
 * engine's leases on it (sync/leaf-memory.ts): bounded, in order, never waiting while holding, aborted by the run.
 */
import { describe, expect, it } from 'vitest';
import { leafMemoryBudget, MIN_LEAF_MEMORY_BYTES, type ProcessMemory } from '../../lambda/contract/leaf-memory.js';
import { SettingsError } from '../../lambda/contract/settings.js';
import type { CatalogClient, PageItem } from '../../lambda/catalog/index.js';
import { BodyDeferredError, FetchAbortedError } from '../../lambda/catalog/http-errors.js';
import { fetchWithin, LeafMemory } from '../../lambda/sync/leaf-memory.js';

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;
const machine: ProcessMemory = { totalBytes: 16 * GIB, heapLimitBytes: 4 * GIB };

describe('the leaf memory budget', () => {
  it("is a quarter of the function's memory in Lambda", () => {
    expect(leafMemoryBudget({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512' }, machine)).toEqual({
      bytes: 128 * MIB,
      from: "a quarter of the function's 512 MB",
    });
    expect(leafMemoryBudget({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '1769' }, machine).bytes).toBe(
      Math.floor(1769 * MIB * 0.25),
    );
  });

  it('is a quarter of the least of the machine, its container and the V8 heap elsewhere', () => {
    expect(leafMemoryBudget({}, machine)).toEqual({ bytes: GIB, from: "a quarter of 4096 MiB, V8's heap limit" });
    expect(leafMemoryBudget({}, { ...machine, constrainedBytes: 2 * GIB })).toEqual({
      bytes: GIB / 2,
      from: "a quarter of 2048 MiB, the container's memory limit",
    });
    expect(leafMemoryBudget({}, { totalBytes: GIB, heapLimitBytes: 4 * GIB })).toEqual({
      bytes: GIB / 4,
      from: "a quarter of 1024 MiB, the machine's memory",
    });
  });

  it('is never below its floor', () => {
    expect(leafMemoryBudget({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '32' }, machine)).toEqual({
      bytes: MIN_LEAF_MEMORY_BYTES,
      from: 'the least budget, 16 MiB',
    });
  });

  it('is LEAF_MEMORY_MB when set, and a bad value names it', () => {
    expect(leafMemoryBudget({ LEAF_MEMORY_MB: '300', AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512' }, machine)).toEqual({
      bytes: 300 * MIB,
      from: 'LEAF_MEMORY_MB=300',
    });
    for (const bad of ['0', '1.5', 'lots', '-3']) {
      expect(() => leafMemoryBudget({ LEAF_MEMORY_MB: bad }, machine)).toThrow(SettingsError);
      expect(() => leafMemoryBudget({ LEAF_MEMORY_MB: bad }, machine)).toThrow(/^LEAF_MEMORY_MB: /);
    }
  });
});

describe('leases on the budget', () => {
  const budget = (bytes: number): LeafMemory => new LeafMemory({ bytes, from: 'the test' });

  it('grow at once while they fit, say later when others hold the rest, never past the whole budget', () => {
    const memory = budget(100);
    const a = memory.tryLease(0)!;
    const b = memory.tryLease(10)!;
    expect(a.hold(60)).toBe('held');
    expect(a.hold(40)).toBe('held'); // holding more already
    expect(b.hold(50)).toBe('later'); // 60 + 50 > 100
    expect(b.hold(40)).toBe('held');
    expect(a.hold(101)).toBe('never');
    expect(memory.held).toBe(100);
    a.shrink(20);
    expect(memory.held).toBe(60);
    a.release();
    b.release();
    b.release();
    expect(memory.held).toBe(0);
    expect(memory.peak).toBe(100);
  });

  it('are granted in the order asked, a later small one waiting behind an earlier large one', async () => {
    const memory = budget(100);
    const holder = memory.tryLease(90)!;
    const order: string[] = [];
    const large = memory.lease(50).then((lease) => (order.push('large'), lease));
    // Fits now, but a lease asked before it waits: it waits too, and no lease is granted past it.
    expect(memory.tryLease(5)).toBeUndefined();
    const small = memory.lease(5).then((lease) => (order.push('small'), lease));
    await Promise.resolve();
    expect(order).toEqual([]);
    holder.release();
    const [l, s] = await Promise.all([large, small]);
    expect(order).toEqual(['large', 'small']);
    expect(memory.held).toBe(55);
    l.release();
    s.release();
  });

  it('stop waiting when the run stops, and the lease behind goes on', async () => {
    const memory = budget(100);
    const holder = memory.tryLease(100)!;
    const stop = new AbortController();
    const stopped = memory.lease(80, stop.signal).catch((error: unknown) => error);
    const behind = memory.lease(10);
    stop.abort(new Error('the run stopped'));
    expect(await stopped).toMatchObject({ message: 'the run stopped' });
    holder.shrink(90);
    (await behind).release();
    holder.release();
    expect(memory.held).toBe(0);
  });

  it("hold a body until its last write ends, past the leaf's release (a hedged PUT's other write)", async () => {
    const memory = budget(100);
    const lease = memory.tryLease(40)!;
    let finish!: () => void;
    const other = lease.during(new Promise<void>((resolve) => (finish = resolve)));
    await lease.during(Promise.resolve());
    lease.release();
    expect(memory.held).toBe(40);
    finish();
    await other;
    expect(memory.held).toBe(0);
  });

  it('refuse one larger than the whole budget at once', async () => {
    await expect(budget(10).lease(11)).rejects.toThrow(RangeError);
  });
});

describe('a leaf fetched within the budget', () => {
  const item = { url: 'https://feed.example/leaf.json' } as PageItem;
  /** A catalog whose first answers are each body's deferral, then the body (the HTTP client's side is the integration tests'). */
  function catalog(deferrals: number[], body: Buffer): { client: CatalogClient; holds: number[] } {
    const holds: number[] = [];
    const client = {
      getLeaf: async (_: PageItem, { memory }: { memory: { held: number } }) => {
        holds.push(memory.held);
        const next = deferrals.shift();
        if (next !== undefined) throw new BodyDeferredError(item.url, next);
        return { body, leaf: {}, attempts: 1 };
      },
    } as unknown as CatalogClient;
    return { client, holds };
  }

  it('is fetched again holding what its deferral asked for, and keeps only its body held', async () => {
    const memory = new LeafMemory({ bytes: 100, from: 'the test' });
    const { client, holds } = catalog([60, 80], Buffer.alloc(50));
    const { body, lease } = await fetchWithin(client, memory, item, {});
    expect(holds).toEqual([0, 60, 80]);
    expect(body.length).toBe(50);
    expect(memory.held).toBe(50);
    lease.release();
    expect(memory.held).toBe(0);
  });

  it('stops waiting for memory when the run stops: an abort, not a failure', async () => {
    const memory = new LeafMemory({ bytes: 100, from: 'the test' });
    const holder = memory.tryLease(100)!;
    const stop = new AbortController();
    const waiting = fetchWithin(catalog([10], Buffer.alloc(10)).client, memory, item, { signal: stop.signal }).catch(
      (e: unknown) => e,
    );
    stop.abort(new Error('time budget'));
    const error = await waiting;
    expect(error).toBeInstanceOf(FetchAbortedError);
    expect((error as Error).message).toBe(
      'https://feed.example/leaf.json: aborted while waiting for memory: the run was stopped (time budget reached or interrupted)',
    );
    holder.release();
  });
});
