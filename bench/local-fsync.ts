/**
 * What durable local writes cost (issue 10, item 7): the local folder's store, as the engine drives it, with
 * and without fsync. Each commit's leaves are written `--concurrency` at a time (PUTs of the engine's keys and
 * bodies: a generated catalog's leaves, about 2.7 kB), then the commit's manifest, and every
 * `--checkpoint-commits` commits a cursor write under the lock. No network: this isolates the store.
 *
 *   tsc -p bench/tsconfig.json && node dist/bench/local-fsync.js --leaves 2000 --repeat 3
 *
 * Runs alternate between the modes (durable, no fsync) in fresh folders under `--dir`; each mode's figures are
 * its median run. Prints a table and writes bench/results/local-fsync-<UTC>.json. The folder's file system
 * matters: on tmpfs fsync is free.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { commitKeyOf, leafKey, parseTimestamp, type Ticks } from '../lambda/contract/index.js';
import { LocalStore } from '../lambda/stores/index.js';
import { generateCatalog, leafBody } from '../testkit/index.js';
import { machineCpuMs, quantile, round } from './stats.js';

const { values: args } = parseArgs({
  options: {
    leaves: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '16' },
    'checkpoint-commits': { type: 'string', default: '50' },
    repeat: { type: 'string', default: '3' },
    dir: { type: 'string', default: tmpdir() },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) {
  process.stdout.write(
    `node dist/bench/local-fsync.js [--leaves N (2000)] [--concurrency N (16)] [--checkpoint-commits N (50)] [--repeat N (3)] [--dir DIR (os tmpdir)]\n`,
  );
  process.exit(0);
}
const leavesWanted = Number(args.leaves);
const concurrency = Number(args.concurrency);
const checkpointCommits = Number(args['checkpoint-commits']);
const repeat = Number(args.repeat);

interface PlannedCommit {
  readonly key: string;
  readonly ticks: Ticks;
  readonly commitId: string;
  readonly leaves: { key: string; body: Buffer }[];
}

/** Commits of 1-20 leaves, as the main benchmark's catalog; bodies rendered before any clock starts. */
function plan(): PlannedCommit[] {
  const catalog = generateCatalog({ commits: Math.ceil(leavesWanted / 10) + 10, leavesPerCommit: [1, 20], seed: 42 });
  const commits: PlannedCommit[] = [];
  let total = 0;
  for (const commit of catalog.commits) {
    if (total >= leavesWanted) break;
    const key = commitKeyOf(commit.timestamp);
    commits.push({
      key,
      ticks: parseTimestamp(commit.timestamp),
      commitId: commit.commitId,
      leaves: commit.leaves.map((leaf) => ({
        key: leafKey('', key, leaf.id, leaf.version),
        body: Buffer.from(leafBody(catalog, leaf, 'https://api.nuget.org')),
      })),
    });
    total += commit.leaves.length;
  }
  return commits;
}

/** Every fsync of the process is counted (a figure the machine's load does not move), by wrapping FileHandle.sync. */
let fsyncs = 0;
{
  const handle = await open(fileURLToPath(import.meta.url), 'r');
  const prototype = Object.getPrototypeOf(handle) as { sync: () => Promise<void> };
  await handle.close();
  const sync = prototype.sync;
  prototype.sync = function (this: unknown) {
    fsyncs++;
    return sync.call(this);
  };
}

interface Run {
  readonly durable: boolean;
  readonly leaves: number;
  readonly seconds: number;
  readonly leavesPerSecond: number;
  readonly cpuMsPerLeaf: number;
  /** Files and folders synced, per leaf (manifests and cursor writes included). */
  readonly fsyncsPerLeaf: number;
  /** CPU of every other process meanwhile, as a share of one core: the machine's load. */
  readonly othersCpu: number;
}

