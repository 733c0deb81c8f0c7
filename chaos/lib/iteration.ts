/**
 * The frame every chaos iteration runs in (kinds.ts has the four kinds): a fresh generated catalog on a fresh
 * replica, a fresh target, the invariant checker and its sampler, the clean runs that must bring the cursor to the
 * head at the end, and the journal of the runs that tells a problem's story.
 */
import { CatalogReplica, generateCatalog, type GeneratedCatalog, type Prng } from '../../testkit/index.js';
import { InvariantChecker, Sampler } from './invariants.js';
import { runEngine, startCliRun, type CliRunResult, type EngineRunOptions, type EngineRunResult } from './runs.js';
import type { Emulators } from './servers.js';
import { absorb, bump, recordRun, type KindStats } from './stats.js';
import type { Target } from './targets.js';

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
export function useAws(ctx: ChaosContext, i: number, awsWhenEven: boolean): boolean {
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

/** Notes `text` in the current iteration's journal (its story, told when it finds a problem). */
export function note(text: string): void {
  journal.note(text);
}

/** What runs the follower in an iteration: the engine in process, or the CLI as a child process. */
export type Runner = 'engine' | 'cli';

/** A catalog of `commits` commits with the real catalog's traps dialled in, from the iteration's PRNG. */
export function chaosCatalog(prng: Prng, commits: number): GeneratedCatalog {
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

export const randomPrefix = (prng: Prng): string => (prng.chance(0.5) ? '' : 'mirror/');

function lastLine(text: string): string {
  return text.trim().split('\n').filter(Boolean).at(-1) ?? '';
}

/** The common frame of an iteration: replica, target, checker, sampler; torn down whatever happens. */
export async function frame(
  ctx: ChaosContext,
  stats: KindStats,
  options: {
    label: string;
    target: () => Promise<Target> | Target;
    runner: Runner;
    commits: number;
    latencyMs: number;
    sampleEveryMs?: number;
    sampleObjects?: boolean;
  },
  body: (f: {
    target: Target;
    catalog: GeneratedCatalog;
    replica: CatalogReplica;
    checker: InvariantChecker;
    sampler: Sampler;
  }) => Promise<void>,
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
    checker = new InvariantChecker(
      target,
      catalog,
      replica.origin,
      `${options.label} [${target.kind}, ${options.runner}]`,
      {
        tornReadsTolerated: ctx.s3 === 'stock' && target.kind === 'aws',
        sampleObjects: options.sampleObjects ?? true,
      },
    );
    sampler = new Sampler(checker, options.sampleEveryMs ?? 100);
    await body({ target, catalog, replica, checker, sampler });
    await sampler.stop();
    await complete(ctx, stats, target, replica, checker, options.runner, catalog);
    stats.temporaryFilesLeft += await target.temporaryFiles();
    stats.commits += catalog.commits.length;
  } finally {
    await sampler?.stop();
    if (checker) {
      if (checker.problems.length > 0)
        stats.diagnostics.push(diagnose(options.label, catalog, replica, checker.problems, target));
      absorb(stats, checker);
    }
    await replica.stop();
    target?.close();
  }
}

/** The iteration's story, for a problem: the runs, the catalog, and how its pages cut it. */
function diagnose(
  label: string,
  catalog: GeneratedCatalog,
  replica: CatalogReplica,
  problems: string[],
  target: Target | undefined,
): Record<string, unknown> {
  const indexOf = new Map(catalog.commits.map((c, i) => [c.commitId, i]));
  const pages = replica.pagePaths().map((path) => {
    const page = JSON.parse(replica.documentAt(path)) as { commitTimeStamp: string; items: { commitId: string }[] };
    const counts = new Map<number, number>();
    for (const item of page.items)
      counts.set(indexOf.get(item.commitId) ?? -1, (counts.get(indexOf.get(item.commitId) ?? -1) ?? 0) + 1);
    return `${path} (${page.commitTimeStamp}): ${[...counts].map(([i, n]) => `#${i}×${n}`).join(' ')}`;
  });
  return {
    label,
    target: target ? `${target.kind} ${target.cliArgs().join(' ')}` : undefined,
    problems,
    runs: journal.lines,
    commits: catalog.commits.map(
      (c, i) =>
        `#${i} ${c.timestamp} ${c.commitId} ${c.leaves.map((l) => `${l.type === 'PackageDelete' ? 'DEL ' : ''}${l.id}/${l.version}`).join(', ')}`,
    ),
    pages,
  };
}

/** One in-process engine run, journaled and counted. */
export async function engineRun(
  stats: KindStats,
  target: Target,
  replica: CatalogReplica,
  options: EngineRunOptions,
): Promise<EngineRunResult> {
  const n = journal.start(`engine max-commits ${options.maxCommits} concurrency ${options.concurrency}`);
  const result = await runEngine(target, replica.serviceIndexUrl, options);
  recordRun(stats, result.outcome, result.error);
  journal.note(
    `run ${n} end: ${result.outcome} cursor ${result.cursorAfter ?? '-'}${result.error ? ` error: ${result.error}` : ''}`,
  );
  return result;
}

/** One CLI run (a child process), journaled and counted; SIGKILLed after `killAfterMs` if given. */
export async function cliRun(
  ctx: ChaosContext,
  stats: KindStats,
  target: Target,
  replica: CatalogReplica,
  args: string[],
  killAfterMs?: number,
): Promise<CliRunResult> {
  const n = journal.start(`CLI ${args.join(' ')}${killAfterMs === undefined ? '' : `, SIGKILL at ${killAfterMs} ms`}`);
  const result = await startCliRun(
    target,
    replica.serviceIndexUrl,
    args,
    ctx.env,
    killAfterMs === undefined ? {} : { killAfterMs },
  ).done;
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
  journal.note(
    `run ${n} end: ${result.outcome}${summaries.length ? ` [${summaries.join(' | ')}]` : ''}${error ? ` error: ${error}` : ''}`,
  );
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
  stats.incomplete.push(
    `${checker.cursorIndex + 1}/${catalog.commits.length} commits stored after 4 clean runs; last: ${last}`,
  );
}
