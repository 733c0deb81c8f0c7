#!/usr/bin/env node
// @ts-check
/**
 * `npm run demo`: catalog-sync end to end, offline. Starts a catalog replica on 127.0.0.1 serving a generated
 * catalog (with a little latency, so the progress bar has something to show), syncs it into a temporary folder
 * with the built CLI exactly as a user runs it, prints `status`, a few stored keys, watermark.json and one
 * manifest, then the next commands to try (`status`, `runs`, `keys`, `run --follow`, a named consumer's pipeline
 * and `consumers`) with the exact --source and --data-dir, and keeps the replica running for them until Ctrl-C
 * (then it stops the replica and exits 0). The mirror folder stays afterwards (its path is printed) unless
 * `--clean`. Needs only `npm ci` (`npm run demo` builds dist/ first: predemo).
 *
 *   npm run demo                 # 500 commits, 20 ms per request
 *   npm run demo -- --clean      # remove the mirror folder on Ctrl-C
 *   npm run demo -- --commits 2000 --latency 5
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = fileURLToPath(new URL('.', import.meta.url));
const repo = join(here, '..');
const cli = join(repo, 'bin', 'catalog-sync.js');
const support = join(repo, 'dist', 'testkit');

const { values } = parseArgs({
  options: {
    commits: { type: 'string', default: '500' },
    latency: { type: 'string', default: '20' },
    // The folder is kept by default now; --keep is still accepted.
    keep: { type: 'boolean', default: false },
    clean: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  process.stdout.write('usage: npm run demo [-- --commits N] [--latency MS] [--clean]\n');
  process.exit(0);
}
const commits = Number(values.commits);
const latencyMs = Number(values.latency);
if (!Number.isInteger(commits) || commits < 1 || !Number.isFinite(latencyMs) || latencyMs < 0) {
  process.stderr.write('demo: --commits must be a whole number >= 1 and --latency a number of ms >= 0\n');
  process.exit(2);
}
if (!existsSync(join(repo, 'dist', 'lambda', 'cli.js')) || !existsSync(join(support, 'catalog-replica.js'))) {
  process.stderr.write('demo: dist/ is missing: run `npm run build` first (`npm run demo` does)\n');
  process.exit(2);
}

const { generateCatalog } = await import(join(support, 'catalog-generator.js'));
const { CatalogReplica } = await import(join(support, 'catalog-replica.js'));

/** Runs the CLI with the terminal as its own (so the progress bar shows); resolves to its exit code. */
function catalogSync(/** @type {string[]} */ args) {
  process.stdout.write(`\n$ catalog-sync ${args.join(' ')}\n`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: 'inherit' });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

/** Every file under `dir` (the state folder excepted) as a `/`-separated key, in byte order. */
async function keysUnder(/** @type {string} */ dir) {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) =>
      relative(dir, join(entry.parentPath ?? entry.path, entry.name))
        .split(/[\\/]/)
        .join('/'),
    )
    .filter((key) => !key.startsWith('.catalog-sync/'))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** An argument as a POSIX shell reads it back. */
function shellWord(/** @type {string} */ word) {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

// Ctrl-C reaches the CLI too (same process group): it checkpoints and exits; the demo then cleans up. Once the
// demo is waiting for its user, Ctrl-C ends the wait: the replica stops and the demo exits 0.
let interrupted = false;
let waiting = false;
/** @type {() => void} */
let endWait = () => undefined;
const stopRequested = new Promise((resolve) => (endWait = () => resolve(undefined)));
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
  process.on(signal, () => {
    if (!waiting) interrupted = true;
    endWait();
  });
}

