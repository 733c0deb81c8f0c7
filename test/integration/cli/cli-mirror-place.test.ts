/**
 * The reading commands on a wrong place, as a user meets them (issue 29, part 4): `changes`, `view` and `latest` on
 * a folder that does not exist, an empty folder, a folder inside a mirror, a wrong `--prefix`, an empty bucket exit 2
 * naming the place and what is missing, and leave it as it was; a read of a real mirror writes nothing;
 * `changes --follow` on a mirror with no commit yet says once that it waits for the first commit. The children run
 * at once (each is a node start-up); the library's cases are mirror-place.test.ts's.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitKeyOf, leafKey } from '../../../lambda/contract/keys.js';
import { LocalStore } from '../../../lambda/stores/local-store.js';
import { generateCatalog } from '../../../testkit/catalog-generator.js';
import { runCli, startCli, waitFor } from '../../../testkit/cli-process.js';
import { SyncHarness } from '../../../testkit/sync-harness.js';
import { writeMirror } from '../../../testkit/view-mirror.js';

const catalog = generateCatalog({ commits: 3, seed: 29, deleteRatio: 0 });

/** Every path under `dir` with its bytes (folders as ''), or 'absent'. */
function tree(dir: string): Record<string, string> | 'absent' {
  if (!statSync(dir, { throwIfNoEntry: false })) return 'absent';
  const found: Record<string, string> = {};
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name);
    found[path] = entry.isDirectory() ? '' : readFileSync(path).toString('base64');
  }
  return found;
}

describe('reading commands on a wrong place', () => {
  let root: string;
  let harness: SyncHarness;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'catalog-sync-cli-place-'));
    await writeMirror(new LocalStore(join(root, 'mirror')), '', catalog.commits);
    mkdirSync(join(root, 'empty'));
    // The follower's first leaf, no commit yet.
    const first = catalog.commits[0]!;
    await new LocalStore(join(root, 'starting')).putLeaf(
      leafKey('', commitKeyOf(first.timestamp), first.leaves[0]!.id, first.leaves[0]!.version),
      Buffer.from('{}'),
    );
    harness = await SyncHarness.create();
  });
  afterAll(() => {
    rmSync(root, { recursive: true, force: true });
    harness.clients.dynamo.destroy();
    harness.clients.s3.destroy();
  });

  it('exit 2 naming the place and what is missing, writing nothing; a read of a mirror writes nothing either', async () => {
    const at = (name: string): string => join(root, name);
    const before = { missing: tree(at('missing')), empty: tree(at('empty')), mirror: tree(at('mirror')) };
    const s3 = ['--bucket', harness.bucket, '--cursor-table', harness.table];
    const [missing, empty, inside, prefixed, s3Empty, read] = await Promise.all([
      runCli(['changes', '--data-dir', at('missing'), '--json']),
      runCli(['view', '--data-dir', at('empty')]),
      runCli(['latest', 'Some.Package', '--data-dir', join(at('mirror'), 'commits')]),
      runCli([
        'changes',
        '--data-dir',
        at('mirror'),
        '--prefix',
        'nuget/',
        '--consumer',
        'indexer',
        '--checkpoint-on-write',
      ]),
      runCli(['changes', ...s3, '--json'], harness.env()),
      runCli(['changes', '--data-dir', at('mirror'), '--json']),
    ]);
    const wrong: [typeof missing, string][] = [
      [
        missing,
        `${at('missing')}: no mirror here: no watermark.json, no manifests under commits/, no leaves under leaves/ (the folder does not exist)`,
      ],
      [empty, `${at('empty')}: no mirror here: no watermark.json`],
      [
        inside,
        `${join(at('mirror'), 'commits')}: no mirror here: no watermark.json, no manifests under commits/, no leaves under leaves/ (the folder lies inside the mirror in ${at('mirror')})`,
      ],
      [
        prefixed,
        `${at('mirror')}: no mirror here: no nuget/watermark.json, no manifests under nuget/commits/, no leaves under nuget/leaves/ (there is a mirror here with no prefix)`,
      ],
      [s3Empty, `s3://${harness.bucket}/: no mirror here: no watermark.json`],
    ];
    for (const [result, message] of wrong) {
      expect(result.stderr.startsWith(`catalog-sync: ${message}`), result.stderr).toBe(true);
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(result).toMatchObject({ code: 2, stdout: '' });
    }
    expect(read).toMatchObject({ code: 0, stderr: '' });
    expect(read.stdout.trim().split('\n')).toHaveLength(catalog.commits.length);
    expect({ missing: tree(at('missing')), empty: tree(at('empty')), mirror: tree(at('mirror')) }).toEqual(before);
    expect(await harness.keys()).toEqual([]);
  });

  it('changes --follow on a mirror with no commit yet says once that it waits for the first commit, then reads it', async () => {
    const dir = join(root, 'starting');
    const { child, done } = startCli(['changes', '--data-dir', dir, '--follow', '--poll-interval', '0.05', '--json']);
    let stderr = '';
    let stdout = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    await waitFor(() => stderr.includes('\n'), 'the waiting line');
    await writeMirror(new LocalStore(dir), '', catalog.commits);
    await waitFor(() => stdout.trim().split('\n').length === catalog.commits.length, 'the first commits');
    child.kill('SIGINT');
    const result = await done;
    expect(result.stderr).toBe(
      `catalog-sync: ${dir}: no commit yet (no watermark.json): waiting for the first commit\n`,
    );
    expect(
      result.stdout
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { commitKey: string }).commitKey),
    ).toEqual(catalog.commits.map((commit) => commitKeyOf(commit.timestamp)));
  });
});
