/**
 * How long the follower on AWS Lambda takes to catch up after an outage (of the source, S3 or the account) of 1 hour,
 * 1 day and 1 week of nuget.org's publishing, and what that costs (issue 30, item 8): with the limits a run had
 * before (`MAX_COMMITS` 5,000, `MAX_LEAVES` 20,000 a run, which bound a run at nuget.org's 3 leaves a commit to
 * 15,000 leaves, about 50 leaves/s over a 5-minute schedule) and with today's, where the time budget bounds a run.
 *
 * Arithmetic over measured figures, like lambda-cost.ts: the Lambda's leaves/s and the cost per million leaves come
 * from the cost model at the deployed memory, itself fed by the bench's CPU per leaf; the engine's own rate on the
 * bench's nuget.org shape is printed beside it. The publishing rate is an assumption, printed with the result. Run
 * alone with `tsc -p bench/tsconfig.json && node dist/bench/catch-up.js [--results FILE] [--leaves-per-day N]`.
 *
 * The model: the outage leaves `rate × outage` leaves behind. From the first scheduled run after it, each run takes
 * up to its capacity (its time budget at the Lambda's rate, and its limits), while publishing goes on at `rate`; the
 * catch-up time runs from the start of that first run to the end of the run that reaches the head.
 */
import { readFileSync } from 'node:fs';
import { DEFAULT_MAX_COMMITS, DEFAULT_MAX_LEAVES } from '../lambda/contract/index.js';
import { costInputsFrom, lambdaCost, measuredFrom } from './lambda-cost.js';

/** The function's memory as the construct deploys it (`DEFAULT_MEMORY_MB` of infra/defaults.ts, which loads the CDK). */
const DEPLOYED_MEMORY_MB = 512;

/** A run's limits. */
export interface RunLimits {
  readonly maxCommits: number;
  readonly maxLeaves: number;
}

/** The limits every run had before issue 30. */
export const LIMITS_BEFORE: RunLimits = { maxCommits: 5_000, maxLeaves: 20_000 };
/** Today's defaults (lambda/contract/settings.ts). */
export const LIMITS_NOW: RunLimits = { maxCommits: DEFAULT_MAX_COMMITS, maxLeaves: DEFAULT_MAX_LEAVES };

/** What the estimate starts from. */
export interface CatchUpInputs {
  /** nuget.org's publishing, leaves a day (assumption: see {@link DEFAULT_LEAVES_PER_DAY}). */
  readonly leavesPerDay: number;
  /** Leaves a commit on nuget.org (assumption, as lambda-cost.ts). */
  readonly leavesPerCommit: number;
  /** The follower's leaves/s on Lambda at its memory (the cost model, from the bench's CPU per leaf). */
  readonly lambdaLeavesPerSecond: number;
  /** USD a million leaves at that memory (the cost model: Lambda, S3 PUTs, DynamoDB). */
  readonly dollarsPerMillionLeaves: number;
  /** The function's timeout and the margin the handler keeps back from it, and the schedule, seconds. */
  readonly timeoutSeconds: number;
  readonly marginSeconds: number;
  readonly scheduleSeconds: number;
}

/**
 * nuget.org's publishing rate taken here: 10,000 leaves a day. The catalog holds about 12 million leaves since
 * 2015-02-01 (docs/backfill.md), about 2,800 a day over its life, the 2018-19 re-signing of every package included;
 * 10,000 is over three times that, so the times below are upper bounds for the recent rate.
 */
export const DEFAULT_LEAVES_PER_DAY = 10_000;

/** One outage's catch-up with one set of limits. */
export interface CatchUp {
  /** Leaves behind when the first run after the outage starts. */
  readonly behind: number;
  /** Leaves a run takes at most. */
  readonly perRun: number;
  /** Runs until the head is reached. */
  readonly runs: number;
  /** From the start of the first run to the end of the last, seconds. */
  readonly seconds: number;
  /** Leaves stored meanwhile (the backlog and what was published during the catch-up). */
  readonly leaves: number;
  /** USD of those leaves. */
  readonly dollars: number;
}

/** Leaves one run takes at most: its time budget at the Lambda's rate, and its limits. */
export function perRun(inputs: CatchUpInputs, limits: RunLimits): number {
  const budget = (inputs.timeoutSeconds - inputs.marginSeconds) * inputs.lambdaLeavesPerSecond;
  return Math.min(budget, limits.maxLeaves, limits.maxCommits * inputs.leavesPerCommit);
}

/** The catch-up after `outageSeconds` of no runs. */
export function catchUp(inputs: CatchUpInputs, limits: RunLimits, outageSeconds: number): CatchUp {
  const rate = inputs.leavesPerDay / 86_400;
  const capacity = perRun(inputs, limits);
  const behind = rate * outageSeconds;
  let backlog = behind;
  let leaves = 0;
  for (let runs = 1; runs <= 1_000_000; runs++) {
    const taken = Math.min(backlog, capacity);
    leaves += taken;
    if (backlog <= capacity) {
      const seconds = (runs - 1) * inputs.scheduleSeconds + taken / inputs.lambdaLeavesPerSecond;
      return {
        behind,
        perRun: capacity,
        runs,
        seconds,
        leaves,
        dollars: (leaves / 1_000_000) * inputs.dollarsPerMillionLeaves,
      };
    }
    backlog += rate * inputs.scheduleSeconds - taken;
  }
  throw new Error(`publishing at ${inputs.leavesPerDay} leaves a day outruns ${capacity} leaves a run`);
}

