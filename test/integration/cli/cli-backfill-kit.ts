/**
 * What the tests of `catalog-sync backfill` into a folder share (cli-backfill.test.ts, cli-backfill-stops.test.ts):
 * fresh data folders under one temporary root (`useBackfillFolders()` makes it before the file's tests and removes it
 * after), the flags that point a command at a replica, a catalog with every hard case for cutting ranges, and a
 * follower run until caught up.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import type { RunSummary } from '../../../lambda/contract/run-summary.js';
import { generateCatalog, type GeneratedCatalog } from '../../../testkit/catalog-generator.js';
import type { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { runCli } from '../../../testkit/cli-process.js';

/** The cursor before any commit. */
export const START = '0001-01-01T00:00:00.0000000Z';
/** Many CLI processes on a busy two-core machine. */
export const SLOW = 180_000;

let root: string;
let dirs = 0;

/** Makes the file's temporary root before its tests and removes it after them. */
export function useBackfillFolders(): void {
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'catalog-sync-backfill-'));
  });
  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });
}

/** A fresh --data-dir (not created yet). */
export function newDir(name: string): string {
  return join(root, `${name}-${++dirs}`);
}

/** Flags that point a command at `replica` and `dir`. */
export function at(dir: string, replica: CatalogReplica): string[] {
  return ['--source', replica.serviceIndexUrl, '--data-dir', dir];
}

/** The one JSON line a command printed. */
export function jsonLine<T = RunSummary>(stdout: string): T {
  const lines = stdout.split('\n').filter((line) => line.trim() !== '');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as T;
}

/** A catalog with every hard case for cutting ranges. */
export function hardCatalog(seed: number, commits = 160): GeneratedCatalog {
  return generateCatalog({ commits, seed, leavesPerCommit: [1, 6], sameMillisecondPairs: 4, semver2Ratio: 0.2 });
}

/** `run` again and again until caught up (a follower's first day), into `dir`. */
export async function followUntilCaughtUp(dir: string, replica: CatalogReplica): Promise<RunSummary[]> {
  const summaries: RunSummary[] = [];
  for (;;) {
    const result = await runCli(['run', ...at(dir, replica), '--json', '--max-commits', '37']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const summary = jsonLine(result.stdout);
    summaries.push(summary);
    if (summary.caughtUp) return summaries;
  }
}
