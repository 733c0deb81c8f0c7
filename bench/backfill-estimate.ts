/**
 * A full nuget.org backfill on paper: wall time and cost of the AWS backfill (Step Functions Distributed Map over
 * range workers) from per-worker figures measured by `npm run bench`, and which limit binds first.
 *
 * It is arithmetic, not a measurement: every input is printed with the result, and the inputs that are
 * assumptions (catalog size, commits, prices, S3's partition rate) say so. Run it alone with
 * `tsc -p bench/tsconfig.json && node dist/bench/backfill-estimate.js [--worker-leaves-per-s N] ...`.
 */

/** What the estimate starts from. */
export interface EstimateInputs {
  /** Leaves in the catalog (nuget.org: about 12 million, an estimate from page numbers over time). */
  readonly leaves: number;
  /** Commits in the catalog: one manifest PUT each (assumption: see `docs/backfill.md`). */
  readonly commits: number;
  /** Pages of the catalog index (nuget.org: about 23,000). */
  readonly pages: number;
  /** Target leaves per range (the planner's `--range-leaves`). */
  readonly rangeLeaves: number;
  /** Ranges per worker invocation (the Distributed Map's `MaxItemsPerBatch`). */
  readonly rangesPerBatch: number;
  /** Leaves a second one worker makes with a full vCPU at the given network latency (measured or derived). */
  readonly workerLeavesPerSecond: number;
  /** Lambda memory of a worker, MB (1,769 MB is one vCPU). */
  readonly workerMemoryMb: number;
  /**
   * Milliseconds of one S3 PUT from the worker. With manifests written in commit order within a range, a worker
   * completes at most one commit per PUT; `undefined` when manifests of a range do not wait for each other.
   */
  readonly orderedManifestPutMs: number | undefined;
  /** Leaf requests in flight per worker (`CONCURRENCY`). */
  readonly leafConcurrency: number;
  /** S3 PUTs a second the bucket takes before answering 503 SlowDown (one partition: 3,500). */
  readonly s3PutsPerSecond: number;
  /** Lambda functions running at once the account allows (1,000 per region by default). */
  readonly lambdaConcurrency: number;
  /** State transitions of one batch in its child workflow (worker task, choice, end). */
  readonly transitionsPerBatch: number;
  /** Seconds of overhead outside the map: planning (one index read), map start, finish. */
  readonly fixedSeconds: number;
  /** Prices in USD (us-east-1, arm64, on-demand; as published in November 2026). */
  readonly prices: Prices;
}

/** Unit prices, USD. */
export interface Prices {
  readonly lambdaGbSecond: number;
  readonly lambdaRequestPerMillion: number;
  readonly stepFunctionsTransitionPerThousand: number;
  readonly s3PutPerThousand: number;
  readonly s3GetPerThousand: number;
  readonly dynamoWritePerMillion: number;
}

/** Published prices (us-east-1): Lambda arm64, Step Functions Standard, S3 Standard, DynamoDB on-demand. */
export const PRICES_US_EAST_1: Prices = {
  lambdaGbSecond: 0.0000133334,
  lambdaRequestPerMillion: 0.2,
  stepFunctionsTransitionPerThousand: 0.025,
  s3PutPerThousand: 0.005,
  s3GetPerThousand: 0.0004,
  dynamoWritePerMillion: 0.625,
};

/** What a given map concurrency gives. */
export interface Estimate {
  readonly mapConcurrency: number;
  /** Leaves a second over all workers, before any shared limit. */
  readonly workersLeavesPerSecond: number;
  /** Leaves a second S3 allows, counting each commit's manifest PUT. */
  readonly s3LeavesPerSecond: number;
  /** The rate that holds, and what sets it. */
  readonly leavesPerSecond: number;
  readonly bindingLimit: 'workers' | 'S3 PUT rate' | 'Lambda concurrency';
  /** Source requests in flight (leaf GETs): what nuget.org sees. */
  readonly sourceRequestsInFlight: number;
  readonly wallMinutes: number;
  readonly cost: {
    readonly lambda: number;
    readonly stepFunctions: number;
    readonly s3: number;
    readonly dynamo: number;
    readonly total: number;
  };
}

