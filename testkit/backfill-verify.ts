/**
 * The folder verifier for a data folder a backfill wrote to: a backfill also keeps its plan's ranges file,
 * `<prefix>backfill/<id>/ranges.json`, beside the snapshots (the object a Distributed Map reads on AWS), which
 * {@link verifyLocal} would call an unexpected file. Everything else is checked exactly as for a follower.
 */
import type { Ticks } from '../lambda/contract/time.js';
import type { GeneratedCatalog } from './catalog-generator.js';
import { localKeys, verifyLocal } from './local-verify.js';

const RANGES_FILE = /^backfill\/[0-9A-Za-z]{32}\/ranges\.json$/;

/** {@link verifyLocal}, the backfill's ranges files allowed. */
export async function verifyBackfilled(
  dataDir: string,
  catalog: GeneratedCatalog,
  origin: string,
  upTo: Ticks,
  prefix = '',
): Promise<string[]> {
  const problems = await verifyLocal(dataDir, catalog, origin, upTo, prefix);
  return problems.filter(
    (problem) =>
      !(
        problem.startsWith(`unexpected file ${prefix}`) &&
        RANGES_FILE.test(problem.slice(`unexpected file ${prefix}`.length))
      ),
  );
}

/** The snapshot keys of a folder (as {@link localKeys}), without the backfill's ranges files. */
export async function snapshotKeys(dataDir: string, prefix = ''): Promise<string[]> {
  return (await localKeys(dataDir, prefix)).filter((key) => !RANGES_FILE.test(key.slice(prefix.length)));
}
