/** testkit/run-seed.ts: one seed a run, from the clock or replayed from CATALOG_SYNC_TEST_SEED, and printed. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runSeed, SEED_VARIABLE } from '../../testkit/run-seed.js';

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

describe('runSeed', () => {
  it('replays the seed CATALOG_SYNC_TEST_SEED names, even one not in the list, and prints it', () => {
    vi.stubEnv(SEED_VARIABLE, '42');
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    expect(runSeed('kill points', [1, 2, 3])).toBe(42);
    expect(write).toHaveBeenCalledWith(`kill points: seed 42 (replay with ${SEED_VARIABLE}=42)\n`);
  });

  it('refuses a CATALOG_SYNC_TEST_SEED that is not a whole number, naming it', () => {
    vi.stubEnv(SEED_VARIABLE, '1.5');
    expect(() => runSeed('kill points', [1, 2, 3])).toThrow(
      /CATALOG_SYNC_TEST_SEED must be a whole number, got "1\.5"/,
    );
  });

  it('without it, walks through every seed of the list over consecutive minutes', () => {
    vi.stubEnv(SEED_VARIABLE, '');
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const seen = new Set<number>();
    for (let minute = 0; minute < 3; minute++) {
      vi.spyOn(Date, 'now').mockReturnValue(1_795_000_000_000 + minute * 60_000);
      seen.add(runSeed('kill points', [1, 2, 3]));
    }
    expect([...seen].sort()).toEqual([1, 2, 3]);
    expect(() => runSeed('kill points', [])).toThrow(/at least one seed/);
  });
});
