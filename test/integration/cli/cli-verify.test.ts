/**
 * `catalog-sync verify` (issue 24, part 2) from the CLI, on a local folder and on DynamoDB + S3: a mirror synced
 * whole verifies clean; a deleted leaf, a missing manifest and (with --deep) a truncated body are each found, one
 * line each, exit 1; --repair stores them again with the same keys and bytes, the cursor and watermark unmoved,
 * and a second verify is clean. Nothing past watermark.json is counted missing; quarantine records are listed.
 */
import { readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { commitKey, leafKey, manifestKey } from '../../../lambda/contract/keys.js';
import { formatTimestamp } from '../../../lambda/contract/time.js';
import { runCli, type CliResult } from '../../../testkit/cli-process.js';
import { verifyLocal } from '../../../testkit/local-verify.js';
import { commitTicks, SyncHarness } from '../../../testkit/sync-harness.js';
import { at, catalog, head, jsonLines, MANY_PROCESSES, newDir, replica, runJson, useReplica } from './cli-local-kit.js';

useReplica();

/** The keys the test breaks: a leaf of commit 10, the manifest of commit 20, a leaf of commit 30 (truncated). */
function targets() {
  const leafOf = (n: number) => {
    const commit = catalog.commits[n]!;
    const leaf = commit.leaves[0]!;
    return leafKey('', commitKey(commitTicks(catalog, n)), leaf.id, leaf.version);
  };
  return { deleted: leafOf(10), manifest: manifestKey('', commitKey(commitTicks(catalog, 20))), truncated: leafOf(30) };
}

/** `verify --deep --json` found exactly the three broken keys of {@link targets}, in commit order, exit 1. */
function expectThreeFindings(result: CliResult): Array<Record<string, unknown>> {
  const { deleted, manifest, truncated } = targets();
  expect(result.code, result.stderr).toBe(1);
  const findings = jsonLines<Record<string, unknown>>(result.stdout);
  expect(findings.filter((f) => f.kind !== 'summary').map((f) => [f.kind, f.key])).toEqual([
    ['missing-leaf', deleted],
    ['missing-manifest', manifest],
    ['body-differs', truncated],
  ]);
  return findings;
}

describe('catalog-sync verify on a local folder', () => {
  it(
    'clean, then finds a deleted leaf, a missing manifest and (--deep) a truncated body; --repair fixes them, the cursor unmoved',
    async () => {
      const dir = newDir('verify');
      await runJson(dir);
      const clean = await runCli(['verify', ...at(dir)]);
      expect(clean.code).toBe(0);
      expect(clean.stdout).toMatch(
        new RegExp(
          `^verified ${dir}: ${catalog.commits.length} commits, \\d+ leaves, 0001-01-01T00:00:00.0000000Z -> ${head.replace('.', '\\.')}, in [\\d.]+ s \\(\\d+ leaves/s\\)\\nnothing missing, 0 quarantined\\n$`,
        ),
      );

      const { deleted, manifest, truncated } = targets();
      const original = await readFile(join(dir, truncated));
      await rm(join(dir, deleted));
      await rm(join(dir, manifest));
      await truncate(join(dir, truncated), 100);
      const state = await readFile(join(dir, '.catalog-sync', 'state.json'), 'utf8');
      const watermark = await readFile(join(dir, 'watermark.json'), 'utf8');

      // Without --deep the truncated body is not read: two findings, one line each.
      const shallow = await runCli(['verify', ...at(dir)]);
      expect(shallow.code).toBe(1);
      const lines = shallow.stdout.trim().split('\n');
      expect(lines.filter((line) => line.startsWith('missing leaf     '))).toEqual([expect.stringContaining(deleted)]);
      expect(lines.filter((line) => line.startsWith('missing manifest '))).toEqual([expect.stringContaining(manifest)]);
      expect(lines.at(-1)).toBe('1 manifests and 1 leaves missing, 0 differ, 0 quarantined');

      const findings = expectThreeFindings(await runCli(['verify', ...at(dir), '--deep', '--json']));
      expect(findings.at(-1)).toMatchObject({
        kind: 'summary',
        commits: catalog.commits.length,
        missingLeaves: 1,
        missingManifests: 1,
        differ: 1,
      });

      const repair = await runCli(['verify', ...at(dir), '--deep', '--repair']);
      expect(repair.code).toBe(0);
      expect(repair.stdout.match(/^repaired {9}commit /gm)).toHaveLength(3);
      expect(repair.stdout).toContain('; 3 commits repaired');
      expect(await readFile(join(dir, truncated))).toEqual(original);
      expect(await verifyLocal(dir, catalog, replica.origin, commitTicks(catalog, -1))).toEqual([]);
      // The cursor and the watermark did not move.
      expect(await readFile(join(dir, '.catalog-sync', 'state.json'), 'utf8')).toBe(state);
      expect(await readFile(join(dir, 'watermark.json'), 'utf8')).toBe(watermark);
      expect((await runCli(['verify', ...at(dir), '--deep'])).code).toBe(0);
    },
    MANY_PROCESSES,
  );

  it(
    'counts nothing past watermark.json as missing, lists quarantine records, and samples with --deep --sample',
    async () => {
      const dir = newDir('verify-watermark');
      const leaf = catalog.commits[5]!.leaves[0]!;
      replica.overrideBody(leaf.path, 'not json', { times: 1_000 });
      try {
        await runJson(dir, ['--quarantine']);
      } finally {
        replica.clearFaults();
      }
      // The watermark held back to commit 49, as a run killed between cursor and watermark would leave it.
      const watermarkFile = join(dir, 'watermark.json');
      const watermark = JSON.parse(await readFile(watermarkFile, 'utf8')) as Record<string, string>;
      await writeFile(
        watermarkFile,
        JSON.stringify({
          ...watermark,
          cursor: formatTimestamp(commitTicks(catalog, 49)),
          commitKey: commitKey(commitTicks(catalog, 49)),
        }),
      );
      await rm(join(dir, manifestKey('', commitKey(commitTicks(catalog, 55)))));

      const result = await runCli(['verify', ...at(dir), '--json', '--deep', '--sample', '20']);
      expect(result.code).toBe(0);
      const findings = jsonLines<Record<string, unknown>>(result.stdout);
      expect(findings.filter((f) => f.kind !== 'summary')).toEqual([
        expect.objectContaining({ kind: 'quarantined', url: `${replica.origin}${leaf.path}` }),
      ]);
      const summary = findings.at(-1)!;
      expect(summary).toMatchObject({
        commits: 50,
        to: formatTimestamp(commitTicks(catalog, 49)),
        watermark: formatTimestamp(commitTicks(catalog, 49)),
        cursor: head,
        quarantined: 1,
      });
      expect(summary.compared).toBeGreaterThan(0);
      expect(summary.compared).toBeLessThan(summary.leaves as number);

      // --since and --until bound the audit to commits 10..19 (both included).
      const ranged = await runCli([
        'verify',
        ...at(dir),
        '--json',
        '--since',
        formatTimestamp(commitTicks(catalog, 10)),
        '--until',
        formatTimestamp(commitTicks(catalog, 19)),
      ]);
      expect(ranged.code).toBe(0);
      expect(jsonLines<Record<string, unknown>>(ranged.stdout).at(-1)).toMatchObject({
        kind: 'summary',
        commits: 10,
        to: formatTimestamp(commitTicks(catalog, 19)),
      });

      const bad = await runCli(['verify', ...at(dir), '--sample', '5']);
      expect(bad).toMatchObject({
        code: 2,
        stderr: 'catalog-sync: --sample: samples the leaves --deep compares: give --deep too\n',
      });
    },
    MANY_PROCESSES,
  );
});

describe('catalog-sync verify on DynamoDB and S3', () => {
  it(
    'finds a deleted leaf, a missing manifest and a truncated body, listing by ranges; --repair fixes them',
    async () => {
      const harness = await SyncHarness.create();
      const aws = ['--source', replica.serviceIndexUrl, '--cursor-table', harness.table, '--bucket', harness.bucket];
      expect((await runCli(['run', ...aws, '--json'], harness.env())).code).toBe(0);
      const clean = await runCli(['verify', ...aws, '--concurrency', '4'], harness.env());
      expect(clean).toMatchObject({ code: 0, stderr: '' });
      expect(clean.stdout).toContain(`${catalog.commits.length} commits`);

      const { deleted, manifest, truncated } = targets();
      const s3 = harness.clients.s3;
      const original = Buffer.from(
        await (
          await s3.send(new GetObjectCommand({ Bucket: harness.bucket, Key: truncated }))
        ).Body!.transformToByteArray(),
      );
      await s3.send(new DeleteObjectCommand({ Bucket: harness.bucket, Key: deleted }));
      await s3.send(new DeleteObjectCommand({ Bucket: harness.bucket, Key: manifest }));
      await s3.send(new PutObjectCommand({ Bucket: harness.bucket, Key: truncated, Body: original.subarray(0, 100) }));
      const cursor = await harness.cursor();

      expectThreeFindings(await runCli(['verify', ...aws, '--deep', '--json', '--concurrency', '4'], harness.env()));

      const repair = await runCli(['verify', ...aws, '--deep', '--repair'], harness.env());
      expect(repair.code).toBe(0);
      expect(repair.stdout).toContain('; 3 commits repaired');
      expect(await harness.cursor()).toBe(cursor);
      expect(await harness.verify(catalog, replica.origin, commitTicks(catalog, -1))).toEqual([]);
      expect((await runCli(['verify', ...aws, '--deep'], harness.env())).code).toBe(0);
    },
    MANY_PROCESSES,
  );
});
