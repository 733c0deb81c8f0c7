/**
 * `catalog-sync changes` on the local folder, as a user runs it: every commit to the watermark as JSON lines (per
 * commit or per leaf), from a time or after a key, as a named consumer that resumes where it left off, with
 * `--exec` checkpointing only when the command exits 0, and clear usage errors.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commitKeyOf } from '../../../lambda/contract/keys.js';
import { runCli } from '../../../testkit/cli-process.js';
import { at, catalog, head, jsonLines, newDir, runJson, useReplica } from './cli-local-kit.js';

useReplica();

interface CommitLine {
  commitKey: string;
  commitId: string;
  commitTimeStamp: string;
  leaves: { key: string; id: string; version: string; type: string }[];
}

async function synced(name: string): Promise<string> {
  const dir = newDir(name);
  expect(await runJson(dir, ['--max-commits', '1000'])).toMatchObject({ cursorAfter: head, caughtUp: true });
  return dir;
}

/** One folder for the tests that only read it (changes with no --consumer, refused flags), synced once. */
let readOnly: Promise<string> | undefined;
const syncedToRead = (): Promise<string> => (readOnly ??= synced('read-only'));

describe('catalog-sync changes', () => {
  it('prints every commit to the watermark in order, as JSON lines per commit or per leaf, from a time or after a key', async () => {
    const dir = await syncedToRead();
    const all = catalog.commits.map((commit) => commitKeyOf(commit.timestamp));
    const result = await runCli(['changes', ...at(dir), '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const commits = jsonLines<CommitLine>(result.stdout);
    expect(commits.map((c) => c.commitKey)).toEqual(all);
    expect(commits[5]).toMatchObject({
      commitId: catalog.commits[5]!.commitId,
      commitTimeStamp: expect.stringMatching(/\.\d{7}Z$/),
    });
    expect(commits[5]!.leaves).toHaveLength(catalog.commits[5]!.leaves.length);

    const leaves = jsonLines<CommitLine['leaves'][number] & { commitKey: string }>(
      (await runCli(['changes', ...at(dir), '--json', '--leaves'])).stdout,
    );
    expect(leaves).toHaveLength(catalog.commits.reduce((n, c) => n + c.leaves.length, 0));
    expect(leaves[0]).toMatchObject({ commitKey: all[0], key: expect.stringMatching(/^leaves\//) });

    const since = jsonLines<CommitLine>(
      (await runCli(['changes', ...at(dir), '--json', '--since', catalog.commits[40]!.timestamp])).stdout,
    );
    expect(since.map((c) => c.commitKey)).toEqual(all.slice(40));
    const after = jsonLines<CommitLine>((await runCli(['changes', ...at(dir), '--json', '--after', all[40]!])).stdout);
    expect(after.map((c) => c.commitKey)).toEqual(all.slice(41));
    const text = await runCli(['changes', ...at(dir), '--after', all.at(-2)!]);
    expect(text.stdout).toBe(
      `${commits.at(-1)!.commitTimeStamp} ${all.at(-1)} ${commits.at(-1)!.leaves.length === 1 ? '1 leaf' : `${commits.at(-1)!.leaves.length} leaves`} (commit ${commits.at(-1)!.commitId})\n`,
    );
  });

  it('as a named consumer resumes after its cursor; --exec checkpoints only when the command exits 0', async () => {
    const dir = await synced('consumer');
    const all = catalog.commits.map((commit) => commitKeyOf(commit.timestamp));
    // Fails on the 6th commit: the five before it are checkpointed, the 6th is not.
    const log = join(dir, 'exec.log');
    const script = `read -r line; n=$(wc -l < ${JSON.stringify(log)} 2>/dev/null || echo 0); [ "$n" -ge 5 ] && exit 3; echo "$CATALOG_SYNC_COMMIT_KEY" >> ${JSON.stringify(log)}`;
    const failed = await runCli(['changes', ...at(dir), '--consumer', 'exec', '--exec', script]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain(`exited with 3 on commit ${all[5]}`);
    expect((await readFile(log, 'utf8')).trim().split('\n')).toEqual(all.slice(0, 5));
    const status = jsonLines<{ consumers: { cursor: string }[] }>(
      (await runCli(['status', ...at(dir), '--consumer', 'exec', '--json'])).stdout,
    )[0]!;
    expect(commitKeyOf(status.consumers[0]!.cursor)).toBe(all[4]);

    // stdout is this test's pipe: checkpointing what is written into it is asked for by name.
    const first = await runCli([
      'changes',
      ...at(dir),
      '--consumer',
      'indexer',
      '--json',
      '--checkpoint-every',
      '7',
      '--checkpoint-on-write',
    ]);
    expect(first.code).toBe(0);
    expect(jsonLines<CommitLine>(first.stdout).map((c) => c.commitKey)).toEqual(all);
    const again = await runCli(['changes', ...at(dir), '--consumer', 'indexer', '--json', '--checkpoint-on-write']);
    expect(again).toMatchObject({ code: 0, stdout: '' });
  });

  it('names the flag and what is wrong for bad input, and reads nothing', async () => {
    const dir = await syncedToRead();
    const cases: [string[], string][] = [
      [['--after', 'nope'], '--after'],
      [['--since', 'yesterday'], '--since'],
      [['--since', '2020-01-01', '--after', '001e9fzMHc3F'], 'not both'],
      [['--checkpoint-every', '2'], '--checkpoint-every: needs --consumer'],
      [['--consumer', 'catalog-to-s3'], "the follower's cursor"],
      [['--consumer', 'bad name'], '--consumer'],
      [['--poll-interval', '0', '--follow'], '--poll-interval'],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(['changes', ...at(dir), '--json', ...args]);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toContain(message);
      expect(result.stdout).toBe('');
    }
  });
});
