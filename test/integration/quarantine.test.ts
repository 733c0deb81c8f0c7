/**
 * With quarantine on, a leaf that still fails after retries, or fails validation, is set aside under
 * `quarantine/`, marked in its commit's manifest, counted, and the run goes on. A page that fails still stops.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogClient } from '../../lambda/catalog/catalog-client.js';
import { HttpClient } from '../../lambda/catalog/http-client.js';
import { quarantineKey, leafKey } from '../../lambda/contract/keys.js';
import { formatTimestamp } from '../../lambda/contract/time.js';
import { commitKey } from '../../lambda/contract/keys.js';
import { openLocalStores } from '../../lambda/stores/index.js';
import { SyncError } from '../../lambda/sync/engine.js';
import { retryQuarantine } from '../../lambda/sync/quarantine.js';
import {
  generateCatalog,
  leafBody,
  type GeneratedCatalog,
  type GeneratedLeaf,
} from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { commitTicks, FAST_RETRY, SyncHarness } from '../../testkit/sync-harness.js';
import { runCli } from '../../testkit/cli-process.js';
import { verifyLocal } from '../../testkit/local-verify.js';
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
        const record = (await harness.snapshots.getJson(quarantineKey('', key, leaf.id, leaf.version))) as Record<
          string,
          unknown
        >;
        expect(record.url).toBe(replica.leafUrl(leaf));
        expect(String(record.error)).toContain(reason);
        expect(record.attempts).toBeGreaterThanOrEqual(1);
        expect(record.item).toMatchObject({
          '@id': replica.leafUrl(leaf),
          'nuget:id': leaf.id,
          'nuget:version': leaf.version,
        });
        const manifest = (await harness.snapshots.getJson(`commits/${key}.json`)) as {
          leaves: { key: string; quarantined?: boolean }[];
        };
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
        const summary = await withShortTimeout((client) =>
          harness.run(replica.serviceIndexUrl, { QUARANTINE: 'true' }, { catalog: client }),
        );
        expect(summary).toMatchObject({ stoppedBy: 'caught-up', commits: 20, quarantined: 1 });
        expect(await harness.cursor()).toBe(formatTimestamp(commitTicks(catalog, -1)));
        const key = commitKey(commitTicks(catalog, 7));
        const record = (await harness.snapshots.getJson(
          quarantineKey('', key, slowLeaf().id, slowLeaf().version),
        )) as Record<string, unknown>;
        expect(record.error).toBe(
          `${replica.leafUrl(slowLeaf())}: total timeout of 1.5 s exceeded (response headers and body) (2 attempts)`,
        );
        expect(record.attempts).toBe(2);
      } finally {
        replica.clearFaults();
      }
    });

    it('without quarantine stops the run at the commit before it, naming the URL and the timeout', async () => {
      const harness = await SyncHarness.create();
      replica.trickleBody(slowLeaf().path, 200, 1_000);
      try {
        const error = await withShortTimeout((client) =>
          harness.run(replica.serviceIndexUrl, {}, { catalog: client }),
        ).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(SyncError);
        expect((error as Error).message).toContain(`${replica.leafUrl(slowLeaf())}: total timeout of 1.5 s exceeded`);
        expect((error as SyncError).summary).toMatchObject({
          stoppedBy: 'error',
          commits: 7,
          cursorAfter: formatTimestamp(commitTicks(catalog, 6)),
        });
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
      const records = listed.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(records).toEqual([
        expect.objectContaining({
          key: quarantineKey('', key, failing.id, failing.version),
          url: replica.leafUrl(failing),
          id: failing.id,
        }),
      ]);
      expect(records[0].error).toContain('HTTP 500');

      const stillFailing = await runCli(['retry-quarantine', ...common]);
      expect(stillFailing.code).toBe(1);
      expect(stillFailing.stdout).toContain('0 stored, 1 still failing');

      replica.clearFaults();
      const retried = await runCli(['retry-quarantine', ...common]);
      expect(retried.code).toBe(0);
      expect(retried.stdout).toContain('1 stored, 0 still failing');
      expect(readFileSync(join(dir, leafKey('', key, failing.id, failing.version)), 'utf8')).toBe(
        leafBody(catalog, failing, replica.origin),
      );
      const manifest = JSON.parse(readFileSync(join(dir, 'commits', `${key}.json`), 'utf8')) as {
        leaves: { quarantined?: boolean }[];
      };
      expect(manifest.leaves.some((entry) => entry.quarantined)).toBe(false);
      expect((await runCli(['quarantine', ...common])).stdout).toContain('0 quarantined leaf(s)');
      expect(await verifyLocal(dir, catalog, replica.origin, commitTicks(catalog, -1))).toEqual([]);
    } finally {
      replica.clearFaults();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** 1,000 characters: more than any S3 key holds (929 bytes for {id} and {version} together). */
