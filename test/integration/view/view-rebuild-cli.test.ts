/**
 * `catalog-sync view --rebuild --workers N` on a folder mirror (issue 32): one rebuild at a time (a second one, and
 * upkeep, are told the running rebuild's id and holder and write nothing), a rebuild whose process was killed is
 * taken up by the next run with worker processes (its done range skipped), giving the catalog's view; the cursor
 * moves to the rebuild's bound, and upkeep then takes over from there.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumerKey } from '../../../lambda/consumer/consumer-cursors.js';
import { LocalStore } from '../../../lambda/stores/local-store.js';
import { folderViewStores, packageIndexKey, planRebuild, runRebuildBatch } from '../../../lambda/view/index.js';
import { generateCatalog } from '../../../testkit/catalog-generator.js';
import { runCli } from '../../../testkit/cli-process.js';
import { expectedView, writeMirror } from '../../../testkit/view-mirror.js';

describe('view --rebuild --workers on a folder', () => {
  let dir: string;
  const catalog = generateCatalog({ commits: 24, seed: 3233, leavesPerCommit: [1, 4], deleteRatio: 0.25 });
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'catalog-sync-view-rebuild-cli-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const cli = (...args: string[]) => runCli([...args, '--data-dir', dir]);

  it('a second rebuild and upkeep are told it runs; a killed one is resumed by workers; upkeep goes on from its bound', async () => {
    const stores = folderViewStores(dir);
    const mirror = new LocalStore(dir);
    await writeMirror(mirror, '', catalog.commits.slice(0, 18));
    // A rebuild held by a live process of this host (the lease lasts; that process is not a catalog-sync).
    const holderProcess = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    const holder = `${holderProcess.pid}@${hostname()}`;
    try {
      const planned = await planRebuild(stores, { holder, shards: 3, rangeManifests: 6 });
      if (planned.running) throw new Error('expected a new plan');
      const { plan, ranges } = planned;
      expect(ranges).toHaveLength(3);
      await runRebuildBatch(stores, { rebuildId: plan.backfillId, items: ranges.slice(0, 1) }, { holder });

      const second = await cli('view', '--rebuild', '--workers', '2');
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(`view rebuild ${plan.backfillId} is running (held by ${holder})`);
      const upkeep = await cli('view', '--json');
      expect(upkeep.code, upkeep.stderr).toBe(0);
      expect(JSON.parse(upkeep.stdout)).toMatchObject({
        stoppedBy: 'rebuild-running',
        rebuild: { rebuildId: plan.backfillId, holder },
      });
      expect(await stores.cursors.read(consumerKey(stores.mirror, 'view-latest'))).toBeUndefined();

      // Its process killed: the next run takes it up at once, the done range skipped.
      holderProcess.kill('SIGKILL');
      await new Promise((resolve) => holderProcess.once('exit', resolve));
      const resumed = await cli('view', '--rebuild', '--workers', '2', '--json');
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(JSON.parse(resumed.stdout)).toMatchObject({
        rebuildId: plan.backfillId,
        resumed: true,
        complete: true,
        cursorMoved: true,
        commits: 18,
        ranges: 3,
        shards: 3,
      });
      expect((await stores.cursors.read(consumerKey(stores.mirror, 'view-latest')))?.commitId).toBe(plan.boundCommitId);
    } finally {
      holderProcess.kill('SIGKILL');
    }

    // Upkeep takes over from the bound: the 6 commits after it; the catalog's view.
    await writeMirror(mirror, '', catalog.commits.slice(18));
    const after = await cli('view', '--json');
    expect(after.code, after.stderr).toBe(0);
    expect(JSON.parse(after.stdout)).toMatchObject({ commits: 6 });
    for (const index of expectedView('', catalog.commits, new Map()).values()) {
      const key = packageIndexKey('', (index as { id: string }).id);
      expect(await mirror.getJson(key), key).toEqual(index);
    }
  }, 60_000);
});
