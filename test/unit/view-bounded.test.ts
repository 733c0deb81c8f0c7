/**
 * The rebuild's hand-written concurrency bounds (lambda/view/commit-leaves.ts), checked by counting: never more
 * tasks in flight than the bound, the bound reached when there is work for it, every item once, and a failure
 * reported after every task in flight settled.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { forEachBoundedAsync, limiter } from '../../lambda/view/commit-leaves.js';

/** Yields to the event loop `turns` times: tasks that take different "times" without timers. */
async function turns(count: number): Promise<void> {
  for (let i = 0; i < count; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

async function* items(lengths: readonly number[]): AsyncGenerator<{ n: number; length: number }> {
  for (const [n, length] of lengths.entries()) {
    await turns(n % 2);
    yield { n, length };
  }
}

describe('forEachBoundedAsync and limiter', () => {
  it('forEachBoundedAsync: at most `concurrency` at once, as many as it can, every item once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 40 }),
        fc.integer({ min: 1, max: 8 }),
        async (lengths, concurrency) => {
          let running = 0;
          let peak = 0;
          const seen: number[] = [];
          await forEachBoundedAsync(items(lengths), concurrency, async ({ n, length }) => {
            running++;
            peak = Math.max(peak, running);
            await turns(length + 1);
            seen.push(n);
            running--;
          });
          expect(seen.sort((a, b) => a - b)).toEqual(lengths.map((_, n) => n));
          expect(peak).toBeLessThanOrEqual(concurrency);
          if (lengths.length >= concurrency && lengths.every((length) => length === lengths[0]))
            expect(peak).toBe(concurrency);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('forEachBoundedAsync: the first failure, once the tasks in flight settled; no item taken after it', async () => {
    let running = 0;
    const started: number[] = [];
    const failing = forEachBoundedAsync(items(Array.from({ length: 20 }, () => 2)), 3, async ({ n }) => {
      started.push(n);
      running++;
      await turns(n === 4 ? 1 : 3);
      running--;
      if (n === 4) throw new Error('item 4');
    });
    await expect(failing).rejects.toThrow('item 4');
    expect(running).toBe(0);
    expect(Math.max(...started)).toBeLessThan(10);
  });

  it('limiter: at most `limit` tasks at once across callers, each run once, results and failures passed through', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 40 }),
        fc.integer({ min: 1, max: 6 }),
        async (lengths, limit) => {
          const run = limiter(limit);
          let running = 0;
          let peak = 0;
          const results = await Promise.allSettled(
            lengths.map((length, n) =>
              run(async () => {
                running++;
                peak = Math.max(peak, running);
                await turns(length);
                running--;
                if (length === 3) throw new Error(`task ${n}`);
                return n;
              }),
            ),
          );
          expect(peak).toBeLessThanOrEqual(limit);
          if (lengths.length >= limit) expect(peak).toBe(limit);
          results.forEach((result, n) =>
            expect(result).toEqual(
              lengths[n] === 3
                ? { status: 'rejected', reason: new Error(`task ${n}`) }
                : { status: 'fulfilled', value: n },
            ),
          );
        },
      ),
      { numRuns: 60 },
    );
  });
});