/** The estimate at one Distributed Map `MaxConcurrency`. */
export function estimateBackfill(inputs: EstimateInputs, mapConcurrency: number): Estimate {
  const vcpu = Math.min(1, inputs.workerMemoryMb / 1769);
  // A worker below one vCPU is CPU-bound in proportion (the engine is CPU-bound at 50 ms, see docs/performance.md).
  const cpuBound = inputs.workerLeavesPerSecond * vcpu;
  const chainBound =
    inputs.orderedManifestPutMs === undefined
      ? Infinity
      : (inputs.leaves / inputs.commits) * (1000 / inputs.orderedManifestPutMs);
  const perWorker = Math.min(cpuBound, chainBound);
  const running = Math.min(mapConcurrency, inputs.lambdaConcurrency);
  const workersRate = perWorker * running;
  const putsPerLeaf = (inputs.leaves + inputs.commits) / inputs.leaves;
  const s3Rate = inputs.s3PutsPerSecond / putsPerLeaf;
  let leavesPerSecond = workersRate;
  let bindingLimit: Estimate['bindingLimit'] = running < mapConcurrency ? 'Lambda concurrency' : 'workers';
  if (s3Rate < leavesPerSecond) {
    leavesPerSecond = s3Rate;
    bindingLimit = 'S3 PUT rate';
  }
  const ranges = Math.ceil(inputs.leaves / inputs.rangeLeaves);
  // The tail: the last range started runs alone for about one range's time.
  const tailSeconds = inputs.rangeLeaves / perWorker;
  const wallSeconds = inputs.fixedSeconds + inputs.leaves / leavesPerSecond + tailSeconds;
  // Workers are paid for their whole run, also while S3 throttles them (they back off, they still run).
  const workerSeconds = wallSeconds * Math.min(running, ranges);
  const lambdaCost =
    workerSeconds * (inputs.workerMemoryMb / 1024) * inputs.prices.lambdaGbSecond +
    (Math.ceil(ranges / inputs.rangesPerBatch) / 1e6) * inputs.prices.lambdaRequestPerMillion;
  const batches = Math.ceil(ranges / inputs.rangesPerBatch);
  const stepFunctionsCost =
    ((batches * inputs.transitionsPerBatch + 10) / 1000) * inputs.prices.stepFunctionsTransitionPerThousand;
  const s3Cost =
    ((inputs.leaves + inputs.commits + ranges) / 1000) * inputs.prices.s3PutPerThousand +
    (batches / 1000) * inputs.prices.s3GetPerThousand;
  // Range progress: at most one conditional write per commit (coalesced while one is in flight), plus done marks.
  const dynamoCost = ((inputs.commits + 2 * ranges) / 1e6) * inputs.prices.dynamoWritePerMillion;
  const total = lambdaCost + stepFunctionsCost + s3Cost + dynamoCost;
  return {
    mapConcurrency,
    workersLeavesPerSecond: workersRate,
    s3LeavesPerSecond: s3Rate,
    leavesPerSecond,
    bindingLimit,
    sourceRequestsInFlight: running * inputs.leafConcurrency,
    wallMinutes: wallSeconds / 60,
    cost: { lambda: lambdaCost, stepFunctions: stepFunctionsCost, s3: s3Cost, dynamo: dynamoCost, total },
  };
}

/** The estimate as a Markdown table, one row per concurrency. */
export function estimateTable(inputs: EstimateInputs, concurrencies: readonly number[]): string {
  const rows = concurrencies.map((c) => estimateBackfill(inputs, c));
  const money = (n: number): string => `$${n.toFixed(2)}`;
  const lines = [
    '| map concurrency | leaf GETs in flight at the source | workers alone, leaves/s | S3 allows, leaves/s | binds | wall time | Lambda | Step Functions | S3 | DynamoDB | total |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.mapConcurrency} | ${r.sourceRequestsInFlight} | ${Math.round(r.workersLeavesPerSecond).toLocaleString('en-US')} | ` +
        `${Math.round(r.s3LeavesPerSecond).toLocaleString('en-US')} | ${r.bindingLimit} | ${r.wallMinutes.toFixed(0)} min | ` +
        `${money(r.cost.lambda)} | ${money(r.cost.stepFunctions)} | ${money(r.cost.s3)} | ${money(r.cost.dynamo)} | ${money(r.cost.total)} |`,
    ),
  ];
  return lines.join('\n');
}
