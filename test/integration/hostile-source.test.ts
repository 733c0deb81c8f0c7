/**
 * Bounds against a hostile source: bodies that never end, pages with a million items, and package ids or
 * versions built to make keys escape the prefix or the data folder.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CatalogClient } from '../../lambda/catalog/catalog-client.js';
import { HttpClient } from '../../lambda/catalog/http-client.js';
import { BodyTooLargeError } from '../../lambda/catalog/http-errors.js';
import { openLocalStores } from '../../lambda/stores/index.js';
import { runSlice, SyncError } from '../../lambda/sync/engine.js';
import { parseSettings } from '../../lambda/contract/settings.js';
import { generateCatalog } from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { verifyLocal } from '../../testkit/local-verify.js';
import { commitTicks, FAST_RETRY } from '../../testkit/sync-harness.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-hostile-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function runLocal(source: string, dataDir: string) {
  const settings = parseSettings({ CATALOG_SOURCE: source });
  const http = new HttpClient({ retry: FAST_RETRY });
  const { cursors, runLog, snapshots } = openLocalStores(dataDir);
  try {
    return await runSlice(settings, { catalog: new CatalogClient(http, settings.source), cursors, snapshots, runLog });
  } finally {
    await http.close();
  }
}

function allFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)));
}

describe('a hostile source', () => {
  it('a body that never ends is cut at the bound', async () => {
    let sent = 0;
    const server: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const pump = (): void => {
        while (res.write(chunk)) sent += chunk.length;
        sent += chunk.length;
        res.once('drain', pump);
      };
      res.on('close', () => res.removeAllListeners('drain'));
      pump();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));

    const { port } = server.address() as { port: number };
    const http = new HttpClient({ retry: FAST_RETRY });
    http.allowOrigin(`http://127.0.0.1:${port}`);
    cleanups.push(() => {
      server.closeAllConnections();
      return http.close();
    });
    const error = await http
      .get(`http://127.0.0.1:${port}/v3/catalog0/data/endless.json`, { maxBytes: 4 * 1024 * 1024 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BodyTooLargeError);
    expect((error as Error).message).toContain('body exceeds the limit of 4194304 bytes');
    // The client stopped reading near the bound: the server never got far past it.
    expect(sent).toBeLessThan(64 * 1024 * 1024);
  });

  it('a page with a million items is refused by its size bound, naming the page', async () => {
    const catalog = generateCatalog({ commits: 3, seed: 101 });
    const replica = await CatalogReplica.start({ catalog });
    cleanups.push(() => replica.stop());
    const page = replica.pagePaths()[0]!;
    // Minimal items keep the test quick; a million of them is still past the 16 MiB bound of a page.
    const items = Array.from({ length: 1_000_000 }, (_, n) => `{"@id":"u${n}"}`).join(',');
    replica.overrideBody(
      page,
      `{"commitId":"c","commitTimeStamp":"2017-10-31T23:30:32.4197849Z","count":1000000,"items":[${items}]}`,
    );
    const dir = tempDir();
    const error = await runLocal(replica.serviceIndexUrl, dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SyncError);
    expect((error as Error).message).toMatch(
      new RegExp(`${replica.origin}${page}: (decompressed )?body exceeds the limit of 16777216 bytes`),
    );
    expect(allFiles(dir).filter((file) => !file.startsWith('.catalog-sync'))).toEqual([]);
  });

  it('ids and versions made to escape the prefix become plain, encoded file names inside the folder', async () => {
    const catalog = generateCatalog({ commits: 6, seed: 102, leavesPerCommit: [1, 1], deleteRatio: 0 });
    const hostile = [
      { id: '..', version: '1.0.0' },
      { id: '../../../../tmp/escaped', version: '1.0.0' },
      { id: 'Evil', version: '../../../escaped' },
      { id: 'Ctl\u0001\u001f\u007f', version: '1.0.0-a\tb' },
      { id: '.', version: '..' },
      { id: 'back\\slash', version: '1.0.0/../../x' },
    ];
    catalog.commits.forEach((commit, i) => Object.assign(commit.leaves[0]!, hostile[i]));
    const replica = await CatalogReplica.start({ catalog });
    cleanups.push(() => replica.stop());
    const parent = tempDir();
    const dir = join(parent, 'data');
    const summary = await runLocal(replica.serviceIndexUrl, dir);
    expect(summary).toMatchObject({ commits: 6, leaves: 6, stoppedBy: 'caught-up' });
    expect(readdirSync(parent)).toEqual(['data']);
    const files = allFiles(dir).filter((file) => file.startsWith('leaves/'));
    expect(files).toHaveLength(6);
    for (const file of files) {
      const segments = file.split('/');
      expect(segments).toHaveLength(4);
      for (const segment of segments) {
        expect(segment).not.toMatch(/^\.+$/);
        expect(segment).toMatch(/^[a-z0-9A-Z._%-]+$/);
      }
    }
    expect(files).toContain(`leaves/${files[0]!.split('/')[1]}/%2E%2E/1.0.0.json`);
    expect(await verifyLocal(dir, catalog, replica.origin, commitTicks(catalog, -1))).toEqual([]);
  });
});
