/**
 * What the tests of `catalog-sync` with the embedded default share: one generated catalog served by a replica
 * on 127.0.0.1 for the whole file (`useReplica()` starts it before the file's tests and stops it after), fresh
 * data folders under one temporary root, and helpers to run the CLI and read what it printed.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { formatTimestamp, parseTimestamp, ticksToEpochMs, type Ticks } from '../../../lambda/contract/time.js';
import type { RunSummary } from '../../../lambda/contract/run-summary.js';
import { generateCatalog, leafBody, type GeneratedCatalog } from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { runCli } from '../../../testkit/cli-process.js';
import { commitTicks } from '../../../testkit/sync-harness.js';

export const SUMMARY_FIELDS = [
  'runId',
  'cursorName',
  'cursorBefore',
  'cursorAfter',
  'commits',
  'leaves',
  'deletes',
  'quarantined',
  'bytes',
  'caughtUp',
  'stoppedBy',
  'durationMs',
  'putRetries',
];
export const START = '0001-01-01T00:00:00.0000000Z';
/** For tests that start many CLI processes: a busy machine with two cores runs them slowly. */
export const MANY_PROCESSES = 120_000;

export let root: string;
export let catalog: GeneratedCatalog;
export let replica: CatalogReplica;
export let head: string;
let dirs = 0;

/** Starts the file's catalog replica before its tests and stops it (and removes the folders) after them. */
export function useReplica(): void {
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'catalog-sync-cli-'));
    catalog = generateCatalog({
      commits: 60,
      seed: 83,
      leavesPerCommit: [1, 4],
      sameMillisecondPairs: 3,
      semver2Ratio: 0.2,
      nonNormalizedDeleteRatio: 0.5,
    });
    replica = await CatalogReplica.start({ catalog, pageSize: 10 });
    head = formatTimestamp(commitTicks(catalog, -1));
  });
  afterAll(async () => {
    await replica?.stop();
    if (root) await rm(root, { recursive: true, force: true });
  });
}

/** A fresh --data-dir (not created yet). */
export function newDir(name: string): string {
  return join(root, `${name}-${++dirs}`);
}

/** Flags that point a command at `replica` and `dir`. */
export function at(dir: string, source: CatalogReplica = replica): string[] {
  return ['--source', source.serviceIndexUrl, '--data-dir', dir];
}

/** The JSON lines a command printed. */
export function jsonLines<T = RunSummary>(stdout: string): T[] {
  return stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T);
}

/** Runs `run --json` and returns its one summary; fails on anything but exit 0 with exactly one line. */
export async function runJson(
  dir: string,
  extra: string[] = [],
  source: CatalogReplica = replica,
): Promise<RunSummary> {
  const result = await runCli(['run', ...at(dir, source), '--json', ...extra]);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  const lines = jsonLines(result.stdout);
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

export function ticks(timestamp: string): Ticks {
  return parseTimestamp(timestamp);
}

export function lag(headTimestamp: string, cursorTimestamp: string): number {
  return (ticksToEpochMs(ticks(headTimestamp)) - ticksToEpochMs(ticks(cursorTimestamp))) / 1000;
}

export function leavesOf(commits: GeneratedCatalog['commits']): { leaves: number; deletes: number; bytes: number } {
  let leaves = 0;
  let deletes = 0;
  let bytes = 0;
  for (const commit of commits) {
    for (const leaf of commit.leaves) {
      leaves++;
      if (leaf.type === 'PackageDelete') deletes++;
      bytes += Buffer.byteLength(leafBody(catalog, leaf, replica.origin));
    }
  }
  return { leaves, deletes, bytes };
}
