/**
 * What the follower costs on AWS Lambda per million leaves, at each memory setting, from the CPU per leaf that
 * `npm run bench` measured (issue 14): Lambda GB-seconds and requests, S3 PUTs (leaves, manifests, watermark)
 * and DynamoDB writes (checkpoints, run log). And which memory setting makes it cheapest.
 *
 * Arithmetic, not a measurement. Every input is printed with the result; the ones that are assumptions (network
 * round trips on AWS, the share of a vCPU Lambda gives per MB, nuget.org's leaves per commit) say so. Run alone
 * with `tsc -p bench/tsconfig.json && node dist/bench/lambda-cost.js [--cpu-ms-per-leaf N] [--results FILE]`.
 *
 * The model, and why it has a flat bottom:
 * - Lambda gives CPU in proportion to memory, one full vCPU at 1,769 MB. The engine's JavaScript runs on one
 *   thread, so more than one vCPU buys it nothing: `vcpu = min(1, memory / 1769)`.
 * - A run is either CPU-bound (`vcpu * 1000 / cpuMsPerLeaf` leaves/s) or network-bound (`concurrency` leaves in
 *   flight, each one GET and one PUT round trip: `concurrency * 1000 / networkMsPerLeaf`), whichever is lower.
 * - While CPU-bound, GB-seconds per leaf do not depend on memory (twice the memory, half the time), so the cost
 *   is flat from the smallest memory that holds the run's peak RSS up to the knee where the network binds;
 *   above the knee, the run waits on the network for longer than it computes and the cost rises with memory.
 */
import { readFileSync } from 'node:fs';
import { PRICES_US_EAST_1, type Prices } from './backfill-estimate.js';

/** Memory (MB) at which Lambda gives one full vCPU. */
export const ONE_VCPU_MB = 1769;

/** What the cost model starts from. */
export interface LambdaCostInputs {
  /** CPU milliseconds per leaf at one vCPU (measured: the bench's `engine, in-memory cursor` row). */
  readonly cpuMsPerLeaf: number;
  /** Peak RSS of a run, MB (measured: the bench's largest slice). Memory below 1.25 times this is not offered. */
  readonly peakRssMb: number;
  /** Leaves per commit: one manifest PUT per commit (assumption: nuget.org has about 3). */
  readonly leavesPerCommit: number;
  /** Leaves in flight (`CONCURRENCY`, default 32). */
  readonly concurrency: number;
  /** One leaf GET plus its PUT, ms, on AWS (assumption: 50 ms each). */
  readonly networkMsPerLeaf: number;
  /** One conditional DynamoDB write, ms (assumption): checkpoints are coalesced to at most one in flight. */
  readonly checkpointWriteMs: number;
  /**
   * Leaves per run: each run pays its fixed part once. 20,000 (`MAX_LEAVES` before issue 30); a run catching up now
   * takes what its time budget allows (about 86,400 leaves in 270 s at 320 leaves/s), which only lowers that share.
   */
  readonly leavesPerRun: number;
  /** CPU seconds of a run's fixed part at one vCPU: index parse, settings, clients (assumption, warm container). */
  readonly fixedCpuSecondsPerRun: number;
  /** Waiting seconds of a run's fixed part: cursor read, index GET, run-log and watermark writes (assumption). */
  readonly fixedWaitSecondsPerRun: number;
  readonly prices: Prices;
}

/** The cost of a million leaves at one memory setting. */
export interface LambdaCost {
  readonly memoryMb: number;
  readonly vcpu: number;
  readonly leavesPerSecond: number;
  readonly binds: 'CPU' | 'network';
  /** Billed Lambda seconds for a million leaves. */
  readonly seconds: number;
  readonly gbSeconds: number;
  /** USD: Lambda (GB-s and requests), S3 PUTs, DynamoDB writes, and their sum. */
  readonly lambda: number;
  readonly s3: number;
  readonly dynamo: number;
  readonly total: number;
}

const MILLION = 1_000_000;

