/**
 * `--include` / `--exclude` from the CLI, on a folder, on DynamoDB + S3 and through a backfill: the cursor moves over
 * whole commits, a filtered-out leaf is never fetched nor stored, each manifest counts what the filter left out
 * (`filtered`), and another filter on an existing mirror is refused (exit 2) unless `--refilter`, which then gives the
 * backfill command a widened filter needs.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it, vi } from 'vitest';
import { runCli } from '../../../testkit/cli-process.js';
import { localKeys } from '../../../testkit/local-verify.js';
import { commitTicks, SyncHarness } from '../../../testkit/sync-harness.js';
import { formatTimestamp } from '../../../lambda/contract/time.js';
import { at, catalog, head, jsonLines, newDir, replica, useReplica } from './cli-local-kit.js';

useReplica();

/** What `--include a* --include B*` keeps (case-insensitive). */
const kept = (id: string): boolean => /^[ab]/i.test(id);
const includeAB = ['--include', 'a*', '--include', 'B*'];

interface Manifest {
  commitId: string;
  filtered?: number;
  leaves: { id: string; key: string }[];
}

async function folderManifests(dir: string): Promise<Map<string, Manifest>> {
  const manifests = new Map<string, Manifest>();
  for (const key of await localKeys(dir, 'commits/'))
    manifests.set(key, JSON.parse(await readFile(join(dir, key), 'utf8')) as Manifest);
  return manifests;
}

/** Every manifest holds exactly the kept items of its commit and counts the others. */
function expectFiltered(manifests: Iterable<Manifest>, keeps: (id: string) => boolean): void {
  const byId = new Map(catalog.commits.map((c) => [c.commitId, c]));
  let seen = 0;
  for (const manifest of manifests) {
    const commit = byId.get(manifest.commitId)!;
    const wanted = commit.leaves.filter((l) => keeps(l.id));
    expect(manifest.leaves.map((l) => l.id).sort()).toEqual(wanted.map((l) => l.id).sort());
    expect(manifest.filtered).toBe(commit.leaves.length - wanted.length);
    seen++;
  }
  expect(seen).toBe(catalog.commits.length);
}