async function runOnce(commits: readonly PlannedCommit[], durable: boolean): Promise<Run> {
  const root = mkdtempSync(join(args.dir, 'catalog-sync-fsync-bench-'));
  try {
    const store = new LocalStore(root, { durable });
    let expected = await store.read('bench');
    let leaves = 0;
    const fsyncsBefore = fsyncs;
    const machineBefore = machineCpuMs();
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    for (let i = 0; i < commits.length; i++) {
      const commit = commits[i]!;
      let next = 0;
      const worker = async (): Promise<void> => {
        for (let j = next++; j < commit.leaves.length; j = next++)
          await store.putLeaf(commit.leaves[j]!.key, commit.leaves[j]!.body);
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, commit.leaves.length) }, worker));
      await store.putJson(`commits/${commit.key}.json`, {
        commitId: commit.commitId,
        leaves: commit.leaves.map((leaf) => ({ key: leaf.key })),
      });
      leaves += commit.leaves.length;
      if ((i + 1) % checkpointCommits === 0 || i === commits.length - 1) {
        const result = await store.compareAndSet('bench', expected, {
          value: commit.ticks,
          commitId: commit.commitId,
          runId: 'bench',
        });
        if (result.outcome !== 'written') throw new Error('cursor conflict in a benchmark folder nobody else uses');
        expected = await store.read('bench');
      }
    }
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const ownCpuMs = (cpu.user + cpu.system) / 1000;
    const machineAfter = machineCpuMs();
    const othersCpu = Number.isFinite(machineBefore)
      ? (machineAfter - machineBefore - ownCpuMs) / (seconds * 1000)
      : Number.NaN;
    return {
      durable,
      leaves,
      seconds: round(seconds, 2),
      leavesPerSecond: round(leaves / seconds, 0),
      cpuMsPerLeaf: round(ownCpuMs / leaves, 3),
      fsyncsPerLeaf: round((fsyncs - fsyncsBefore) / leaves, 2),
      othersCpu: round(othersCpu, 2),
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const commits = plan();
const runs: Run[] = [];
for (let i = 0; i < repeat; i++) {
  // Alternating, and starting with the other mode each round, so that a drifting load evens out.
  for (const durable of i % 2 === 0 ? [true, false] : [false, true]) runs.push(await runOnce(commits, durable));
}
const median = (durable: boolean, pick: (run: Run) => number): number =>
  quantile(
    runs
      .filter((run) => run.durable === durable)
      .map(pick)
      .sort((a, b) => a - b),
    0.5,
  );
const rows = [true, false].map((durable) => ({
  mode: durable ? 'durable (fsync file + folders)' : 'no fsync',
  leavesPerSecond: median(durable, (run) => run.leavesPerSecond),
  cpuMsPerLeaf: median(durable, (run) => run.cpuMsPerLeaf),
  fsyncsPerLeaf: median(durable, (run) => run.fsyncsPerLeaf),
  othersCpu: median(durable, (run) => run.othersCpu),
}));
const table = [
  `local folder, ${runs[0]!.leaves} leaves in ${commits.length} commits, concurrency ${concurrency}, cursor every ${checkpointCommits} commits, median of ${repeat}, folder under ${args.dir}`,
  'mode                              leaves/s   CPU ms/leaf   fsyncs/leaf   others CPU',
  ...rows.map(
    (row) =>
      `${row.mode.padEnd(34)}${String(row.leavesPerSecond).padStart(8)}${String(row.cpuMsPerLeaf).padStart(14)}${String(row.fsyncsPerLeaf).padStart(14)}${String(row.othersCpu).padStart(13)}`,
  ),
].join('\n');
process.stdout.write(`${table}\n`);
const results = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bench', 'results');
mkdirSync(results, { recursive: true });
const file = join(results, `local-fsync-${new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19)}Z.json`);
writeFileSync(
  file,
  `${JSON.stringify({ table, rows, runs, options: { leaves: leavesWanted, concurrency, checkpointCommits, repeat, dir: args.dir } }, null, 1)}\n`,
);
process.stdout.write(`written to ${file}\n`);
