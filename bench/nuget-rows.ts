/**
 * The headline rows of `npm run bench`: nuget.org's shape (commits of 1-4 leaves, 2.5 a commit; catalog 20 ms;
 * S3 PUT 30 ms; `--concurrency`), with the sequential algorithm, the bare fetch + SDK PutObject loop and the engine
 * side by side in the same run, then the engine under a slow tail of S3 PUTs (1% of PUTs 300 ms; one PUT in 1,000
 * 5 s). Its targets (issue 19): at least 1.2 of the loop, at least 25x sequential, CPU per leaf at most 0.89 ms,
 * each tail row within 15% of the uniform row.
 */
import type { PutTail } from './fake-s3.js';
import type { Options } from './options.js';
import type { Row } from './row.js';
import type { ScenarioConfig } from './scenario-types.js';

/** The S3 a row runs against: its latency and slow tail. */
export interface S3Shape {
  readonly latencyMs: number;
  readonly tail?: PutTail;
}

/** Runs one scenario on a replica against an S3 of a given shape (run.ts's `scenario`). */
export type RunScenario = (
  config: Omit<ScenarioConfig, 's3Endpoint' | 'bucket' | 'cursorLatencyMs'>,
  s3: S3Shape,
) => Promise<Row>;

/** What the rows measured. */
export interface NugetRows {
  readonly s3LatencyMs: number;
  readonly sequential: Row;
  readonly ceiling: Row;
  readonly engine: Row;
  /** The engine under each slow tail, on a longer slice (a slice ends waiting for its slowest PUT in flight). */
  readonly tails: readonly { readonly tail: PutTail; readonly row: Row }[];
}

/** The two tails of issue 19. */
export const TAILS: readonly PutTail[] = [
  { every: 100, ms: 300 },
  { every: 1_000, ms: 5_000 },
];

/** Label of a tail row. */
function tailLabel(tail: PutTail, leaves: number): string {
  const share = tail.every === 100 ? '1% of' : `1 in ${tail.every.toLocaleString('en-US')}`;
  return `nuget: engine, ${share} PUTs ${tail.ms >= 1_000 ? `${tail.ms / 1_000} s` : `${tail.ms} ms`} (${leaves} leaves)`;
}

/** Runs the headline rows on the `nuget` replica. */
export async function runNugetRows(run: RunScenario, source: string, opts: Options): Promise<NugetRows> {
  const uniform: S3Shape = { latencyMs: opts.nugetS3Latency };
  const base = { source, cursor: 'memory' as const, concurrency: opts.concurrency };
  const sequential = await run(
    {
      ...base,
      kind: 'sequential',
      label: 'nuget: sequential (documented algorithm)',
      leaves: opts.sequentialLeaves,
      concurrency: 1,
    },
    uniform,
  );
  const ceiling = await run(
    { ...base, kind: 'ceiling', label: 'nuget: bare loop, fetch + SDK PutObject', leaves: opts.nugetLeaves },
    uniform,
  );
  const engine = await run({ ...base, kind: 'engine', label: 'nuget: engine', leaves: opts.nugetLeaves }, uniform);
  const tails: { tail: PutTail; row: Row }[] = [];
  if (opts.tailLeaves > 0) {
    for (const tail of TAILS) {
      tails.push({
        tail,
        row: await run(
          { ...base, kind: 'engine', label: tailLabel(tail, opts.tailLeaves), leaves: opts.tailLeaves },
          { ...uniform, tail },
        ),
      });
    }
  }
  return { s3LatencyMs: opts.nugetS3Latency, sequential, ceiling, engine, tails };
}

/** The rows' ratios. */
export function nugetRatios(rows: NugetRows): { overCeiling: number; overSequential: number; tails: number[] } {
  return {
    overCeiling: rows.engine.leavesPerSec / rows.ceiling.leavesPerSec,
    overSequential: rows.engine.leavesPerSec / rows.sequential.leavesPerSec,
    tails: rows.tails.map((t) => t.row.leavesPerSec / rows.engine.leavesPerSec),
  };
}

/** Issue 19's targets. */
export function nugetTargets(rows: NugetRows | undefined): { target: string; value: string; ok: boolean }[] {
  if (rows === undefined) return [];
  const ratios = nugetRatios(rows);
  return [
    {
      target: 'nuget-shaped: engine >= 1.2 of the bare fetch + SDK PutObject loop',
      value: ratios.overCeiling.toFixed(2),
      ok: ratios.overCeiling >= 1.2,
    },
    {
      target: 'nuget-shaped: engine >= 25x the sequential algorithm',
      value: `${ratios.overSequential.toFixed(1)}x`,
      ok: ratios.overSequential >= 25,
    },
    {
      target: 'nuget-shaped: engine CPU <= 0.89 ms per leaf',
      value: `${rows.engine.cpuPerLeafMs} ms`,
      ok: rows.engine.cpuPerLeafMs <= 0.89,
    },
    ...rows.tails.map((t, i) => ({
      target: `nuget-shaped, one PUT in ${t.tail.every} takes ${t.tail.ms} ms: within 15% of the uniform row`,
      value: ratios.tails[i]!.toFixed(2),
      ok: ratios.tails[i]! >= 0.85,
    })),
  ];
}

/** The line under the table. */
export function nugetRatioLine(rows: NugetRows | undefined): string[] {
  if (rows === undefined) return [];
  const ratios = nugetRatios(rows);
  return [
    `headline (nuget-shaped: 1-4-leaf commits, S3 ${rows.s3LatencyMs} ms): engine/bare loop = ${ratios.overCeiling.toFixed(2)}   ` +
      `engine/sequential = ${ratios.overSequential.toFixed(1)}x` +
      rows.tails
        .map(
          (t, i) =>
            `   tail 1/${t.tail.every} x ${t.tail.ms} ms: ${ratios.tails[i]!.toFixed(2)} of uniform (${t.row.s3Puts} PUTs)`,
        )
        .join(''),
  ];
}