const catalog = generateCatalog({
  commits,
  seed: 2017,
  leavesPerCommit: [1, 4],
  sameMillisecondPairs: 2,
  semver2Ratio: 0.1,
});
const leaves = catalog.commits.reduce((n, commit) => n + commit.leaves.length, 0);
const replica = await CatalogReplica.start({ catalog, pageSize: 100, latencyMs });
const dataDir = await mkdtemp(join(tmpdir(), 'catalog-sync-demo-'));
// The named pipe the pipeline's reader acknowledges commits on: beside the mirror, not in it.
const acks = `${dataDir}.acks`;
const source = ['--source', replica.serviceIndexUrl, '--data-dir', dataDir];
let exitCode = 0;
let since = '';
try {
  process.stdout.write(
    `catalog replica on ${replica.origin}: ${commits} commits, ${leaves} leaves, ${latencyMs} ms per request\n` +
      `data folder: ${dataDir}\n`,
  );
  exitCode = await catalogSync(['run', ...source]);
  if (exitCode === 0 && !interrupted) {
    exitCode = await catalogSync(['status', ...source]);
    const keys = await keysUnder(dataDir);
    const manifests = keys.filter((key) => key.startsWith('commits/'));
    const leafKeys = keys.filter((key) => key.startsWith('leaves/'));
    process.stdout.write(
      `\nstored: ${manifests.length} manifests under commits/, ${leafKeys.length} leaves under leaves/\n`,
    );
    for (const key of [...manifests.slice(0, 3), '...', ...leafKeys.slice(0, 5), '...', ...leafKeys.slice(-2)])
      process.stdout.write(`  ${key}\n`);
    // watermark.json is the bound a reader trusts (docs/contract.md), never the newest manifest: manifests of
    // different commits may be written in any order.
    const watermark = await readFile(join(dataDir, 'watermark.json'), 'utf8').catch(() => undefined);
    if (watermark !== undefined) {
      process.stdout.write(
        `\nwatermark.json (everything at or before its cursor is stored, manifests included: read up to it):\n${JSON.stringify(JSON.parse(watermark), null, 2)}\n`,
      );
    }
    const newest = manifests.at(-1);
    if (newest !== undefined) {
      const manifest = JSON.parse(await readFile(join(dataDir, ...newest.split('/')), 'utf8'));
      process.stdout.write(
        `\n${newest} (one commit's manifest: its leaves, each under leaves/):\n${JSON.stringify(manifest, null, 2)}\n`,
      );
    }
    // Keys sort by commit time: `keys` gives the ListObjectsV2 StartAfter of a date, here a plain comparison.
    since = `${catalog.commits[Math.floor(commits / 2)].timestamp.slice(0, 19)}Z`;
    const args = ['keys', '--since', since];
    const keysRun = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
    const startAfter = keysRun.stdout.trim();
    process.stdout.write(`\n$ catalog-sync ${args.join(' ')}\n${keysRun.stdout}${keysRun.stderr}`);
    if (keysRun.status !== 0) exitCode = keysRun.status ?? 1;
    else
      process.stdout.write(
        `(${leafKeys.filter((key) => key > startAfter).length} of the ${leafKeys.length} leaves sort after it: those committed from ${since} on)\n`,
      );
  }
  if (exitCode === 0 && !interrupted) {
    const command = (/** @type {string[]} */ args) =>
      `  $ ${[process.execPath, cli, ...args].map(shellWord).join(' ')}\n`;
    waiting = true;
    process.stdout.write(
      `\nThe replica stays up at ${replica.origin} and the mirror in ${dataDir}. Try, in another terminal:\n` +
        command(['status', ...source]) +
        command(['runs', ...source]) +
        command(['keys', '--since', since.slice(0, 10)]) +
        command(['run', '--follow', '--poll-interval', '5', ...source]) +
        `(run --follow prints one line per slice that moved: the replica is caught up, so it says so once and waits; Ctrl-C stops it\n` +
        ` and prints what the whole follow did.)\n` +
        `  $ [ -p ${shellWord(acks)} ] || mkfifo ${shellWord(acks)}; ` +
        `${[process.execPath, cli, 'changes', '--follow', '--json', '--consumer', 'printer', '--ack-from', acks, '--data-dir', dataDir].map(shellWord).join(' ')} | ` +
        `${[process.execPath, join(repo, 'examples', 'print-changes.mjs'), '--ack', acks].map(shellWord).join(' ')}\n` +
        `(every commit of the mirror in order, as JSON lines into a small script that acknowledges each one on a named pipe; then it follows\n` +
        ` the watermark. The named consumer "printer" is checkpointed only as far as the script acknowledged: stopped and started again, it\n` +
        ` goes on after its last checkpoint.)\n` +
        command(['consumers', '--data-dir', dataDir]) +
        `(the mirror's named consumers: each one's cursor, how many commits and how much commit time it is behind watermark.json, and\n` +
        ` whether an instance runs it; read from the folder alone.)\n` +
        `Ctrl-C here stops the replica.\n`,
    );
    await stopRequested;
  }
} finally {
  await replica.stop();
  await rm(acks, { force: true });
  if (values.clean) await rm(dataDir, { recursive: true, force: true });
  else
    process.stdout.write(
      `\nreplica stopped; the mirror stays in ${dataDir} (rm -rf ${shellWord(dataDir)} to remove it)\n`,
    );
}
process.exit(interrupted && exitCode === 0 ? 130 : exitCode);