const LONG_ID = `Too.Long.${'x'.repeat(991)}`;
/** 100 characters of 3 bytes each: valid, 900 bytes once percent-encoded, more than a file name holds. */
const WIDE_ID = '包'.repeat(100);

/**
 * Serves each leaf under another package id, on its page item and in its body (as a source would that
 * published it so), until the faults are cleared. Returns the URL of each leaf's page.
 */
function renameLeaves(renames: ReadonlyMap<GeneratedLeaf, string>): Map<GeneratedLeaf, string> {
  const pageOf = new Map<GeneratedLeaf, string>();
  const pages = new Map<string, { items: Record<string, unknown>[] }>();
  for (const [leaf, id] of renames) {
    const path = replica.pagePaths().find((page) => replica.documentAt(page).includes(replica.leafUrl(leaf)))!;
    const page = pages.get(path) ?? (JSON.parse(replica.documentAt(path)) as { items: Record<string, unknown>[] });
    pages.set(path, page);
    page.items.find((item) => item['@id'] === replica.leafUrl(leaf))!['nuget:id'] = id;
    pageOf.set(leaf, `${replica.origin}${path}`);
    const body = JSON.parse(leafBody(catalog, leaf, replica.origin)) as Record<string, unknown>;
    body.id = id;
    replica.overrideBody(leaf.path, JSON.stringify(body), { times: 1_000 });
  }
  for (const [path, page] of pages) replica.overrideBody(path, JSON.stringify(page), { times: 1_000 });
  return pageOf;
}

interface Manifest {
  leaves: { key: string; id: string; quarantined?: boolean }[];
}