describe('id filters on a folder', () => {
  it('the cursor moves over every commit; only kept leaves are fetched and stored; manifests count the rest', async () => {
    const all = catalog.commits.flatMap((c) => c.leaves);
    expect(all.some((l) => kept(l.id))).toBe(true);
    expect(all.some((l) => !kept(l.id))).toBe(true);
    const dir = newDir('filter');
    replica.clearLog();
    const result = await runCli(['run', ...at(dir), '--json', '--max-commits', '1000', ...includeAB]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({
      commits: catalog.commits.length,
      leaves: all.filter((l) => kept(l.id)).length,
      cursorAfter: head,
      stoppedBy: 'caught-up',
    });
    const fetched = replica.requests.map((r) => r.path).filter((p) => all.some((l) => l.path === p));
    expect(fetched.sort()).toEqual(
      all
        .filter((l) => kept(l.id))
        .map((l) => l.path)
        .sort(),
    );
    expectFiltered((await folderManifests(dir)).values(), kept);
    const leafKeys = await localKeys(dir, 'leaves/');
    expect(leafKeys.length).toBe(all.filter((l) => kept(l.id)).length);
    expect(JSON.parse(await readFile(join(dir, 'filter.json'), 'utf8'))).toEqual({
      include: ['a*', 'b*'],
      exclude: [],
    });
    // verify audits the mirror under its own filter: what it left out is not missing.
    const verify = await runCli(['verify', ...at(dir), '--deep']);
    expect(verify.stderr).toBe('');
    expect(verify.code).toBe(0);
    // changes --json carries each manifest's count; a reader's own filter adds what it leaves out.
    const changes = await runCli(['changes', '--data-dir', dir, '--json']);
    expect(changes.code).toBe(0);
    const lines = changes.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { filtered?: number; leaves: unknown[] });
    expect(lines.map((c) => c.filtered)).toEqual(
      catalog.commits.map((c) => c.leaves.filter((l) => !kept(l.id)).length),
    );
    const narrower = await runCli(['changes', '--data-dir', dir, '--json', '--include', 'a*']);
    const narrowed = narrower.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { filtered?: number; leaves: unknown[] });
    expect(narrowed.map((c) => c.filtered)).toEqual(
      catalog.commits.map((c) => c.leaves.filter((l) => !/^a/i.test(l.id)).length),
    );
    const text = await runCli(['changes', '--data-dir', dir]);
    const withFiltered = catalog.commits.findIndex((c) => c.leaves.some((l) => !kept(l.id)));
    expect(text.stdout.trim().split('\n')[withFiltered]).toMatch(/ \d+ (leaf|leaves), [1-9]\d* filtered \(commit /);
  });

  it('another filter is refused with exit 2 naming both; --refilter accepts it and gives the backfill command', async () => {
    const dir = newDir('refilter');
    expect((await runCli(['run', ...at(dir), '--max-commits', '1000', '--include', 'a*'])).code).toBe(0);
    // A latest view of the mirror: the refill below rebuilds its packages the change added.
    expect((await runCli(['view', '--data-dir', dir])).code).toBe(0);
    const refused = await runCli(['run', ...at(dir), '--include', 'a*', '--include', 'c*']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      '--include/--exclude: this mirror was synced with include a*, and this run asks for include a*, c*',
    );
    expect(refused.stderr).toContain('pass --refilter');
    const none = await runCli(['run', ...at(dir)]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('this run asks for no filter');

    const accepted = await runCli(['run', ...at(dir), '--include', 'a*', '--include', 'c*', '--refilter']);
    expect(accepted.code).toBe(0);
    expect(accepted.stderr).toContain(`id filter changed from include a* to include a*, c* after ${head}`);
    expect(accepted.stderr).toContain(
      `catalog-sync backfill --source ${replica.serviceIndexUrl} --data-dir ${dir} --cursor-name catalog-to-s3-refill --until ${head} --include 'a*' --include 'c*'`,
    );
    expect(JSON.parse(await readFile(join(dir, 'filter.json'), 'utf8'))).toEqual({
      include: ['a*', 'c*'],
      exclude: [],
      history: [{ include: ['a*'], exclude: [], until: head }],
    });
    // The next run with the new filter (in any case and order) is accepted.
    expect((await runCli(['run', ...at(dir), '--include', 'C*', '--include', 'A*'])).code).toBe(0);
    // Before the printed backfill, history lacks the c* leaves: its commits are judged by the filter they were
    // written under (nothing missing); after it, the mirror is whole under the new filter.
    const earlier = await runCli(['verify', ...at(dir), '--deep']);
    expect(earlier.stdout).not.toMatch(/missing (leaf|manifest)|differs/);
    expect(earlier.stdout).toMatch(/\n[1-9]\d* commits were written under an earlier id filter/);
    expect(earlier.code).toBe(0);
    const printed = /catalog-sync (backfill .*)$/m
      .exec(accepted.stderr)![1]!
      .split(' ')
      .map((word) => word.replace(/^'(.*)'$/, '$1'));
    const refill = await runCli([...printed, '--workers', '2']);
    expect(refill.code).toBe(0);
    expect(refill.stderr).toMatch(
      /view view-latest: rebuilt [1-9]\d* packages added by id filter changes from \d+ commits .*; cursor view-latest left\n/,
    );
    expect(refill.stderr).not.toContain('STALE');
    expect(JSON.parse(await readFile(join(dir, 'view.json'), 'utf8'))).toMatchObject({
      stale: [],
      rebuilt: { only: 'added' },
    });
    const verified = await runCli(['verify', ...at(dir), '--deep']);
    expect(verified.stdout + verified.stderr).not.toMatch(/missing (leaf|manifest)/);
    expect(verified.stdout).toContain('nothing missing');
    expect(verified.stdout).not.toContain('earlier id filter');
    expect(verified.code).toBe(0);
    expectFiltered((await folderManifests(dir)).values(), (leafId) => /^[ac]/i.test(leafId));
  });

  it('after a narrowing --refilter, verify judges the commits before it by the wider filter their manifests were written under', async () => {
    const dir = newDir('narrowed');
    const half = Math.floor(catalog.commits.length / 2);
    // From no filter (every leaf) to a* from the middle on.
    expect((await runCli(['run', ...at(dir), '--max-commits', String(half)])).code).toBe(0);
    expect((await runCli(['run', ...at(dir), '--include', 'a*', '--refilter'])).code).toBe(0);
    const wider = catalog.commits.slice(0, half).filter((c) => c.leaves.some((l) => !/^a/i.test(l.id))).length;
    expect(wider).toBeGreaterThan(0);
    const verified = await runCli(['verify', ...at(dir), '--deep', '--json']);
    expect(verified.stderr).toBe('');
    const lines = jsonLines<{ kind: string; underEarlierFilter?: number; commits?: number }>(verified.stdout);
    expect(lines.filter((line) => line.kind !== 'summary')).toEqual([]);
    expect(lines.at(-1)).toMatchObject({ kind: 'summary', commits: catalog.commits.length, underEarlierFilter: wider });
    expect(verified.code).toBe(0);
    // A leaf a* leaves out, of a commit before the change, is missing under the filter its manifest was written under: found.
    const before = [...(await folderManifests(dir)).values()].filter(
      (m) => catalog.commits.findIndex((c) => c.commitId === m.commitId) < half,
    );
    const leaf = before.flatMap((m) => m.leaves).find((l) => !/^a/i.test(l.id))!;
    await rm(join(dir, leaf.key));
    const found = await runCli(['verify', ...at(dir)]);
    expect(found.stdout).toContain(`missing leaf     ${leaf.key}`);
    expect(found.code).toBe(1);
  });

  it('a refill backfill that ends behind the watermark leaves watermark.json where it was (it never moves back)', async () => {
    const dir = newDir('refill-watermark');
    expect((await runCli(['run', ...at(dir), '--max-commits', '1000', '--include', 'a*'])).code).toBe(0);
    const before = await readFile(join(dir, 'watermark.json'), 'utf8');
    expect(JSON.parse(before)).toMatchObject({ cursor: head });
    const mid = formatTimestamp(commitTicks(catalog, Math.floor(catalog.commits.length / 2)));
    // A backfill under a cursor name of its own is held to the mirror's filter too (the mirror has a watermark).
    const other = await runCli([
      'backfill',
      ...at(dir),
      '--cursor-name',
      'catalog-to-s3-refill',
      '--until',
      mid,
      '--include',
      'c*',
    ]);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('this mirror was synced with include a*, and this run asks for include c*');
    const refill = await runCli([
      'backfill',
      ...at(dir),
      '--cursor-name',
      'catalog-to-s3-refill',
      '--until',
      mid,
      '--include',
      'a*',
      '--workers',
      '2',
      '--json',
    ]);
    expect(refill.stderr).toBe('');
    expect(refill.code).toBe(0);
    expect(jsonLines(refill.stdout).at(-1)).toMatchObject({ cursorName: 'catalog-to-s3-refill', cursorAfter: mid });
    expect(await readFile(join(dir, 'watermark.json'), 'utf8')).toBe(before);
    // A reader still gets every commit up to the head.
    const changes = await runCli(['changes', '--data-dir', dir, '--json']);
    expect(changes.stdout.trim().split('\n')).toHaveLength(catalog.commits.length);
  });

  it('a bad pattern is a settings error naming the flag', async () => {
    const result = await runCli(['run', ...at(newDir('bad')), '--include', 'Newtonsoft Json']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--include: "Newtonsoft Json" is not an id pattern');
    const onAws = await runCli([
      'backfill',
      '--state-machine',
      'arn:aws:states:us-east-1:123456789012:stateMachine:B',
      '--include',
      'a*',
    ]);
    expect(onAws.code).toBe(2);
    expect(onAws.stderr).toContain("with --state-machine, the filter is the construct's (includeIds/excludeIds)");
  });

  it('changes --include: every commit delivered, only the matching leaves in it', async () => {
    const dir = newDir('filter-changes');
    expect((await runCli(['run', ...at(dir), '--max-commits', '1000'])).code).toBe(0);
    const result = await runCli(['changes', '--data-dir', dir, '--json', '--include', 'A*', '--include', 'b*']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const commits = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { commitId: string; filtered?: number; leaves: { id: string }[] });
    expect(commits.map((c) => c.commitId)).toEqual(catalog.commits.map((c) => c.commitId));
    for (const [i, commit] of commits.entries()) {
      expect(commit.leaves.map((l) => l.id).sort()).toEqual(
        catalog.commits[i]!.leaves.filter((l) => kept(l.id))
          .map((l) => l.id)
          .sort(),
      );
      // The unfiltered mirror's manifests have no count; the reader's filter gives one: filtered, not missing.
      expect(commit.filtered).toBe(catalog.commits[i]!.leaves.length - commit.leaves.length);
    }
    const unfiltered = await runCli(['changes', '--data-dir', dir, '--json']);
    expect(unfiltered.stdout).not.toContain('"filtered"');
    const bad = await runCli(['changes', '--data-dir', dir, '--exclude', 'a b']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--exclude: "a b" is not an id pattern');
  });

  it('through a backfill: the same filtered manifests', async () => {
    const dir = newDir('filter-backfill');
    const result = await runCli([
      'backfill',
      ...at(dir),
      '--workers',
      '2',
      '--range-leaves',
      '60',
      '--json',
      ...includeAB,
    ]);
    expect(result.code).toBe(0);
    expectFiltered((await folderManifests(dir)).values(), kept);
    expect((await localKeys(dir, 'leaves/')).length).toBe(
      catalog.commits.flatMap((c) => c.leaves).filter((l) => kept(l.id)).length,
    );
  });
});

describe('id filters on DynamoDB and S3', () => {
  it('--exclude: excluded leaves never stored, manifests count them', async () => {
    const harness = await SyncHarness.create();
    const excluded = (id: string) => /^[ab]/i.test(id);
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
        '--max-commits',
        '1000',
        '--exclude',
        'A*',
        '--exclude',
        'b*',
      ],
      harness.env(),
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(await harness.cursor()).toBe(formatTimestamp(commitTicks(catalog, -1)));
    const manifests: Manifest[] = [];
    for (const key of await harness.keys('commits/')) {
      const object = await harness.clients.s3.send(new GetObjectCommand({ Bucket: harness.bucket, Key: key }));
      manifests.push(JSON.parse(await object.Body!.transformToString()) as Manifest);
    }
    expectFiltered(manifests, (id) => !excluded(id));
    const leaves = await harness.keys('leaves/');
    expect(leaves.length).toBe(catalog.commits.flatMap((c) => c.leaves).filter((l) => !excluded(l.id)).length);
  });
});

describe('id filters on the Lambda (INCLUDE_IDS / EXCLUDE_IDS)', () => {
  it('filters from its environment; another filter later is refused, naming the variables and the CLI step', async () => {
    const harness = await SyncHarness.create();
    const saved = { ...process.env };
    Object.assign(
      process.env,
      harness.env({
        CATALOG_SOURCE: replica.serviceIndexUrl,
        MAX_COMMITS: '1000',
        CURSOR_NAME: 'lambda-filter',
        INCLUDE_IDS: 'a*, B*',
      }),
    );
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      const { handler } = await import('../../../lambda/sync/lambda.js');
      const context = { getRemainingTimeInMillis: () => 120_000 };
      const summary = await handler({}, context);
      expect(summary).toMatchObject({
        commits: catalog.commits.length,
        leaves: catalog.commits.flatMap((c) => c.leaves).filter((l) => kept(l.id)).length,
      });
      expect((await harness.keys('leaves/')).length).toBe(summary.leaves);
      process.env.EXCLUDE_IDS = 'abc*';
      await expect(handler({}, context)).rejects.toThrow(
        /^INCLUDE_IDS\/EXCLUDE_IDS: this mirror was synced with include a\*, b\*, and this run asks for include a\*, b\*; exclude abc\*.*catalog-sync run --refilter/,
      );
    } finally {
      spy.mockRestore();
      process.env = saved;
    }
  });
});
