/**
 * The four kinds of chaos, one iteration each. Every iteration has a fresh generated catalog (a few dozen
 * commits) on a fresh replica, a fresh target (table + bucket, or folder), a sampler reading the cursor all
 * along, full invariant checks whenever no run is in flight, and at the end clean runs that must bring the
 * cursor to the head of the catalog.
 */
import { setTimeout as delay } from 'node:timers/promises';
import {
  appendCommits,
  CatalogReplica,
  generateCatalog,
  type GeneratedCatalog,
  type Prng,
} from '../../testkit/index.js';
import { InvariantChecker, Sampler } from './invariants.js';
import { RandomFaults } from './random-faults.js';
import { runEngine, startCliRun, type CliRunResult, type EngineRunOptions, type EngineRunResult } from './runs.js';
import type { Emulators, Restartable } from './servers.js';
import { absorb, bump, recordRun, type KindStats } from './stats.js';
import { awsTarget, localTarget, type Target } from './targets.js';

export interface ChaosContext {
  emulators: Emulators;
  prng: Prng;
  /** Environment of CLI children (emulator endpoints, fake credentials). */
  env: Record<string, string>;
  /** Where the kinds that alternate stores go: `mixed` (alternate), `aws` or `local` only. */
  store: 'mixed' | 'aws' | 'local';
  /** s3rver with the suite's atomic PUT, or stock (torn reads of objects being overwritten are then tolerated, lost ones are not). */
  s3: S3Mode;
}

/** Which s3rver the suite runs against; see chaos/README.md. */
export type S3Mode = 'atomic' | 'stock';

/** Whether iteration `i` of a kind that alternates stores uses DynamoDB + S3. */
function useAws(ctx: ChaosContext, i: number, awsWhenEven: boolean): boolean {
  if (ctx.store !== 'mixed') return ctx.store === 'aws';
  return (i % 2 === 0) === awsWhenEven;
}

/** What happened in an iteration, kept for the diagnostics of a problem. */
class Journal {
  private readonly started = Date.now();
  private runs = 0;
  readonly lines: string[] = [];
  note(text: string): void {
    this.lines.push(`${String(Date.now() - this.started).padStart(6)} ms  ${text}`);
  }
  /** Numbers a run and notes its start; returns its number. */
  start(what: string): number {
    const n = ++this.runs;
    this.note(`run ${n} start: ${what}`);
    return n;
  }
}

let journal = new Journal();

type Runner = 'engine' | 'cli';

export const KINDS = ['overlap', 'kill', 'faults', 'restart'] as const;
export type Kind = (typeof KINDS)[number];

export const ITERATIONS: Record<Kind, (ctx: ChaosContext, stats: KindStats, i: number) => Promise<void>> = {
  overlap: overlapIteration,
  kill: killIteration,
  faults: faultsIteration,
  restart: restartIteration,
};

/** A catalog of `commits` commits with the real catalog's traps dialled in, from the iteration's PRNG. */
function chaosCatalog(prng: Prng, commits: number): GeneratedCatalog {
  return generateCatalog({
    commits,
    seed: prng.int(1, 2 ** 31 - 1),
    leavesPerCommit: [1, 4],
    sameMillisecondPairs: prng.int(0, 3),
    trimTrailingZeros: prng.chance(0.5),
    semver2Ratio: 0.2,
    nonNormalizedDeleteRatio: 0.3,
  });
}

function replicaFor(prng: Prng, catalog: GeneratedCatalog, latencyMs: number): Promise<CatalogReplica> {
  return CatalogReplica.start({ catalog, pageSize: prng.int(4, 12), splitCommits: prng.chance(0.25), latencyMs });
}

const randomPrefix = (prng: Prng): string => (prng.chance(0.5) ? '' : 'mirror/');

function lastLine(text: string): string {
  return text.trim().split('\n').filter(Boolean).at(-1) ?? '';
}

