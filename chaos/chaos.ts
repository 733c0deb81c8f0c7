/**
 * `npm run chaos`: the chaos suite. See chaos/README.md.
 *
 * Four kinds of trouble, each for many iterations, with the invariants checked from the outside after every
 * step (and the cursor sampled all along): 8 runs at once on one cursor; CLI runs SIGKILLed at random
 * moments; 30% of catalog requests failing up to 3 times each; the S3 and DynamoDB servers stopped and
 * started again mid-run. Prints what was survived and writes it to chaos/results/. Exits 1 on any problem.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { mulberry32 } from '../testkit/index.js';
import { ITERATIONS, KINDS, type ChaosContext, type Kind, type S3Mode } from './lib/kinds.js';
import { startEmulators } from './lib/servers.js';
import { faultsTotal, newStats, type KindStats } from './lib/stats.js';

const HELP = `npm run chaos -- [options]

  --iterations N      iterations of each kind                                (default 50)
  --kind LIST         overlap,kill,faults,restart (comma list) or all          (default all)
  --seed N            seed of every random choice (timing is not seeded)     (default: from the clock)
  --dynamo KIND       auto | dynamodb-local | dynalite                        (default auto: Java or not)
  --store WHERE       mixed | aws | local: where overlap, kill and faults     (default mixed: alternate)
                      iterations sync to (restart is always aws)
  --s3 MODE           atomic | stock: s3rver with the suite's atomic PUT, or   (default atomic)
                      s3rver as published (torn reads of objects being
                      overwritten are counted, not failed; lost ones fail)
  --raw-s3rver        the same as --s3 stock
  --jobs N            kinds run in N processes at once, each with its own     (default 2)
                      emulators (1: one after the other in this process)
  --label TEXT        a note stored with the results (e.g. what engine change is being tried)
  --out DIR           where results go                                        (default chaos/results)
  --help
`;

const here = dirname(fileURLToPath(import.meta.url));

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      iterations: { type: 'string', default: '50' },
      kind: { type: 'string', default: 'all' },
      seed: { type: 'string' },
      dynamo: { type: 'string', default: 'auto' },
      s3: { type: 'string', default: 'atomic' },
      'raw-s3rver': { type: 'boolean', default: false },
      store: { type: 'string', default: 'mixed' },
      label: { type: 'string', default: '' },
      out: { type: 'string', default: join(here, 'results') },
      jobs: { type: 'string', default: '2' },
      'result-file': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const iterations = Number(values.iterations);
  if (!Number.isInteger(iterations) || iterations < 1)
    throw new Error(`--iterations must be a positive whole number, got ${values.iterations}`);
  const kinds = (values.kind === 'all' ? [...KINDS] : values.kind.split(',').map((k) => k.trim())) as Kind[];
  for (const kind of kinds)
    if (!KINDS.includes(kind)) throw new Error(`--kind: unknown kind ${kind} (one of ${KINDS.join(', ')}, or all)`);
  const dynamo = values.dynamo as 'auto' | 'dynamodb-local' | 'dynalite';
  if (!['auto', 'dynamodb-local', 'dynalite'].includes(dynamo))
    throw new Error(`--dynamo must be auto, dynamodb-local or dynalite`);
  const store = values.store as 'mixed' | 'aws' | 'local';
  if (!['mixed', 'aws', 'local'].includes(store)) throw new Error('--store must be mixed, aws or local');
  if (values.s3 !== 'atomic' && values.s3 !== 'stock')
    throw new Error(`--s3 must be atomic or stock, got ${values.s3}`);
  const s3: S3Mode = values['raw-s3rver'] ? 'stock' : values.s3;
  const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);

  const jobs = Number(values.jobs);
  if (!Number.isInteger(jobs) || jobs < 1)
    throw new Error(`--jobs must be a positive whole number, got ${values.jobs}`);

  const started = Date.now();
  // Taken now: the engine in this process and the built CLI are what the tree holds at the start.
  const git = gitState();
  const child = values['result-file'] !== undefined;
  if (!child)
    process.stdout.write(
      `catalog-sync chaos suite: ${iterations} iteration(s) of ${kinds.join(', ')}; seed ${seed}; ${Math.min(jobs, kinds.length)} job(s)${values.label ? `; ${values.label}` : ''}\n`,
    );
  let all: KindStats[];
  let dynamoName: string;
  if (jobs > 1 && kinds.length > 1) {
    ({ all, dynamoName } = await runInChildren(kinds, jobs, iterations, seed, dynamo, s3, store));
  } else {
    ({ all, dynamoName } = await runHere(kinds, iterations, seed, dynamo, s3, store));
  }
  if (child) {
    writeFileSync(values['result-file']!, JSON.stringify({ all, dynamoName }));
    return 0;
  }
  const totalMs = Date.now() - started;
  const report = formatReport(all, totalMs);
  process.stdout.write(`\n${report}\n`);
  const problems = all.reduce((n, s) => n + s.problems.length, 0);
  mkdirSync(values.out, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const json = {
    date: new Date().toISOString(),
    label: values.label,
    git,
    seed,
    iterationsPerKind: iterations,
    kinds,
    dynamo: dynamoName,
    s3,
    jobs: Math.min(jobs, kinds.length),
    machine: { cpus: cpus().length, model: cpus()[0]?.model, loadavg: loadavg() },
    node: process.version,
    totalMs,
    problems,
    stats: all,
    report,
  };
  writeFileSync(join(values.out, `chaos-${stamp}.json`), `${JSON.stringify(json, null, 2)}\n`);
  writeFileSync(join(values.out, 'latest.json'), `${JSON.stringify(json, null, 2)}\n`);
  process.stdout.write(`results: ${join(values.out, `chaos-${stamp}.json`)}\n`);
  return problems === 0 && all.every((s) => s.harnessErrors.length === 0 && s.incomplete.length === 0) ? 0 : 1;
}

/** Runs `kinds` one after the other in this process, with one pair of emulators. */
async function runHere(
  kinds: Kind[],
  iterations: number,
  seed: number,
  dynamo: 'auto' | 'dynamodb-local' | 'dynalite',
  s3: S3Mode,
  store: 'mixed' | 'aws' | 'local',
): Promise<{ all: KindStats[]; dynamoName: string }> {
  const emulators = await startEmulators({ dynamo, rawS3rver: s3 === 'stock' });
  process.stdout.write(
    `[${kinds.join(',')}] emulators: ${emulators.dynamo.name} at ${emulators.dynamo.endpoint} (persistent), s3rver at ${emulators.s3.endpoint} (${s3} PUTs)\n`,
  );
  // The in-process engine builds its SDK clients exactly as the Lambda does: endpoints from the environment.
  Object.assign(process.env, emulators.env());
  const ctx: ChaosContext = { emulators, prng: mulberry32(seed), env: emulators.env(), store, s3 };
  const all: KindStats[] = [];
  let interrupted = false;
  const onSignal = (): void => {
    interrupted = true;
    process.stdout.write('\ninterrupted: finishing the current iteration\n');
  };
  process.once('SIGINT', onSignal);
  // SIGTERM (e.g. from the parent of a job) stops at once: emulators stopped, their folder removed.
  const onTerm = (): void => void emulators.close().finally(() => process.exit(143));
  process.once('SIGTERM', onTerm);
  try {
    for (const kind of kinds) {
      const stats = newStats(kind);
      all.push(stats);
      const kindStarted = Date.now();
      for (let i = 0; i < iterations && !interrupted; i++) {
        const t0 = Date.now();
        const before = {
          problems: stats.problems.length,
          kills: stats.kills,
          faults: faultsTotal(stats),
          runs: stats.runs,
          tornReads: stats.tornReads,
        };
        try {
          await ITERATIONS[kind](ctx, stats, i);
          stats.iterations++;
        } catch (error) {
          stats.harnessErrors.push(`${kind} #${i + 1}: ${(error as Error)?.stack ?? String(error)}`);
          // A stopped emulator must come back for the next iteration.
          await Promise.allSettled([emulators.s3.start(), emulators.dynamo.start()]);
          if (stats.harnessErrors.length > 5)
            throw new Error(`too many harness errors in ${kind}:\n${stats.harnessErrors.join('\n')}`);
        }
        const newProblems = stats.problems.slice(before.problems);
        process.stdout.write(
          `[${kind}] ${String(i + 1).padStart(3)}/${iterations}  ${((Date.now() - t0) / 1000).toFixed(1).padStart(5)} s  runs +${stats.runs - before.runs}` +
            (kind === 'kill' ? `  kills +${stats.kills - before.kills}` : '') +
            (kind === 'faults' ? `  faults +${faultsTotal(stats) - before.faults}` : '') +
            (kind === 'restart' ? `  restarts ${stats.s3Restarts}/${stats.dynamoRestarts}` : '') +
            (s3 === 'stock' ? `  torn reads +${stats.tornReads - before.tornReads}` : '') +
            `  problems ${stats.problems.length}\n`,
        );
        for (const problem of newProblems) process.stdout.write(`    PROBLEM ${problem}\n`);
        if (newProblems.length > 0 && process.env.CHAOS_VERBOSE)
          process.stdout.write(`${JSON.stringify(stats.diagnostics.at(-1), null, 2)}\n`);
      }
      stats.durationMs = Date.now() - kindStarted;
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onTerm);
    await emulators.close();
  }
  return { all, dynamoName: emulators.dynamo.name };
}