/** The cost of a million leaves with `memoryMb` of Lambda memory. */
export function lambdaCost(inputs: LambdaCostInputs, memoryMb: number): LambdaCost {
  const vcpu = Math.min(1, memoryMb / ONE_VCPU_MB);
  const cpuRate = (vcpu * 1000) / inputs.cpuMsPerLeaf;
  const networkRate = (inputs.concurrency * 1000) / inputs.networkMsPerLeaf;
  const leavesPerSecond = Math.min(cpuRate, networkRate);
  const runs = MILLION / inputs.leavesPerRun;
  const leafSeconds = MILLION / leavesPerSecond;
  const seconds = leafSeconds + runs * (inputs.fixedCpuSecondsPerRun / vcpu + inputs.fixedWaitSecondsPerRun);
  const gbSeconds = (memoryMb / 1024) * seconds;
  const lambda = gbSeconds * inputs.prices.lambdaGbSecond + (runs / MILLION) * inputs.prices.lambdaRequestPerMillion;
  const commits = MILLION / inputs.leavesPerCommit;
  // Leaves, one manifest per commit, one watermark per run.
  const s3 = ((MILLION + commits + runs) / 1000) * inputs.prices.s3PutPerThousand;
  // Checkpoints: at most one per commit, and at most one per write round trip while the leaves stream; one
  // run-log record and one final cursor write per run. Every item is under 1 KB: one write unit each.
  const checkpoints = Math.min(commits, leafSeconds * (1000 / inputs.checkpointWriteMs));
  const dynamo = ((checkpoints + 2 * runs) / MILLION) * inputs.prices.dynamoWritePerMillion;
  return {
    memoryMb,
    vcpu,
    leavesPerSecond,
    binds: cpuRate <= networkRate ? 'CPU' : 'network',
    seconds,
    gbSeconds,
    lambda,
    s3,
    dynamo,
    total: lambda + s3 + dynamo,
  };
}

/** Memory settings the table shows: every 64 MB Lambda step would be noise, these show the shape. */
export const MEMORY_SETTINGS_MB = [256, 320, 384, 512, 640, 768, 896, 1024, 1280, 1536, 1769, 2048, 3008] as const;

/** The smallest memory (MB, a multiple of 64) that holds the peak RSS with a quarter to spare. */
export function smallestMemoryMb(inputs: LambdaCostInputs): number {
  return Math.max(128, Math.ceil((inputs.peakRssMb * 1.25) / 64) * 64);
}

/** How far above the cheapest Lambda cost a setting may be and still count as cheapest (the fixed part's waiting). */
export const LAMBDA_COST_SLACK = 0.03;

/**
 * The memory setting to deploy. Memory changes only the Lambda part of the cost (S3 and DynamoDB do not depend on
 * it), so: the settings whose Lambda cost is within {@link LAMBDA_COST_SLACK} of the cheapest, and of those the
 * fastest, which is the knee where the network starts to bind (in steps of 64 MB).
 */
export function chosenMemoryMb(inputs: LambdaCostInputs): {
  readonly memoryMb: number;
  readonly cheapestMb: number;
  readonly knee: number;
} {
  const smallest = smallestMemoryMb(inputs);
  const candidates: number[] = [];
  for (let mb = smallest; mb <= 3008; mb += 64) candidates.push(mb);
  const costs = candidates.map((mb) => lambdaCost(inputs, mb));
  const cheapest = costs.reduce((a, b) => (b.lambda < a.lambda ? b : a));
  const near = costs.filter((c) => c.lambda <= cheapest.lambda * (1 + LAMBDA_COST_SLACK));
  const fastest = near.reduce((a, b) =>
    b.leavesPerSecond > a.leavesPerSecond || (b.leavesPerSecond === a.leavesPerSecond && b.memoryMb < a.memoryMb)
      ? b
      : a,
  );
  const knee = (ONE_VCPU_MB * inputs.concurrency * inputs.cpuMsPerLeaf) / inputs.networkMsPerLeaf;
  return { memoryMb: fastest.memoryMb, cheapestMb: cheapest.memoryMb, knee };
}

/** The model as a Markdown table, one row per memory setting (the chosen one marked). */
export function lambdaCostTable(inputs: LambdaCostInputs, memories: readonly number[] = MEMORY_SETTINGS_MB): string {
  const chosen = chosenMemoryMb(inputs).memoryMb;
  const smallest = smallestMemoryMb(inputs);
  const all = [...new Set([...memories.filter((m) => m >= smallest), chosen])].sort((a, b) => a - b);
  const money = (n: number): string => `$${n.toFixed(n < 1 ? 3 : 2)}`;
  return [
    '| memory MB | vCPU | leaves/s | binds | Lambda GB-s | Lambda | S3 PUTs | DynamoDB | total per million leaves |',
    '|---|---|---|---|---|---|---|---|---|',
    ...all.map((mb) => {
      const c = lambdaCost(inputs, mb);
      const mark = mb === chosen ? ' **(chosen)**' : '';
      return (
        `| ${mb}${mark} | ${c.vcpu.toFixed(2)} | ${Math.round(c.leavesPerSecond)} | ${c.binds} | ${Math.round(c.gbSeconds).toLocaleString('en-US')} | ` +
        `${money(c.lambda)} | ${money(c.s3)} | ${money(c.dynamo)} | ${money(c.total)} |`
      );
    }),
  ].join('\n');
}

/** The inputs: measured figures from a bench result, the rest as documented above. */
export function costInputsFrom(measured: {
  readonly cpuMsPerLeaf: number;
  readonly peakRssMb: number;
}): LambdaCostInputs {
  return {
    cpuMsPerLeaf: measured.cpuMsPerLeaf,
    peakRssMb: measured.peakRssMb,
    leavesPerCommit: 3,
    concurrency: 32,
    networkMsPerLeaf: 100,
    checkpointWriteMs: 8,
    leavesPerRun: 20_000,
    fixedCpuSecondsPerRun: 0.3,
    fixedWaitSecondsPerRun: 0.3,
    prices: PRICES_US_EAST_1,
  };
}

