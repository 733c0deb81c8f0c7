/**
 * With quarantine on, a leaf that still fails after retries, or fails validation, is set aside under
 * `quarantine/`, marked in its commit's manifest, counted, and the run goes on. A page that fails still stops.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogClient } from '../../lambda/catalog/catalog-client.js';
import { HttpClient } from '../../lambda/catalog/http-client.js';
import { quarantineKey, leafKey } from '../../lambda/catalog/identity.js';
import { formatTimestamp } from '../../lambda/catalog/timestamp.js';
import { commitKey } from '../../lambda/ids/commit-key.js';
import { SyncError } from '../../lambda/sync/engine.js';
import { generateCatalog, leafBody, type GeneratedCatalog } from '../support/catalog-generator.js';
import { CatalogReplica } from '../support/catalog-replica.js';
import { commitTicks, FAST_RETRY, SyncHarness } from '../support/sync-harness.js';
import { runCli } from '../support/cli-process.js';
import { verifyLocal } from '../support/local-verify.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let catalog: GeneratedCatalog;
let replica: CatalogReplica;

beforeAll(async () => {
  catalog = generateCatalog({ commits: 20, seed: 91, leavesPerCommit: [2, 3], deleteRatio: 0 });
  replica = await CatalogReplica.start({ catalog, pageSize: 10 });
});
afterAll(async () => {
  await replica.stop();
});

describe('quarantine', () => {
  it('sets aside a leaf that keeps failing and one that is invalid, marks them, and goes on to the head', async () => {
    const harness = await SyncHarness.create();
    const failing = catalog.commits[5]!.leaves[0]!;
    const invalid = catalog.commits[9]!.leaves[1]!;
    replica.failWith(failing.path, 503, 1_000);
    replica.overrideBody(invalid.path, '{"@type": "PackageDetails"}', { times: 1_000 });
    try {
      const summary = await harness.run(replica.serviceIndexUrl, { QUARANTINE: 'true' });
      const leaves = catalog.commits.reduce((n, c) => n + c.leaves.length, 0);
      expect(summary).toMatchObject({ stoppedBy: 'caught-up', commits: 20, quarantined: 2, leaves: leaves - 2 });
      expect(await harness.cursor()).toBe(formatTimestamp(commitTicks(catalog, -1)));

      for (const [commitIndex, leaf, reason] of [
        [5, failing, 'HTTP 503'],
        [9, invalid, 'catalog:commitId'],
      ] as const) {
        const key = commitKey(commitTicks(catalog, commitIndex));
        const record = (await harness.snapshots.getJson(quarantineKey('', key, leaf.id, leaf.version))) as Record<string, unknown>;
        expect(record.url).toBe(replica.leafUrl(leaf));
        expect(String(record.error)).toContain(reason);
        expect(record.attempts).toBeGreaterThanOrEqual(1);
        expect(record.item).toMatchObject({ '@id': replica.leafUrl(leaf), 'nuget:id': leaf.id, 'nuget:version': leaf.version });
        const manifest = (await harness.snapshots.getJson(`commits/${key}.json`)) as { leaves: { key: string; quarantined?: boolean }[] };
        const entry = manifest.leaves.find((e) => e.key === leafKey('', key, leaf.id, leaf.version));
        expect(entry?.quarantined).toBe(true);
        expect(manifest.leaves.filter((e) => e.quarantined)).toHaveLength(1);
        expect(await harness.exists(leafKey('', key, leaf.id, leaf.version))).toBe(false);
      }
      expect((await harness.keys('quarantine/')).length).toBe(2);
      expect((await harness.store.listRuns('catalog-to-s3', { limit: 1 }))[0]).toMatchObject({ quarantined: 2 });
    } finally {
      replica.clearFaults();
    }
  });

  describe('a leaf that keeps hitting its total timeout', () => {
    const slowLeaf = () => catalog.commits[7]!.leaves[0]!;
    /**
     * A catalog client whose requests time out after 1.5 s in all, with two attempts: short for a test, yet
     * far above what an honest leaf takes on a loaded machine.
     */
    async function withShortTimeout<T>(use: (catalog: CatalogClient) => Promise<T>): Promise<T> {
      const http = new HttpClient({ totalTimeoutMs: 1_500, retry: { ...FAST_RETRY, attempts: 2 } });
      try {
        return await use(new CatalogClient(http, replica.serviceIndexUrl));
      } finally {
        await http.close();
      }
    }

    it('is set aside by quarantine, and the run goes on to the head', async () => {
      const harness = await SyncHarness.create();
      replica.trickleBody(slowLeaf().path, 200, 1_000);
      try {
        const summary = await withShortTimeout((client) => harness.run(replica.serviceIndexUrl, { QUARANTINE: 'true' }, { catalog: client }));
        expect(summary).toMatchObject({ stoppedBy: 'caught-up', commits: 20, quarantined: 1 });
        expect(await harness.cursor()).toBe(formatTimestamp(commitTicks(catalog, -1)));
        const key = commitKey(commitTicks(catalog, 7));
        const record = (await harness.snapshots.getJson(quarantineKey('', key, slowLeaf().id, slowLeaf().version))) as Record<string, unknown>;
        expect(record.error).toBe(`${replica.leafUrl(slowLeaf())}: total timeout of 1.5 s exceeded (response headers and body)`);
        expect(record.attempts).toBe(2);
      } finally {
        replica.clearFaults();
      }
    });

    it('without quarantine stops the run at the commit before it, naming the URL and the timeout', async () => {
      const harness = await SyncHarness.create();
      replica.trickleBody(slowLeaf().path, 200, 1_000);
      try {
        const error = await withShortTimeout((client) => harness.run(replica.serviceIndexUrl, {}, { catalog: client })).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(SyncError);
        expect((error as Error).message).toContain(`${replica.leafUrl(slowLeaf())}: total timeout of 1.5 s exceeded`);
        expect((error as SyncError).summary).toMatchObject({ stoppedBy: 'error', commits: 7, cursorAfter: formatTimestamp(commitTicks(catalog, 6)) });
      } finally {
        replica.clearFaults();
      }
    });
  });

  it('a page that fails still stops the run', async () => {
    const harness = await SyncHarness.create();
    const pages = replica.pagePaths();
    replica.failWith(pages[1]!, 500, 1_000);
    try {
      const error = await harness.run(replica.serviceIndexUrl, { QUARANTINE: 'true' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SyncError);
      expect((error as Error).message).toContain(`${replica.origin}${pages[1]}: HTTP 500`);
      expect((await harness.keys('quarantine/')).length).toBe(0);
    } finally {
      replica.clearFaults();
    }
  });

  it('is off by default: the same leaf stops the run', async () => {
    const harness = await SyncHarness.create();
    const failing = catalog.commits[5]!.leaves[0]!;
    replica.failWith(failing.path, 503, 1_000);
    try {
      const error = await harness.run(replica.serviceIndexUrl).catch((e: unknown) => e);
      expect((error as SyncError).summary).toMatchObject({ stoppedBy: 'error', commits: 5 });
    } finally {
      replica.clearFaults();
    }
  });

  it('catalog-sync quarantine lists the records; retry-quarantine stores the leaves that now succeed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-quarantine-'));
    const failing = catalog.commits[4]!.leaves[1]!;
    const key = commitKey(commitTicks(catalog, 4));
    const common = ['--source', replica.serviceIndexUrl, '--data-dir', dir];
    try {
      replica.failWith(failing.path, 500, 1_000);
      const run = await runCli(['run', ...common, '--quarantine', '--json']);
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ quarantined: 1, stoppedBy: 'caught-up' });

      const listed = await runCli(['quarantine', ...common, '--json']);
      expect(listed.code).toBe(0);
      const records = listed.stdout.trim().split('\n').map((line) => JSON.parse(line));
      expect(records).toEqual([expect.objectContaining({ key: quarantineKey('', key, failing.id, failing.version), url: replica.leafUrl(failing), id: failing.id })]);
      expect(records[0].error).toContain('HTTP 500');

      const stillFailing = await runCli(['retry-quarantine', ...common]);
      expect(stillFailing.code).toBe(1);
      expect(stillFailing.stdout).toContain('0 stored, 1 still failing');

      replica.clearFaults();
      const retried = await runCli(['retry-quarantine', ...common]);
      expect(retried.code).toBe(0);
      expect(retried.stdout).toContain('1 stored, 0 still failing');
      expect(readFileSync(join(dir, leafKey('', key, failing.id, failing.version)), 'utf8')).toBe(leafBody(catalog, failing, replica.origin));
      const manifest = JSON.parse(readFileSync(join(dir, 'commits', `${key}.json`), 'utf8')) as { leaves: { quarantined?: boolean }[] };
      expect(manifest.leaves.some((entry) => entry.quarantined)).toBe(false);
      expect((await runCli(['quarantine', ...common])).stdout).toContain('0 quarantined leaf(s)');
      expect(await verifyLocal(dir, catalog, replica.origin, commitTicks(catalog, -1))).toEqual([]);
    } finally {
      replica.clearFaults();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
