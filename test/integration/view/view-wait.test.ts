/**
 * Upkeep from the command line while a rebuild holds the view (issue 32; lambda/view/cli/view-wait.ts), in-process
 * on a folder: `view` runs nothing and stops; `view --follow` waits, runs upkeep only once the rebuild finished (the
 * cursor then at its bound), stops its pass when a rebuild starts meanwhile, and runs again once that one is gone.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumerKey } from '../../../lambda/consumer/consumer-cursors.js';
import { LocalStore } from '../../../lambda/stores/local-store.js';
import { keepViewAfterRebuilds } from '../../../lambda/view/cli/view-wait.js';
import type { ViewRunResult } from '../../../lambda/view/view-consumer.js';
import {
  abandonRebuild,
  finishRebuild,
  folderViewStores,
  planRebuild,
  runRebuildBatch,
  type ViewStores,
} from '../../../lambda/view/index.js';
import { generateCatalog } from '../../../testkit/catalog-generator.js';
import { writeMirror } from '../../../testkit/view-mirror.js';

describe('upkeep waits for a running rebuild (CLI)', () => {
  let dir: string;
  let stores: ViewStores;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'catalog-sync-view-wait-'));
    await writeMirror(new LocalStore(dir), '', generateCatalog({ commits: 8, seed: 3234 }).commits);
    stores = folderViewStores(dir);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function plan() {
    const planned = await planRebuild(stores, { holder: '1@another-host.example', shards: 2 });
    if (planned.running) throw new Error('expected a plan');
    return planned;
  }

  it('view stops; view --follow takes over after the rebuild, and waits again for one that starts meanwhile', async () => {
    const { plan: first, ranges, shards } = await plan();
    const runs: { cursor: string | undefined }[] = [];
    const result = { consumer: 'view-latest', commits: 0 } as unknown as ViewRunResult;
    expect(
      await keepViewAfterRebuilds(stores, 'view-latest', false, 10, new AbortController().signal, async () => {
        runs.push({ cursor: undefined });
        return result;
      }),
    ).toBeUndefined();
    expect(runs).toEqual([]);

    const cursor = consumerKey(stores.mirror, 'view-latest');
    const stop = new AbortController();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let finished: Promise<unknown> | undefined;
    const following = keepViewAfterRebuilds(stores, 'view-latest', true, 10, stop.signal, async (signal) => {
      runs.push({ cursor: (await stores.cursors.read(cursor))?.commitId });
      if (runs.length === 1) {
        // A rebuild starts while upkeep follows: this pass is stopped (once the finish returned: between its plan
        // marked finished and its claim released, a planner is told it runs).
        await finished;
        await plan();
        if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        release();
      }
      return result;
    });
    const rebuildId = first.backfillId;
    await runRebuildBatch(stores, { rebuildId, items: [...ranges, ...shards] });
    expect(runs).toEqual([]);
    finished = finishRebuild(stores, { rebuildId });
    await finished;
    // Once the second rebuild is abandoned, upkeep runs again and the follow loop returns its result. A follow loop
    // that fails meanwhile fails the test at once, with its error, rather than leaving it waiting.
    await Promise.race([released, following.then(() => Promise.reject(new Error('the follow loop ended early')))]);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.cursor).toBe(first.boundCommitId);
    await abandonRebuild(stores);
    expect(await following).toBe(result);
    expect(runs).toHaveLength(2);
  });
});