/** The measured inputs out of a bench result JSON (`bench/results/latest.json`). */
export function measuredFrom(result: {
  scenarios: ReadonlyArray<{ label: string; kind: string; cpuPerLeafMs?: number; maxRssMB?: number }>;
}): {
  cpuMsPerLeaf: number;
  peakRssMb: number;
} {
  const engine = result.scenarios.find((s) => s.label === 'engine, in-memory cursor');
  if (engine?.cpuPerLeafMs === undefined)
    throw new Error('the result has no "engine, in-memory cursor" row with cpuPerLeafMs');
  const peakRssMb = Math.max(...result.scenarios.filter((s) => s.kind === 'engine').map((s) => s.maxRssMB ?? 0));
  return { cpuMsPerLeaf: engine.cpuPerLeafMs, peakRssMb };
}

/**
 * A month of runs that find nothing new (the schedule's cost when caught up), USD: each run pays its fixed part
 * (a conditional index GET answered 304, the cursor read, one run-log record), and writes no S3 object.
 */
export function idleMonthCost(
  inputs: LambdaCostInputs,
  memoryMb: number,
  scheduleMinutes = 5,
): { readonly runs: number; readonly lambda: number; readonly dynamo: number } {
  const vcpu = Math.min(1, memoryMb / ONE_VCPU_MB);
  const runs = (30 * 24 * 60) / scheduleMinutes;
  const seconds = runs * (inputs.fixedCpuSecondsPerRun / vcpu + inputs.fixedWaitSecondsPerRun);
  const lambda =
    (memoryMb / 1024) * seconds * inputs.prices.lambdaGbSecond +
    (runs / MILLION) * inputs.prices.lambdaRequestPerMillion;
  return { runs, lambda, dynamo: (runs / MILLION) * inputs.prices.dynamoWritePerMillion };
}

/** The inputs, the table and the choice as the text the bench prints. */
export function lambdaCostReport(inputs: LambdaCostInputs): string {
  const choice = chosenMemoryMb(inputs);
  const at = lambdaCost(inputs, choice.memoryMb);
  const idle = idleMonthCost(inputs, choice.memoryMb);
  return [
    `Follower on AWS Lambda, per million leaves (bench/lambda-cost.ts; arm64 us-east-1 prices): ${inputs.cpuMsPerLeaf} ms CPU/leaf and ` +
      `${inputs.peakRssMb.toFixed(0)} MB peak RSS measured; assumed: ${inputs.leavesPerCommit} leaves/commit, ${inputs.concurrency} in flight, ` +
      `${inputs.networkMsPerLeaf} ms GET+PUT per leaf, ${inputs.checkpointWriteMs} ms per checkpoint write, ${inputs.leavesPerRun.toLocaleString('en-US')} leaves/run, ` +
      `${inputs.fixedCpuSecondsPerRun} s CPU + ${inputs.fixedWaitSecondsPerRun} s waiting per run, one vCPU at ${ONE_VCPU_MB} MB`,
    lambdaCostTable(inputs),
    `chosen: ${choice.memoryMb} MB, $${at.total.toFixed(2)} per million leaves ($${at.lambda.toFixed(3)} Lambda, $${at.s3.toFixed(2)} S3, ` +
      `$${at.dynamo.toFixed(3)} DynamoDB) at ${Math.round(at.leavesPerSecond)} leaves/s; the Lambda part is within ` +
      `${LAMBDA_COST_SLACK * 100}% of its lowest from ${smallestMemoryMb(inputs)} MB up to the knee at ${Math.round(choice.knee)} MB, where the ` +
      `network starts to bind; S3 PUTs are ${Math.round((at.s3 / at.total) * 100)}% of the total at any memory`,
    `caught up (a run every 5 minutes finding nothing new): $${(idle.lambda + idle.dynamo).toFixed(2)} a month at ${choice.memoryMb} MB ` +
      `(${idle.runs.toLocaleString('en-US')} runs: Lambda $${idle.lambda.toFixed(3)}, DynamoDB $${idle.dynamo.toFixed(3)})`,
  ].join('\n');
}

function main(argv: readonly string[]): void {
  const flag = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const file = flag('--results') ?? 'bench/results/latest.json';
  const measured = measuredFrom(JSON.parse(readFileSync(file, 'utf8')));
  const cpu = flag('--cpu-ms-per-leaf');
  const inputs = costInputsFrom({ ...measured, ...(cpu === undefined ? {} : { cpuMsPerLeaf: Number(cpu) }) });
  process.stdout.write(`${lambdaCostReport(inputs)}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) main(process.argv.slice(2));
