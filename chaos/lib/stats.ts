/** What one kind of chaos survived, summed over its iterations. */
import type { InvariantChecker } from './invariants.js';

export interface KindStats {
  kind: string;
  iterations: number;
  /** Iterations by store: `aws` (DynamoDB Local + s3rver) or `local` (the folder of the embedded default). */
  stores: Record<string, number>;
  /** Iterations by how runs were made: `engine` (in this process) or `cli` (the built CLI, child processes). */
  runners: Record<string, number>;
  runs: number;
  /** Runs by outcome: `stoppedBy`, `error`, `killed`, `hung`. */
  outcomes: Record<string, number>;
  kills: number;
  /** Faults served by the replica, by kind. */
  faults: Record<string, number>;
  /** HTTP retries the in-process runs made (a fault may cost more than one when it hits a retry). */
  retries: number;
  s3Restarts: number;
  dynamoRestarts: number;
  /** Server stops that found at least one run in flight. */
  stopsMidRun: number;
  /** Commits the catalogs had in all (after growth). */
  commits: number;
  leavesChecked: number;
  checks: number;
  samples: number;
  sampleErrors: number;
  /** Objects read back byte for byte by samples while runs went on. */
  objectsSampled: number;
  /** Torn reads of objects being overwritten, whole once no run was in flight (stock s3rver only). */
  tornReads: number;
  /** Objects torn and still torn once no run was in flight (also among the problems). */
  lost: number;
  /** Temporary files found left behind by killed local runs (not a violation: see README). */
  temporaryFilesLeft: number;
  /** Iterations whose clean runs at the end did not reach the head of the catalog, with the last error. */
  incomplete: string[];
  problems: string[];
  /** Errors of the chaos harness itself (not of catalog-sync), if any. */
  harnessErrors: string[];
  /** For each iteration with a problem: its runs, its catalog and its pages. */
  diagnostics: Record<string, unknown>[];
  /** Run errors by message shape, for the record. */
  errors: Record<string, number>;
  durationMs: number;
}

export function newStats(kind: string): KindStats {
  return {
    kind,
    iterations: 0,
    stores: {},
    runners: {},
    runs: 0,
    outcomes: {},
    kills: 0,
    faults: {},
    retries: 0,
    s3Restarts: 0,
    dynamoRestarts: 0,
    stopsMidRun: 0,
    commits: 0,
    leavesChecked: 0,
    checks: 0,
    samples: 0,
    sampleErrors: 0,
    objectsSampled: 0,
    tornReads: 0,
    lost: 0,
    temporaryFilesLeft: 0,
    incomplete: [],
    problems: [],
    harnessErrors: [],
    errors: {},
    diagnostics: [],
    durationMs: 0,
  };
}

export function bump(record: Record<string, number>, key: string, by = 1): void {
  record[key] = (record[key] ?? 0) + by;
}

/** Records a run's outcome (and its error message, with ports, ids and numbers blurred so alike errors group). */
export function recordRun(stats: KindStats, outcome: string, error?: string): void {
  stats.runs++;
  bump(stats.outcomes, outcome);
  if (error) {
    const shape = error
      .split('\n')[0]!
      .replace(/https?:\/\/127\.0\.0\.1:\d+\S*/g, 'URL')
      .replace(/\b[0-9a-f-]{8,}\b/gi, 'ID')
      .replace(/\d+/g, 'N')
      .slice(0, 160);
    bump(stats.errors, shape);
  }
}

export function absorb(stats: KindStats, checker: InvariantChecker): void {
  stats.problems.push(...checker.problems);
  stats.leavesChecked += checker.leavesChecked;
  stats.checks += checker.checks;
  stats.samples += checker.samples;
  stats.sampleErrors += checker.sampleErrors;
  stats.objectsSampled += checker.objectsSampled;
  stats.tornReads += checker.tornReads;
  stats.lost += checker.lost;
}

export function faultsTotal(stats: KindStats): number {
  return Object.values(stats.faults).reduce((a, b) => a + b, 0);
}
