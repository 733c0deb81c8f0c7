/**
 * `catalog-sync feed` on a folder (the built CLI): a new feed needs `--base-url`, which is kept and reused; without
 * `--source` its packages come from the source the folder was synced from (`.catalog-sync/sources.json`); the
 * summary (`--json`) counts what was stored; `--rebuild` with a new base URL rewrites every document under it and
 * moves the consumer's cursor up to the view; usage errors name their flag (exit 2).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalStore } from '../../../lambda/stores/local-store.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { runCli, startCli } from '../../../testkit/cli-process.js';
import { FeedCatalog } from '../../../testkit/feed-kit.js';
import { FlatContainer } from '../../../testkit/flat-container.js';
import { writeMirror } from '../../../testkit/view-mirror.js';

describe('catalog-sync feed', () => {
  const built = new FeedCatalog();
  let replica: CatalogReplica;
  let dir: string;
  const cli = (...args: string[]) => runCli(['feed', '--data-dir', dir, '--source', replica.serviceIndexUrl, ...args]);
  const read = (key: string) => JSON.parse(readFileSync(join(dir, key), 'utf8'));

  beforeAll(async () => {
    built.commit([
      { id: 'Cli.One', version: '1.0.0' },
      { id: 'Cli.Two', version: '2.0.0', dependencies: [{ id: 'Cli.One', range: '[1.0.0, )' }] },
      { id: 'Other.Pkg', version: '1.0.0' },
    ]);
    replica = await CatalogReplica.start({ catalog: built.catalog });
    dir = mkdtempSync(join(tmpdir(), 'catalog-sync-feed-cli-'));
    await writeMirror(new LocalStore(dir), '', built.catalog.commits);
    expect((await runCli(['view', '--data-dir', dir])).code).toBe(0);
  });
  afterAll(async () => {
    await replica?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('keeps a feed of the included ids, its base URL kept; --rebuild moves it to a new one', async () => {
    const missing = await cli();
    expect(missing.code, missing.stderr).toBe(2);
    expect(missing.stderr).toContain('--base-url: is required for a new feed');

    // Without --source, the folder's remembered source (the replica), not nuget.org, serves the packages.
    mkdirSync(join(dir, '.catalog-sync'), { recursive: true });
    writeFileSync(
      join(dir, '.catalog-sync', 'sources.json'),
      JSON.stringify({ 'catalog-to-s3': replica.serviceIndexUrl }),
    );
    const first = await runCli([
      'feed',
      '--data-dir',
      dir,
      '--base-url',
      'http://127.0.0.1:9/feed',
      '--include',
      'Cli.*',
      '--json',
    ]);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ consumer: 'feed', commits: 1, stored: 2, stoppedBy: 'caught-up' });
    expect(read('feed/flat/cli.two/index.json')).toEqual({ versions: ['2.0.0'] });
    expect(() => read('feed/flat/other.pkg/index.json')).toThrow();
    expect(read('feed/index.json').resources[0]['@id']).toBe('http://127.0.0.1:9/feed/flat/');

    const again = await cli('--include', 'Cli.*');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^feed feed: 0 commits, 0 packages: 0 stored/);

    const other = await cli('--base-url', 'https://nuget.example.test/');
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('--base-url: ');
    expect(other.stderr).toContain('--rebuild');

    const rebuild = await cli('--base-url', 'https://nuget.example.test/', '--rebuild', '--json');
    expect(rebuild.code, rebuild.stderr).toBe(0);
    // Every package of the view: the filter now keeps all three (none given).
    expect(JSON.parse(rebuild.stdout)).toMatchObject({ packages: 3, stored: 1, cursorMoved: false });
    const item = read('feed/registration/cli.two/index.json').items[0].items[0];
    expect(item.packageContent).toBe('https://nuget.example.test/flat/cli.two/2.0.0/cli.two.2.0.0.nupkg');
    expect(read('feed/index.json').resources[1]['@id']).toBe('https://nuget.example.test/registration/');
  }, 60_000);

  it('Ctrl-C while packages download is a stop, not a failure: exit 130, nothing checkpointed, the next run makes them', async () => {
    const stopped = mkdtempSync(join(tmpdir(), 'catalog-sync-feed-stop-'));
    try {
      await writeMirror(new LocalStore(stopped), '', built.catalog.commits);
      expect((await runCli(['view', '--data-dir', stopped])).code).toBe(0);
      const held = replica.hold(FlatContainer.packagePath('Cli.One', '1.0.0'));
      const args = ['feed', '--data-dir', stopped, '--source', replica.serviceIndexUrl, '--include', 'Cli.*'];
      const { child, done } = startCli([...args, '--base-url', 'http://127.0.0.1:9/feed']);
      await held.arrived;
      child.kill('SIGINT');
      const result = await done;
      held.release();
      expect(result.code, result.stderr).toBe(130);
      expect(result.stderr).toMatch(
        /^catalog-sync: stopped while the feed made the packages of commit \w+: it was not checkpointed, and is made again next time\n$/,
      );
      expect(existsSync(join(stopped, 'feed/flat/cli.one/index.json'))).toBe(false);
      const again = await runCli([...args, '--json']);
      expect(again.code, again.stderr).toBe(0);
      expect(JSON.parse(again.stdout)).toMatchObject({ commits: 1, stored: 2, stoppedBy: 'caught-up' });
      expect(JSON.parse(readFileSync(join(stopped, 'feed/flat/cli.one/index.json'), 'utf8'))).toEqual({
        versions: ['1.0.0'],
      });
    } finally {
      rmSync(stopped, { recursive: true, force: true });
    }
  });

  it('usage errors name the flag', async () => {
    const both = await cli('--rebuild', '--follow');
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--rebuild');
    const url = await cli('--base-url', 'feed/');
    expect(url.code).toBe(2);
    expect(url.stderr).toContain('--base-url: base URL "feed/" is not an absolute URL');
  });
});