/** Runs the kinds in `jobs` child processes (round robin), each with its own emulators; merges their figures. */
async function runInChildren(
  kinds: Kind[],
  jobs: number,
  iterations: number,
  seed: number,
  dynamo: string,
  s3: S3Mode,
  store: string,
): Promise<{ all: KindStats[]; dynamoName: string }> {
  const groups: Kind[][] = Array.from({ length: Math.min(jobs, kinds.length) }, () => []);
  kinds.forEach((kind, i) => groups[i % groups.length]!.push(kind));
  const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-chaos-jobs-'));
  try {
    const results = await Promise.all(
      groups.map(async (group, g) => {
        const resultFile = join(dir, `job-${g}.json`);
        // Under tsx, execArgv carries its loader: the child runs this same file the same way.
        const args = [
          ...process.execArgv,
          fileURLToPath(import.meta.url),
          '--kind',
          group.join(','),
          '--iterations',
          String(iterations),
          '--seed',
          String(seed + g),
          '--dynamo',
          dynamo,
          '--jobs',
          '1',
          '--store',
          store,
          '--result-file',
          resultFile,
          '--s3',
          s3,
        ];
        const job = spawn(process.execPath, args, { stdio: ['ignore', 'inherit', 'pipe'] });
        // Ctrl-C reaches the jobs through the terminal; a SIGTERM to this process is passed on.
        const forward = (): void => void job.kill('SIGTERM');
        process.once('SIGTERM', forward);
        void new Promise((resolve) => job.once('exit', resolve)).then(() => process.off('SIGTERM', forward));
        let stderr = '';
        job.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-20_000)));
        const code = await new Promise<number | null>((resolve) => job.once('exit', (c) => resolve(c)));
        if (code !== 0) throw new Error(`chaos job ${group.join(',')} exited with ${code}:\n${stderr}`);
        return JSON.parse(readFileSync(resultFile, 'utf8')) as { all: KindStats[]; dynamoName: string };
      }),
    );
    const byKind = new Map(results.flatMap((r) => r.all).map((s) => [s.kind, s]));
    return { all: kinds.map((k) => byKind.get(k)!), dynamoName: results[0]!.dynamoName };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function formatReport(all: KindStats[], totalMs: number): string {
  const rows: string[][] = [
    [
      'kind',
      'iterations',
      'runs',
      'kills',
      'faults',
      'S3 / DynamoDB restarts',
      'leaves checked',
      'checks',
      'samples',
      'torn reads',
      'lost',
      'problems',
      'time',
    ],
  ];
  const sum = (pick: (s: KindStats) => number): number => all.reduce((n, s) => n + pick(s), 0);
  for (const s of all) {
    rows.push([
      s.kind,
      String(s.iterations),
      String(s.runs),
      String(s.kills),
      String(faultsTotal(s)),
      `${s.s3Restarts} / ${s.dynamoRestarts}`,
      String(s.leavesChecked),
      String(s.checks),
      String(s.samples),
      String(s.tornReads),
      String(s.lost),
      String(s.problems.length),
      `${(s.durationMs / 1000).toFixed(0)} s`,
    ]);
  }
  rows.push([
    'total',
    String(sum((s) => s.iterations)),
    String(sum((s) => s.runs)),
    String(sum((s) => s.kills)),
    String(sum(faultsTotal)),
    `${sum((s) => s.s3Restarts)} / ${sum((s) => s.dynamoRestarts)}`,
    String(sum((s) => s.leavesChecked)),
    String(sum((s) => s.checks)),
    String(sum((s) => s.samples)),
    String(sum((s) => s.tornReads)),
    String(sum((s) => s.lost)),
    String(sum((s) => s.problems.length)),
    `${(totalMs / 1000).toFixed(0)} s`,
  ]);
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const line = (r: string[]): string =>
    r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ');
  const out = [
    line(rows[0]!),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...rows.slice(1, -1).map(line),
    widths.map((w) => '-'.repeat(w)).join('  '),
    line(rows.at(-1)!),
  ];
  out.push('');
  for (const s of all) {
    const detail: string[] = [];
    detail.push(`stores ${fmt(s.stores)}, runners ${fmt(s.runners)}`);
    detail.push(`run outcomes ${fmt(s.outcomes)}`);
    if (faultsTotal(s) > 0) detail.push(`faults served ${fmt(s.faults)}; HTTP retries ${s.retries}`);
    if (s.kind === 'restart')
      detail.push(
        `stops that found a run in flight: ${s.stopsMidRun} of ${s.s3Restarts + s.dynamoRestarts}; cursor samples failed while a server was down: ${s.sampleErrors}`,
      );
    if (s.temporaryFilesLeft > 0) detail.push(`temporary files left by killed local runs: ${s.temporaryFilesLeft}`);
    detail.push(
      `catalog commits synced in all: ${s.commits}; objects read back by samples during runs: ${s.objectsSampled}`,
    );
    if (s.incomplete.length > 0)
      detail.push(
        `INCOMPLETE (clean runs did not reach the head): ${s.incomplete.length}: ${s.incomplete.slice(0, 3).join(' | ')}`,
      );
    if (s.harnessErrors.length > 0)
      detail.push(
        `HARNESS ERRORS: ${s.harnessErrors.length}: ${s.harnessErrors.map((e) => e.split('\n')[0]).join(' | ')}`,
      );
    const errors = Object.entries(s.errors).sort((a, b) => b[1] - a[1]);
    if (errors.length > 0)
      detail.push(
        `run errors by kind:\n${errors
          .slice(0, 8)
          .map(([e, n]) => `      ${String(n).padStart(4)} × ${e}`)
          .join('\n')}`,
      );
    for (const problem of s.problems.slice(0, 20)) detail.push(`PROBLEM ${problem}`);
    out.push(`${s.kind}:\n${detail.map((d) => `    ${d}`).join('\n')}`);
  }
  const problems = all.reduce((n, s) => n + s.problems.length, 0);
  out.push('');
  out.push(`problems found: ${problems}`);
  return out.join('\n');
}

/** The commit and whether lambda/ differs from it: which engine these figures are of. */
function gitState(): { head?: string; lambdaChanged?: boolean } {
  const root = join(here, '..');
  const head = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' });
  if (head.status !== 0) return {};
  const status = spawnSync('git', ['status', '--porcelain', '--', 'lambda'], { cwd: root, encoding: 'utf8' });
  return { head: head.stdout.trim(), lambdaChanged: status.stdout.trim() !== '' };
}

function fmt(record: Record<string, number>): string {
  return Object.entries(record)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`chaos: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(2);
  },
);