/** The common frame of an iteration: replica, target, checker, sampler; torn down whatever happens. */
async function frame(
  ctx: ChaosContext,
  stats: KindStats,
  options: { label: string; target: () => Promise<Target> | Target; runner: Runner; commits: number; latencyMs: number; sampleEveryMs?: number; sampleObjects?: boolean },
  body: (f: { target: Target; catalog: GeneratedCatalog; replica: CatalogReplica; checker: InvariantChecker; sampler: Sampler }) => Promise<void>,
): Promise<void> {
  const catalog = chaosCatalog(ctx.prng, options.commits);
  const replica = await replicaFor(ctx.prng, catalog, options.latencyMs);
  journal = new Journal();
  let target: Target | undefined;
  let checker: InvariantChecker | undefined;
  let sampler: Sampler | undefined;
  try {
    target = await options.target();
    bump(stats.stores, target.kind);
    bump(stats.runners, options.runner);
    checker = new InvariantChecker(target, catalog, replica.origin, `${options.label} [${target.kind}, ${options.runner}]`, {
      tornReadsTolerated: ctx.s3 === 'stock' && target.kind === 'aws',
      sampleObjects: options.sampleObjects ?? true,
    });
    sampler = new Sampler(checker, options.sampleEveryMs ?? 100);
    await body({ target, catalog, replica, checker, sampler });
    await sampler.stop();
    await complete(ctx, stats, target, replica, checker, options.runner, catalog);
    stats.temporaryFilesLeft += await target.temporaryFiles();
    stats.commits += catalog.commits.length;
  } finally {
    await sampler?.stop();
    if (checker) {
      if (checker.problems.length > 0) stats.diagnostics.push(diagnose(options.label, catalog, replica, checker.problems, target));
      absorb(stats, checker);
    }
    await replica.stop();
    target?.close();
  }
}

/** The iteration's story, for a problem: the runs, the catalog, and how its pages cut it. */
function diagnose(label: string, catalog: GeneratedCatalog, replica: CatalogReplica, problems: string[], target: Target | undefined): Record<string, unknown> {
  const indexOf = new Map(catalog.commits.map((c, i) => [c.commitId, i]));
  const pages = replica.pagePaths().map((path) => {
    const page = JSON.parse(replica.documentAt(path)) as { commitTimeStamp: string; items: { commitId: string }[] };
    const counts = new Map<number, number>();
    for (const item of page.items) counts.set(indexOf.get(item.commitId) ?? -1, (counts.get(indexOf.get(item.commitId) ?? -1) ?? 0) + 1);
    return `${path} (${page.commitTimeStamp}): ${[...counts].map(([i, n]) => `#${i}×${n}`).join(' ')}`;
  });
  return {
    label,
    target: target ? `${target.kind} ${target.cliArgs().join(' ')}` : undefined,
    problems,
    runs: journal.lines,
    commits: catalog.commits.map((c, i) => `#${i} ${c.timestamp} ${c.commitId} ${c.leaves.map((l) => `${l.type === 'PackageDelete' ? 'DEL ' : ''}${l.id}/${l.version}`).join(', ')}`),
    pages,
  };
}

/** One in-process engine run, journaled and counted. */
async function engineRun(stats: KindStats, target: Target, replica: CatalogReplica, options: EngineRunOptions): Promise<EngineRunResult> {
  const n = journal.start(`engine max-commits ${options.maxCommits} concurrency ${options.concurrency}`);
  const result = await runEngine(target, replica.serviceIndexUrl, options);
  recordRun(stats, result.outcome, result.error);
  journal.note(`run ${n} end: ${result.outcome} cursor ${result.cursorAfter ?? '-'}${result.error ? ` error: ${result.error}` : ''}`);
  return result;
}

/** One CLI run (a child process), journaled and counted; SIGKILLed after `killAfterMs` if given. */
async function cliRun(ctx: ChaosContext, stats: KindStats, target: Target, replica: CatalogReplica, args: string[], killAfterMs?: number): Promise<CliRunResult> {
  const n = journal.start(`CLI ${args.join(' ')}${killAfterMs === undefined ? '' : `, SIGKILL at ${killAfterMs} ms`}`);
  const result = await startCliRun(target, replica.serviceIndexUrl, args, ctx.env, killAfterMs === undefined ? {} : { killAfterMs }).done;
  const error = result.outcome === 'error' ? lastLine(result.stderr) : undefined;
  recordRun(stats, result.outcome, error);
  if (result.killed) stats.kills++;
  const summaries = result.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      try {
        const s = JSON.parse(line) as { stoppedBy: string; cursorBefore: string; cursorAfter: string; commits: number };
        return `${s.stoppedBy} ${s.cursorBefore}->${s.cursorAfter} (${s.commits} commits)`;
      } catch {
        return line.slice(0, 200);
      }
    });
  journal.note(`run ${n} end: ${result.outcome}${summaries.length ? ` [${summaries.join(' | ')}]` : ''}${error ? ` error: ${error}` : ''}`);
  return result;
}

