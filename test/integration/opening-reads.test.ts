/**
 * A slice's opening reads (lambda/sync/opening-reads.ts): asked together, decided on in the documented order. The
 * stores and the catalog are the real ones (a local folder, the catalog replica over HTTP), wrapped only to record
 * when each read is asked for and to make one fail.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatTimestamp } from '../../lambda/contract/time.js';
import { IdFilterChangedError } from '../../lambda/sync/filter-record.js';
import { runSlice, SyncError } from '../../lambda/sync/index.js';
import type { BackfillDeps } from '../../lambda/sync/index.js';
import type { CursorStore } from '../../lambda/stores/types.js';
import { generateCatalog, type GeneratedCatalog } from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { commitTicks } from '../../testkit/sync-harness.js';
import { openTarget, runsOf, settingsOf, withDeps, type BackfillTarget } from '../../testkit/backfill-harness.js';

let catalog: GeneratedCatalog;
let replica: CatalogReplica;
const targets: BackfillTarget[] = [];

beforeAll(async () => {
  catalog = generateCatalog({ commits: 6, seed: 2404 });
  replica = await CatalogReplica.start({ catalog, pageSize: 4 });
});
afterAll(async () => {
  await replica.stop();
  for (const target of targets) target.close();
});

async function fresh(): Promise<BackfillTarget> {
  const target = await openTarget('local folder');
  targets.push(target);
  return target;
}

/** The target's stores, recording each read as it is asked for (`cursor <name>`, `lease`, `index`) and as it answers. */
function recorded(
  target: BackfillTarget,
  log: string[],
  fail: { cursor?: Error; lease?: Error } = {},
): (deps: BackfillDeps) => BackfillDeps {
  const cursors: CursorStore = {
    read: async (name, options) => {
      log.push(`cursor ${name}`);
      // One turn of the event loop before answering: whatever the engine asks at once is asked by then.
      await new Promise((resolve) => setImmediate(resolve));
      if (fail.cursor && name === 'catalog-to-s3') throw fail.cursor;
      const state = await target.stores.cursors.read(name, options);
      log.push(`cursor ${name} answered`);
      return state;
    },
    compareAndSet: (...args) => target.stores.cursors.compareAndSet(...args),
  };
  const backfills = target.stores.backfills;
  return (deps) => ({
    ...deps,
    cursors,
    backfills: Object.assign(Object.create(backfills) as typeof backfills, {
      newestPlan: async (...args: Parameters<typeof backfills.newestPlan>) => {
        log.push('lease');
        if (fail.lease) throw fail.lease;
        return backfills.newestPlan(...args);
      },
    }),
    catalog: Object.assign(Object.create(deps.catalog) as typeof deps.catalog, {
      getIndex: (...args: Parameters<typeof deps.catalog.getIndex>) => {
        log.push('index');
        return deps.catalog.getIndex(...args);
      },
    }),
  });
}

describe('a slice opening its reads', () => {
  it('asks for the cursor, the lease and every dependency cursor at once, and for the index before the cursor has answered', async () => {
    const target = await fresh();
    const log: string[] = [];
    // The dependency is at the head already, so the run takes everything.
    const head = commitTicks(catalog, -1);
    await target.stores.cursors.compareAndSet('upstream', undefined, { value: head, commitId: 'c', runId: 'r' });
    const settings = settingsOf(replica.serviceIndexUrl, { DEPENDS_ON: 'upstream' });
    const summary = await withDeps(target, settings, (deps) => runSlice(settings, recorded(target, log)(deps)));
    expect(summary).toMatchObject({ stoppedBy: 'caught-up', cursorAfter: formatTimestamp(head), commits: 6 });
    const answered = log.indexOf('cursor catalog-to-s3 answered');
    expect(log.slice(0, 3)).toEqual(['lease', 'cursor catalog-to-s3', 'cursor upstream']);
    expect(log.indexOf('index')).toBeGreaterThan(-1);
    expect(log.indexOf('index')).toBeLessThan(answered);
  });

  it('a failed cursor read is thrown as it is, before the lease failure, and nothing is written', async () => {
    const target = await fresh();
    const settings = settingsOf(replica.serviceIndexUrl);
    const cursorFailure = new Error('cursor store down');
    const error = await withDeps(target, settings, (deps) =>
      runSlice(settings, recorded(target, [], { cursor: cursorFailure, lease: new Error('lease store down') })(deps)),
    ).catch((e: unknown) => e);
    expect(error).toBe(cursorFailure);
    expect(await target.stores.cursors.read(settings.cursorName)).toBeUndefined();
    expect(await runsOf(target)).toEqual([]);
    expect(await target.keys()).toEqual([]);
  });

  it('a failed lease read fails the run with that error, and the catalog index is never asked for', async () => {
    const target = await fresh();
    const log: string[] = [];
    const settings = settingsOf(replica.serviceIndexUrl);
    const indexPath = new URL(replica.catalogIndexUrl).pathname;
    const indexReads = replica.countRequests(indexPath);
    const error = await withDeps(target, settings, (deps) =>
      runSlice(settings, recorded(target, log, { lease: new Error('lease store down') })(deps)),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SyncError);
    expect((error as SyncError).cause).toMatchObject({ message: 'lease store down' });
    expect((error as SyncError).summary).toMatchObject({ stoppedBy: 'error', commits: 0 });
    expect(log).not.toContain('index');
    expect(replica.countRequests(indexPath)).toBe(indexReads);
  });

  it('a refused admission (the id filter check) is thrown as it is, while the reads were in flight, and nothing is written', async () => {
    const target = await fresh();
    const log: string[] = [];
    const settings = settingsOf(replica.serviceIndexUrl);
    const refusal = new IdFilterChangedError(
      'INCLUDE_IDS/EXCLUDE_IDS',
      undefined,
      { include: ['a*'], exclude: [] },
      'refilter',
    );
    const admission = Promise.reject(refusal);
    const error = await withDeps(target, settings, (deps) =>
      runSlice(settings, { ...recorded(target, log)(deps), admission }),
    ).catch((e: unknown) => e);
    expect(error).toBe(refusal);
    expect(log.slice(0, 2)).toEqual(['lease', 'cursor catalog-to-s3']);
    expect(await target.stores.cursors.read(settings.cursorName)).toBeUndefined();
    expect(await runsOf(target)).toEqual([]);
    expect(await target.keys()).toEqual([]);
  });
});
