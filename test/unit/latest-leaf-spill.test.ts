/**
 * The rebuild spill's shard hash (lambda/view/latest-leaf-spill.ts), written by hand: held to the published FNV-1a
 * 32-bit test vectors of the FNV reference (Fowler, Noll, Vo; the `test_fnv.c` vectors for FNV-1a 32), which
 * share nothing with our code, and to the spread a shard needs.
 */
import { describe, expect, it } from 'vitest';
import { fnv1a32, LatestLeafSpill } from '../../lambda/view/latest-leaf-spill.js';

describe('fnv1a32', () => {
  it.each([
    ['', 0x811c9dc5],
    ['a', 0xe40c292c],
    ['b', 0xe70c2de5],
    ['c', 0xe60c2c52],
    ['foo', 0xa9f37ed7],
    ['foobar', 0xbf9cf968],
  ])('FNV-1a 32 of %j is the published value', (text, expected) => {
    expect(fnv1a32(text)).toBe(expected);
  });

  it('puts a package in one shard, the same every time, and spreads 10,000 ids over 64 shards', async () => {
    const spill = await LatestLeafSpill.open({ shards: 64 });
    try {
      const counts = new Array<number>(64).fill(0);
      for (let i = 0; i < 10_000; i++) {
        const id = `contoso.package${i}.extensions`;
        const shard = spill.shardOf(id);
        expect(spill.shardOf(id)).toBe(shard);
        counts[shard]! += 1;
      }
      // 156 a shard on average: none empty, none with twice its share.
      expect(Math.min(...counts)).toBeGreaterThan(0);
      expect(Math.max(...counts)).toBeLessThan(2 * (10_000 / 64));
    } finally {
      await spill.remove();
    }
  });
});