/** Clean runs until the cursor is at the head of the catalog (a few tries: a run may still lose a race). */
async function complete(
  ctx: ChaosContext,
  stats: KindStats,
  target: Target,
  replica: CatalogReplica,
  checker: InvariantChecker,
  runner: Runner,
  catalog: GeneratedCatalog,
): Promise<void> {
  let last = '';
  for (let attempt = 1; attempt <= 4; attempt++) {
    if (runner === 'engine') {
      const result = await engineRun(stats, target, replica, { maxCommits: 100_000, concurrency: 8 });
      last = result.error ?? result.outcome;
    } else {
      const result = await cliRun(ctx, stats, target, replica, ['--max-commits', '100000', '--concurrency', '8']);
      last = result.outcome === 'error' ? lastLine(result.stderr) : result.outcome;
    }
    await checker.check(`clean run ${attempt}`, { full: true });
    if (checker.atHead) return;
  }
  stats.incomplete.push(`${checker.cursorIndex + 1}/${catalog.commits.length} commits stored after 4 clean runs; last: ${last}`);
}

/** 8 runs at once against one cursor, round after round, while the catalog grows. */
async function overlapIteration(ctx: ChaosContext, stats: KindStats, i: number): Promise<void> {
  const { prng } = ctx;
  // 8 engines in this process on DynamoDB + S3 (8 Lambdas), or 8 CLI processes on one folder; alternately.
  const aws = useAws(ctx, i, true);
  const runner: Runner = aws ? 'engine' : 'cli';
  const prefix = randomPrefix(prng);
  await frame(
    ctx,
    stats,
    { label: `overlap #${i + 1}`, runner, commits: 24, latencyMs: prng.int(1, 4), target: () => (aws ? awsTarget(ctx.emulators, prefix) : localTarget(prefix)) },
    async ({ target, catalog, replica, checker }) => {
      let grown = 0;
      for (let round = 1; round <= 3; round++) {
        let growth: Promise<void> | undefined;
        if (grown < 3 && prng.chance(0.4)) {
          grown++;
          const count = prng.int(1, 4);
          const seed = prng.int(1, 1e9);
          growth = delay(prng.int(0, runner === 'cli' ? 800 : 300)).then(() => {
            appendCommits(catalog, count, seed);
            journal.note(`catalog grew by ${count} commit(s) to ${catalog.commits.length}`);
          });
        }
        const runs = Array.from({ length: 8 }, async () => {
          const maxCommits = prng.int(2, 15);
          const concurrency = prng.pick([1, 2, 4, 8, 16]);
          if (runner === 'engine') await engineRun(stats, target, replica, { maxCommits, concurrency });
          else await cliRun(ctx, stats, target, replica, ['--max-commits', String(maxCommits), '--concurrency', String(concurrency)]);
        });
        await Promise.all(runs);
        await growth;
        await checker.check(`after round ${round}`);
        if (checker.atHead && growth === undefined && round >= 2) break;
      }
    },
  );
}

/** CLI runs SIGKILLed at random moments, one or two at a time, on a folder or on DynamoDB + S3. */
async function killIteration(ctx: ChaosContext, stats: KindStats, i: number): Promise<void> {
  const { prng } = ctx;
  const aws = useAws(ctx, i, false);
  const prefix = randomPrefix(prng);
  await frame(
    ctx,
    stats,
    { label: `kill #${i + 1}`, runner: 'cli', commits: 30, latencyMs: prng.int(4, 10), target: () => (aws ? awsTarget(ctx.emulators, prefix) : localTarget(prefix)) },
    async ({ target, replica, checker }) => {
      const episodes = prng.int(2, 3);
      for (let episode = 1; episode <= episodes; episode++) {
        const together = prng.chance(0.3) ? 2 : 1;
        const runs = Array.from({ length: together }, () => {
          const args = prng.chance(0.3) ? ['--follow', '--poll-interval', '0.2'] : ['--max-commits', String(prng.int(5, 40))];
          args.push('--concurrency', String(prng.pick([1, 2, 4, 8])));
          // From spawn: so some land in start-up, most mid-run (the AWS SDK takes longer to load).
          return cliRun(ctx, stats, target, replica, args, prng.int(30, aws ? 3_000 : 2_000));
        });
        await Promise.all(runs);
        await checker.check(`after kill episode ${episode}`);
      }
    },
  );
}