/** Outages the table shows. */
export const OUTAGES: readonly { readonly label: string; readonly seconds: number }[] = [
  { label: '1 hour', seconds: 3_600 },
  { label: '1 day', seconds: 86_400 },
  { label: '1 week', seconds: 7 * 86_400 },
  { label: '30 days', seconds: 30 * 86_400 },
];

/** `4.2 min`, `38 s`, `2.1 h`. */
function duration(seconds: number): string {
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  if (seconds < 3_600) return `${(seconds / 60).toFixed(1)} min`;
  return `${(seconds / 3_600).toFixed(1)} h`;
}

/** The estimate as a Markdown table, with the inputs it used. */
export function catchUpReport(inputs: CatchUpInputs, engineLeavesPerSecond: number | undefined): string {
  const n = (value: number): string => Math.round(value).toLocaleString('en-US');
  const rows = OUTAGES.map(({ label, seconds }) => {
    const before = catchUp(inputs, LIMITS_BEFORE, seconds);
    const now = catchUp(inputs, LIMITS_NOW, seconds);
    return `| ${label} | ${n(now.behind)} | ${before.runs}, ${duration(before.seconds)} | ${now.runs}, ${duration(now.seconds)} | $${now.dollars.toFixed(now.dollars < 1 ? 3 : 2)} |`;
  });
  return [
    `Catch-up after an outage on AWS Lambda (bench/catch-up.ts): ${n(inputs.leavesPerDay)} leaves a day published (assumed), ` +
      `${inputs.leavesPerCommit} leaves a commit, ${n(inputs.lambdaLeavesPerSecond)} leaves/s on Lambda (cost model at ${DEPLOYED_MEMORY_MB} MB` +
      `${engineLeavesPerSecond === undefined ? '' : `; the engine made ${n(engineLeavesPerSecond)} leaves/s on the bench's nuget.org shape`}), ` +
      `runs of ${inputs.timeoutSeconds} s less a ${inputs.marginSeconds} s margin every ${inputs.scheduleSeconds / 60} minutes, ` +
      `$${inputs.dollarsPerMillionLeaves.toFixed(2)} a million leaves. A run takes at most ${n(perRun(inputs, LIMITS_BEFORE))} leaves with the ` +
      `limits before (${n(LIMITS_BEFORE.maxCommits)} commits, ${n(LIMITS_BEFORE.maxLeaves)} leaves), ${n(perRun(inputs, LIMITS_NOW))} now (its time budget).`,
    '| outage | leaves behind | runs and time, limits before | runs and time, now | cost |',
    '|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

/**
 * The inputs from a bench result: the cost model's rate and price at the deployed memory, fed with the CPU per leaf
 * of the nuget.org-shaped engine row when the result has one (else the main engine row's).
 */
export function catchUpInputsFrom(
  result: Parameters<typeof measuredFrom>[0] & Parameters<typeof nugetEngine>[0],
  leavesPerDay = DEFAULT_LEAVES_PER_DAY,
): CatchUpInputs {
  const nuget = nugetEngine(result)?.cpuPerLeafMs;
  const cost = costInputsFrom({ ...measuredFrom(result), ...(nuget === undefined ? {} : { cpuMsPerLeaf: nuget }) });
  const at = lambdaCost(cost, DEPLOYED_MEMORY_MB);
  return {
    leavesPerDay,
    leavesPerCommit: cost.leavesPerCommit,
    lambdaLeavesPerSecond: at.leavesPerSecond,
    dollarsPerMillionLeaves: at.total,
    timeoutSeconds: 300,
    marginSeconds: 30,
    scheduleSeconds: 300,
  };
}

/** The bench's nuget.org-shaped engine row, when the result has one. */
export function nugetEngine(result: {
  scenarios: ReadonlyArray<{ label: string; leavesPerSec?: number; cpuPerLeafMs?: number }>;
}): { leavesPerSec?: number; cpuPerLeafMs?: number } | undefined {
  return result.scenarios.find((s) => s.label === 'nuget: engine');
}

function main(argv: readonly string[]): void {
  const flag = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const result = JSON.parse(readFileSync(flag('--results') ?? 'bench/results/latest.json', 'utf8'));
  const perDay = flag('--leaves-per-day');
  process.stdout.write(
    `${catchUpReport(catchUpInputsFrom(result, perDay === undefined ? DEFAULT_LEAVES_PER_DAY : Number(perDay)), nugetEngine(result)?.leavesPerSec)}\n`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) main(process.argv.slice(2));
