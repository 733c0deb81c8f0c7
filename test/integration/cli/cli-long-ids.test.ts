/**
 * Every identity a store can hold is stored (issue 19): nuget.org's database holds ids of up to 128 characters,
 * more than NuGet's client rule of 100. `catalog-sync run` as a child process stores ids of 101, 107 and 128
 * characters end to end on S3 (s3rver + DynamoDB Local) and in a local folder, byte for byte; an id past the
 * store's bound (S3: 929 bytes for {id} and {version}; a folder: 255-byte file names) still stops the run before
 * its commit, naming the bound.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { commitKey, leafKey } from '../../../lambda/contract/keys.js';
import { formatTimestamp } from '../../../lambda/contract/time.js';
import { generateCatalog, type GeneratedCatalog } from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { runCli } from '../../../testkit/cli-process.js';
import { readLocalCursor, verifyLocal } from '../../../testkit/local-verify.js';
import { giveLongIds, longId } from '../../../testkit/long-ids.js';
import { commitTicks, SyncHarness } from '../../../testkit/sync-harness.js';

const LENGTHS = [101, 107, 128] as const;
/** The commit whose first leaf gets an id past the store's bound. */
const PAST_BOUND_COMMIT = 6;

const replicas: CatalogReplica[] = [];
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(replicas.map((replica) => replica.stop()));
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A catalog with ids of 101, 107 and 128 characters in commits 1-3, and one of `pastBound` characters in commit 6. */
async function longIdCatalog(pastBound: number): Promise<{ catalog: GeneratedCatalog; replica: CatalogReplica }> {
  const catalog = generateCatalog({ commits: 10, seed: 1901, leavesPerCommit: [1, 3], deleteRatio: 0 });
  giveLongIds(catalog, LENGTHS, 1);
  giveLongIds(catalog, [pastBound], PAST_BOUND_COMMIT);
  const replica = await CatalogReplica.start({ catalog, pageSize: 20 });
  replicas.push(replica);
  return { catalog, replica };
}

describe('ids of 101, 107 and 128 characters, stored by the CLI', () => {
  it('on S3 and DynamoDB: stored byte for byte under their full keys; a 1,000-character id stops the run before its commit', async () => {
    const { catalog, replica } = await longIdCatalog(1_000);
    const harness = await SyncHarness.create();
    const result = await runCli(
      [
        'run',
        '--source',
        replica.serviceIndexUrl,
        '--cursor-table',
        harness.table,
        '--bucket',
        harness.bucket,
        '--json',
      ],
      harness.env(),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`its key segments {id} and {version} encode to 1000 + `);
    expect(result.stderr).toContain('at most 929 keep every key below 1024 bytes');
    const lastGood = commitTicks(catalog, PAST_BOUND_COMMIT - 1);
    expect(await harness.cursor()).toBe(formatTimestamp(lastGood));
    expect(await harness.verify(catalog, replica.origin, lastGood)).toEqual([]);
    for (const [i, length] of LENGTHS.entries()) {
      const leaf = catalog.commits[1 + i]!.leaves[0]!;
      expect(leaf.id).toHaveLength(length);
      const key = leafKey('', commitKey(commitTicks(catalog, 1 + i)), leaf.id, leaf.version);
      expect(key.split('/')[2]).toBe(leaf.id.toLowerCase());
      expect((await harness.getObject(key)).metadata['nuget-id']).toBe(leaf.id);
    }
  });

  it('in a local folder: stored byte for byte; a 300-character id (a 300-byte file name) stops the run before its commit', async () => {
    const { catalog, replica } = await longIdCatalog(300);
    const dir = await mkdtemp(join(tmpdir(), 'catalog-sync-long-ids-'));
    dirs.push(dir);
    const result = await runCli(['run', '--source', replica.serviceIndexUrl, '--data-dir', dir, '--json']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`package "${longId(300, PAST_BOUND_COMMIT).slice(0, 150)}`);
    expect(result.stderr).toContain(
      'cannot be stored in this store: its key segment {id} encodes to 300 bytes; this store holds at most 255 bytes per segment',
    );
    const lastGood = commitTicks(catalog, PAST_BOUND_COMMIT - 1);
    expect(await readLocalCursor(dir)).toBe(formatTimestamp(lastGood));
    expect(await verifyLocal(dir, catalog, replica.origin, lastGood)).toEqual([]);
    for (const [i, length] of LENGTHS.entries()) expect(catalog.commits[1 + i]!.leaves[0]!.id).toHaveLength(length);
  });
});