describe('ids and versions no store can hold', () => {
  const total = (): number => catalog.commits.reduce((n, c) => n + c.leaves.length, 0);
  const tooLong = (): GeneratedLeaf => catalog.commits[3]!.leaves[0]!;
  const wide = (): GeneratedLeaf => catalog.commits[15]!.leaves[1]!;

  it('on S3: a 1,000-character id is set aside under a bounded key and the run goes on; a 100-character multi-byte id is stored', async () => {
    const harness = await SyncHarness.create();
    const pageOf = renameLeaves(
      new Map([
        [tooLong(), LONG_ID],
        [wide(), WIDE_ID],
      ]),
    );
    try {
      const summary = await harness.run(replica.serviceIndexUrl, { QUARANTINE: 'true' });
      expect(summary).toMatchObject({ stoppedBy: 'caught-up', commits: 20, quarantined: 1, leaves: total() - 1 });
      expect(await harness.cursor()).toBe(formatTimestamp(commitTicks(catalog, -1)));

      const key = commitKey(commitTicks(catalog, 3));
      const records = await harness.keys('quarantine/');
      expect(records).toEqual([
        expect.stringMatching(new RegExp(`^quarantine/${key}/~unstorable/[0-9a-f]{64}\\.json$`)),
      ]);
      const record = (await harness.snapshots.getJson(records[0]!)) as {
        url: string;
        error: string;
        item: Record<string, string>;
      };
      expect(record.url).toBe(replica.leafUrl(tooLong()));
      expect(record.error).toContain(`${pageOf.get(tooLong())}: items[`);
      expect(record.error).toContain(
        `(leaf "${replica.leafUrl(tooLong())}") cannot be stored: its key segments {id} and {version} encode to 1000 + `,
      );
      expect(record.item).toMatchObject({
        '@id': replica.leafUrl(tooLong()),
        'nuget:id': LONG_ID,
        'nuget:version': tooLong().version,
      });
      const manifest = (await harness.snapshots.getJson(`commits/${key}.json`)) as Manifest;
      const entry = manifest.leaves.find((e) => e.id === LONG_ID);
      expect(entry).toMatchObject({ key: records[0]!.replace('quarantine/', 'leaves/'), quarantined: true });
      expect(await harness.exists(entry!.key)).toBe(false);
      expect(await harness.keys(`leaves/${key}/too.long`)).toEqual([]);

      const wideKey = leafKey('', commitKey(commitTicks(catalog, 15)), WIDE_ID, wide().version);
      expect(Buffer.byteLength(wideKey.split('/')[2]!)).toBe(900);
      expect(JSON.parse((await harness.getObject(wideKey)).body.toString('utf8'))).toMatchObject({ id: WIDE_ID });
      const wideManifest = (await harness.snapshots.getJson(
        `commits/${commitKey(commitTicks(catalog, 15))}.json`,
      )) as Manifest;
      expect(wideManifest.leaves.find((e) => e.id === WIDE_ID)).toEqual({
        key: wideKey,
        id: WIDE_ID,
        version: wide().version,
        type: 'PackageDetails',
      });
    } finally {
      replica.clearFaults();
    }
  });

  it('in the local folder: a segment longer than a file name is an item error naming the leaf, set aside like the 1,000-character id', async () => {
    const harness = await SyncHarness.create();
    const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-bounds-'));
    const folder = openLocalStores(dir).snapshots;
    const http = new HttpClient({ connections: 2, retry: FAST_RETRY });
    renameLeaves(
      new Map([
        [tooLong(), LONG_ID],
        [wide(), WIDE_ID],
      ]),
    );
    try {
      const summary = await harness.run(replica.serviceIndexUrl, { QUARANTINE: 'true' }, { snapshots: folder });
      expect(summary).toMatchObject({ stoppedBy: 'caught-up', commits: 20, quarantined: 2, leaves: total() - 2 });
      const keys: string[] = [];
      for await (const key of folder.listKeys('')) keys.push(key);
      expect(keys.flatMap((key) => key.split('/')).filter((segment) => Buffer.byteLength(segment) > 255)).toEqual([]);
      const records = keys.filter((key) => key.startsWith('quarantine/'));
      expect(records).toHaveLength(2);
      const wideRecord = records.find((key) => key.startsWith(`quarantine/${commitKey(commitTicks(catalog, 15))}/`))!;
      expect(wideRecord).toMatch(/\/~unstorable\/[0-9a-f]{64}\.json$/);
      const record = (await folder.getJson(wideRecord)) as { error: string; item: Record<string, string> };
      expect(record.error).toContain(`${replica.leafUrl(wide())}: package "${WIDE_ID}"`);
      expect(record.error).toContain(
        'cannot be stored in this store: its key segment {id} encodes to 900 bytes; this store holds at most 255 bytes per segment',
      );
      expect(record.item['nuget:id']).toBe(WIDE_ID);

      // retry-quarantine leaves both records: no fetch can make them storable.
      replica.clearLog();
      const outcomes = await retryQuarantine(new CatalogClient(http, replica.serviceIndexUrl), folder, '');
      expect(outcomes.map((outcome) => outcome.outcome)).toEqual(['still-failing', 'still-failing']);
      expect(outcomes.map((outcome) => outcome.error).join('\n')).toMatch(
        /encode to 1000 \+ [^]*255 bytes per segment|255 bytes per segment[^]*encode to 1000 \+ /,
      );
      expect(replica.countRequests(tooLong().path) + replica.countRequests(wide().path)).toBe(0);
    } finally {
      replica.clearFaults();
      await http.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('quarantine vs store under overlap', () => {
  it('a stored leaf wins: run A writes its manifest flagging a leaf after run B stored it; retry-quarantine keeps the leaf and clears the flag', async () => {
    const harness = await SyncHarness.create();
    const leaf = catalog.commits[7]!.leaves[0]!;
    const key = commitKey(commitTicks(catalog, 7));
    const stored = leafKey('', key, leaf.id, leaf.version);
    const manifestOfCommit = async (): Promise<Manifest> =>
      (await harness.snapshots.getJson(`commits/${key}.json`)) as Manifest;

    // Step 1: run B stores the leaf and writes the commit's manifest.
    await harness.run(replica.serviceIndexUrl, { CURSOR_NAME: 'run-b' });
    expect((await manifestOfCommit()).leaves.find((e) => e.key === stored)?.quarantined).toBeUndefined();
    // Step 2: run A, over the same commits, fails to fetch the leaf, quarantines it and writes the manifest last.
    replica.failWith(leaf.path, 503, 1_000);
    const http = new HttpClient({ connections: 4, retry: FAST_RETRY });
    try {
      expect(await harness.run(replica.serviceIndexUrl, { CURSOR_NAME: 'run-a', QUARANTINE: 'true' })).toMatchObject({
        quarantined: 1,
      });
      expect((await manifestOfCommit()).leaves.find((e) => e.key === stored)?.quarantined).toBe(true);
      expect(await harness.exists(stored)).toBe(true);

      // Step 3: with the source still failing, retry-quarantine resolves the stale flag without a fetch.
      replica.clearLog();
      const outcomes = await retryQuarantine(new CatalogClient(http, replica.serviceIndexUrl), harness.snapshots, '');
      expect(outcomes).toEqual([
        { key: quarantineKey('', key, leaf.id, leaf.version), url: replica.leafUrl(leaf), outcome: 'already-stored' },
      ]);
      expect(replica.countRequests(leaf.path)).toBe(0);
      expect((await manifestOfCommit()).leaves.some((e) => e.quarantined)).toBe(false);
      expect(await harness.keys('quarantine/')).toEqual([]);
      expect((await harness.getObject(stored)).body.toString('utf8')).toBe(leafBody(catalog, leaf, replica.origin));
      expect(await harness.verify(catalog, replica.origin, commitTicks(catalog, -1))).toEqual([]);
    } finally {
      replica.clearFaults();
      await http.close();
    }
  });
});
