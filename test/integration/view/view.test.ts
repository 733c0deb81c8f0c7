/**
 * The latest view end to end (issue 23), on S3 + DynamoDB Local and on the folder: the real follower (`catalog-sync
 * run`) mirrors a generated catalog (pages of 4 items, so commits are split across pages; deprecations and
 * vulnerabilities in some leaves) in slices, `catalog-sync view` keeps the view after each; the view equals the one
 * computed from the catalog; `latest` prints it; `view --rebuild` from an empty view gives the same bytes.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageIndexKey } from '../../../lambda/view/index.js';
import { generateCatalog, type GeneratedCatalog } from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { runCli } from '../../../testkit/cli-process.js';
import { mulberry32 } from '../../../testkit/prng.js';
import { openViewTarget, VIEW_KINDS, type ViewTestTarget } from '../../../testkit/view-harness.js';
import { decorate, expectedView, type Decoration } from '../../../testkit/view-mirror.js';
import type { GeneratedLeaf } from '../../../testkit/generated-commit.js';

describe.each(VIEW_KINDS)('catalog-sync view and latest: %s', (kind) => {
  let catalog: GeneratedCatalog;
  let decorations: Map<GeneratedLeaf, Decoration>;
  let replica: CatalogReplica;
  let target: ViewTestTarget;
  const prefix = 'nuget/';

  beforeAll(async () => {
    catalog = generateCatalog({
      commits: 36,
      seed: 2323,
      leavesPerCommit: [1, 4],
      deleteRatio: 0.25,
      semver2Ratio: 0.3,
      nonNormalizedDeleteRatio: 0.5,
      sameMillisecondPairs: 3,
    });
    decorations = decorate(catalog.commits, mulberry32(23), 0.3);
    replica = await CatalogReplica.start({ catalog, pageSize: 4 });
    target = await openViewTarget(kind, prefix);
  });
  afterAll(async () => {
    await replica?.stop();
    target?.close();
  });

  const cli = (args: string[]) => runCli([...args, ...target.cli.args], target.cli.env);

  async function viewBytes(): Promise<Map<string, Buffer>> {
    const bytes = new Map<string, Buffer>();
    for await (const key of target.store.listKeys(`${prefix}packages/`))
      bytes.set(key, (await target.store.getBytes(key))!);
    return bytes;
  }

  it("keeps the view as the follower runs, equal to the catalog's; latest prints it; rebuild gives the same bytes", async () => {
    let commits = 0;
    let slices = 0;
    for (let slice = 0; ; slice++) {
      slices++;
      const run = await cli(['run', '--source', replica.serviceIndexUrl, '--max-commits', '20', '--json']);
      expect(run.code, run.stderr).toBe(0);
      const view = await cli(['view', '--json']);
      expect(view.code, view.stderr).toBe(0);
      commits += JSON.parse(view.stdout).commits;
      if (JSON.parse(run.stdout).caughtUp) break;
      expect(slice).toBeLessThan(10);
    }
    expect(commits).toBe(catalog.commits.length);
    expect(slices, 'the view was kept after more than one run').toBeGreaterThan(1);
    const expected = expectedView(prefix, catalog.commits, decorations);
    const stored = await viewBytes();
    expect(stored.size).toBe(expected.size);
    for (const index of expected.values()) {
      const key = packageIndexKey(prefix, (index as { id: string }).id);
      expect(JSON.parse(stored.get(key)!.toString('utf8')), key).toEqual(index);
    }
    expect([...decorations.keys()].length).toBeGreaterThan(3);

    // latest: the stored document, and a text listing in its order (lowest version first), as --help says.
    const some = [...expected.values()].find((index) => (index as { versions: unknown[] }).versions.length > 1) as {
      id: string;
      versions: { version: string }[];
    };
    const json = await cli(['latest', some.id.toUpperCase(), '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(some);
    const text = await cli(['latest', some.id]);
    expect(text.stdout.split('\n')[0]).toContain(some.id);
    expect(
      text.stdout
        .split('\n')
        .slice(1, -1)
        .map((line) => line.split(/\s+/)[0]),
    ).toEqual(some.versions.map((v) => v.version));
    const missing = await cli(['latest', 'No.Such.Package']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('No.Such.Package: no index at');

    // Nothing new: a second run writes nothing.
    expect(JSON.parse((await cli(['view', '--json'])).stdout)).toMatchObject({ commits: 0, written: 0 });

    // Rebuild from the history into an empty view: the same bytes; the cursor was there already.
    for (const key of stored.keys()) await target.store.deleteKey(key);
    const rebuild = await cli(['view', '--rebuild', '--shards', '3', '--json']);
    expect(rebuild.code, rebuild.stderr).toBe(0);
    expect(JSON.parse(rebuild.stdout)).toMatchObject({
      commits: catalog.commits.length,
      packages: expected.size,
      written: expected.size,
      cursorMoved: false,
      complete: true,
    });
    expect(await viewBytes()).toEqual(stored);

    // The same with two worker processes (ranges, then shards): the same bytes.
    for (const key of stored.keys()) await target.store.deleteKey(key);
    const workers = await cli(['view', '--rebuild', '--workers', '2', '--shards', '4', '--json']);
    expect(workers.code, workers.stderr).toBe(0);
    expect(JSON.parse(workers.stdout)).toMatchObject({
      commits: catalog.commits.length,
      packages: expected.size,
      written: expected.size,
      complete: true,
      resumed: false,
    });
    expect(JSON.parse(workers.stdout).ranges).toBeGreaterThanOrEqual(2);
    expect(await viewBytes()).toEqual(stored);
  }, 120_000);
});

// The flags are read before either store is opened: their errors are the same on both, so they run once, on a folder.
describe('catalog-sync view usage errors', () => {
  const cli = (args: string[]) => runCli([...args, '--data-dir', join(tmpdir(), 'catalog-sync-view-usage-unused')]);

  it('usage errors name the flag', async () => {
    const both = await cli(['view', '--rebuild', '--follow']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--rebuild');
    const bad = await cli(['view', '--concurrency', '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--concurrency');
    const shards = await cli(['view', '--rebuild', '--shards', '0']);
    expect(shards.code).toBe(2);
    expect(shards.stderr).toContain('--shards: "0" must be a whole number >= 1');
    const alone = await cli(['view', '--temp-dir', '/tmp']);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('--temp-dir: needs --rebuild');
    const workers = await cli(['view', '--rebuild', '--workers', '0']);
    expect(workers.code).toBe(2);
    expect(workers.stderr).toContain('--workers');
  });
});