/** 30% of catalog paths failing up to 3 times each (5xx, 429 + Retry-After, resets, truncated and stalled bodies). */
async function faultsIteration(ctx: ChaosContext, stats: KindStats, i: number): Promise<void> {
  const { prng } = ctx;
  const aws = useAws(ctx, i, true);
  const prefix = randomPrefix(prng);
  let faults: RandomFaults | undefined;
  let retries = 0;
  try {
    await frame(
      ctx,
      stats,
      { label: `faults #${i + 1}`, runner: 'engine', commits: 24, latencyMs: prng.int(0, 2), target: () => (aws ? awsTarget(ctx.emulators, prefix) : localTarget(prefix)) },
      async ({ target, replica, checker }) => {
        faults = new RandomFaults(replica, { prng, rate: 0.3, maxPerPath: 3, retryAfterSeconds: 1 });
        for (let round = 1; round <= 10; round++) {
          // Two runs at once, so faults also land while another run holds the cursor.
          await Promise.all(
            Array.from({ length: 2 }, () =>
              engineRun(stats, target, replica, { maxCommits: prng.int(5, 30), concurrency: prng.pick([2, 4, 8]), onRetry: () => retries++ }),
            ),
          );
          await checker.check(`after round ${round}`);
          if (checker.atHead) break;
        }
      },
    );
  } finally {
    if (faults) for (const [kind, count] of Object.entries(faults.served)) bump(stats.faults, kind, count);
    stats.retries += retries;
  }
}

/** The S3 server and the DynamoDB server stopped and started again while runs go on. */
async function restartIteration(ctx: ChaosContext, stats: KindStats, i: number): Promise<void> {
  const { prng, emulators } = ctx;
  // Even iterations: two engines in this process (Lambda-style clients); odd: the CLI as a child process.
  const runner: Runner = i % 2 === 0 ? 'engine' : 'cli';
  const prefix = randomPrefix(prng);
  await frame(
    ctx,
    stats,
    {
      label: `restart #${i + 1}`,
      runner,
      commits: 40,
      latencyMs: prng.int(15, 30),
      sampleEveryMs: 150,
      // A read cut by a server stopped on purpose is not a torn object.
      sampleObjects: false,
      target: () => awsTarget(emulators, prefix),
    },
    async ({ target, replica, checker }) => {
      let inFlight = 0;
      let disrupting = true;
      const keepRunning = async (): Promise<void> => {
        // Like a schedule: a run that fails is followed by another, until the servers are back.
        while (disrupting) {
          const concurrency = prng.pick([2, 4]);
          inFlight++;
          try {
            if (runner === 'engine') await engineRun(stats, target, replica, { maxCommits: 100_000, concurrency });
            else await cliRun(ctx, stats, target, replica, ['--max-commits', '100000', '--concurrency', String(concurrency)]);
          } finally {
            inFlight--;
          }
          await delay(100);
        }
      };
      const bounce = async (server: Restartable, startAfterMs: number, downMs: number, count: () => void): Promise<void> => {
        await delay(startAfterMs);
        if (inFlight > 0) stats.stopsMidRun++;
        journal.note(`${server.name} stopping (${inFlight} run(s) in flight)`);
        await server.stop(1_000);
        count();
        journal.note(`${server.name} stopped; down for ${downMs} ms plus its start-up`);
        await delay(downMs);
        await server.start();
        journal.note(`${server.name} answering again`);
      };
      const runners = Array.from({ length: runner === 'engine' ? 2 : 1 }, keepRunning);
      try {
        await Promise.all([
          bounce(emulators.s3, prng.int(50, runner === 'cli' ? 2_000 : 1_200), prng.int(100, 1_500), () => stats.s3Restarts++),
          // DynamoDB Local's own start-up (a JVM) is a downtime of seconds already.
          bounce(emulators.dynamo, prng.int(50, runner === 'cli' ? 2_000 : 1_200), prng.int(0, 300), () => stats.dynamoRestarts++),
        ]);
      } finally {
        disrupting = false;
        await Promise.all(runners);
      }
      await checker.check('after the restarts');
    },
  );
}

/** Re-exported for the soak and the README. */
export { chaosCatalog };
