/**
 * A seed that varies from run to run, for a test whose seeds all reach the same code but in different orders
 * (e.g. where a kill lands): one seed per run instead of all of them every run keeps the run short, and over
 * many runs every seed is reached. The seed is printed, and `CATALOG_SYNC_TEST_SEED` replays one.
 */

/** The variable that replays one seed: `CATALOG_SYNC_TEST_SEED=2 npx vitest run test/…`. */
export const SEED_VARIABLE = 'CATALOG_SYNC_TEST_SEED';

/**
 * This run's seed: `CATALOG_SYNC_TEST_SEED` when set, else one of `seeds` picked from the clock (so CI runs
 * walk through them). Printed on stderr with what it is for, so a failure can be replayed.
 *
 * @param what what the seed drives, for the printed line.
 * @param seeds the seeds to choose from; not empty.
 * @throws Error when `CATALOG_SYNC_TEST_SEED` is set but not a whole number, or `seeds` is empty.
 */
export function runSeed(what: string, seeds: readonly number[]): number {
  const forced = process.env[SEED_VARIABLE];
  let seed: number;
  if (forced !== undefined && forced !== '') {
    if (!/^\d+$/.test(forced))
      throw new Error(`${SEED_VARIABLE} must be a whole number, got ${JSON.stringify(forced)}`);
    seed = Number(forced);
  } else {
    if (seeds.length === 0) throw new Error('runSeed needs at least one seed to choose from');
    // Whole minutes: every seed in turn over consecutive runs, whatever the time of day CI runs at.
    seed = seeds[Math.floor(Date.now() / 60_000) % seeds.length]!;
  }
  process.stderr.write(`${what}: seed ${seed} (replay with ${SEED_VARIABLE}=${seed})\n`);
  return seed;
}
