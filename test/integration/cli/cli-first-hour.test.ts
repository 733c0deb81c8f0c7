/**
 * A newcomer's first hour (issue 34), from the CLI as a child process: a step that fails does not change what the
 * folder remembers (a run or backfill that never read its catalog leaves `.catalog-sync/sources.json` as it was), and
 * `retry-quarantine` with nothing quarantined is an answer, not a network error.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../testkit/cli-process.js';
import { jsonLines, MANY_PROCESSES, newDir, replica, runJson, useReplica } from './cli-local-kit.js';

useReplica();

/** Nothing listens on port 1: every request is refused at once. */
const DEAD = 'http://127.0.0.1:1/v3/index.json';

async function rememberedSources(dir: string): Promise<Record<string, string> | undefined> {
  try {
    return JSON.parse(await readFile(join(dir, '.catalog-sync', 'sources.json'), 'utf8')) as Record<string, string>;
  } catch {
    return undefined;
  }
}

describe('a step that fails does not change what the folder remembers', () => {
  it(
    'a run or backfill that could not read its catalog leaves the remembered source as it was; the next run without --source reads the right one, unwarned',
    async () => {
      const dir = newDir('remembered');
      await runJson(dir, ['--max-commits', '10']);
      expect(await rememberedSources(dir)).toEqual({ 'catalog-to-s3': replica.serviceIndexUrl });

      const fresh = newDir('never-read');
      const freshBackfill = newDir('never-planned');
      const [mistyped, first, backfill] = await Promise.all([
        runCli(['run', '--source', DEAD, '--data-dir', dir]),
        runCli(['run', '--source', DEAD, '--data-dir', fresh]),
        runCli(['backfill', '--source', DEAD, '--data-dir', freshBackfill, '--workers', '1']),
      ]);
      for (const failed of [mistyped, first, backfill]) {
        expect(failed.code, failed.stderr).toBe(1);
        expect(failed.stderr).toContain('ECONNREFUSED');
      }
      expect(await rememberedSources(dir)).toEqual({ 'catalog-to-s3': replica.serviceIndexUrl });
      expect(await rememberedSources(fresh)).toBeUndefined();
      expect(await rememberedSources(freshBackfill)).toBeUndefined();

      // No --source: the folder's own source, and no warning about a "different source" (the cursor never moved).
      const next = await runCli(['run', '--data-dir', dir, '--json']);
      expect(next).toMatchObject({ code: 0, stderr: '' });
      expect(jsonLines(next.stdout)[0]).toMatchObject({ stoppedBy: 'caught-up' });
    },
    MANY_PROCESSES,
  );
});

describe('retry-quarantine', () => {
  it(
    'with nothing quarantined contacts no source: "nothing to retry", exit 0, even with the source down',
    async () => {
      const dir = newDir('nothing-quarantined');
      const retry = await runCli(['retry-quarantine', '--source', DEAD, '--data-dir', dir]);
      expect(retry).toMatchObject({ code: 0, stdout: 'nothing quarantined: nothing to retry\n', stderr: '' });
    },
    MANY_PROCESSES,
  );
});
