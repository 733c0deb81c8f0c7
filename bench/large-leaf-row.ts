/**
 * The large-leaf row of `npm run bench` (issue 30, item 3): the engine, wired as the Lambda wires it and run with
 * the Lambda's own memory flags for a 512 MB function, over one commit of `--large-leaves` leaves (default 48) of
 * `--large-leaf-mib` MiB (default 24), served gzip from servers of its own (large-leaf-servers.ts), at the defaults
 * (`CONCURRENCY` 32, the leaf memory budget of a 512 MB function). Its figure is the process's peak RSS; the target,
 * the function's memory.
 */
import { fork } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runChild } from './children.js';
import type { LargeLeafServersConfig, LargeLeafServersReady } from './large-leaf-servers.js';
import type { ScenarioConfig, ScenarioResult } from './scenario-types.js';

const here = dirname(fileURLToPath(import.meta.url));

/** The function's memory the row stands for, MB. */
export const LAMBDA_MEMORY_MB = 512;

/**
 * The V8 flags Lambda's Node.js runtime starts a function of `mb` MB with (its bootstrap script): a tenth of the
 * memory for the young generation (half of it a semi-space), the rest for the old one.
 */
export function lambdaNodeFlags(mb: number): string[] {
  const newSpace = Math.floor(mb / 10);
  return [`--max-semi-space-size=${Math.floor(newSpace / 2)}`, `--max-old-space-size=${mb - newSpace}`];
}

/** What the row measured. */
export interface LargeLeafRow {
  readonly leaves: number;
  readonly leafBytes: number;
  /** Each leaf as sent (gzip). */
  readonly sentBytes: number;
  readonly lambdaMemoryMb: number;
  readonly result: ScenarioResult;
}

/** Runs the row; `env` is the scenarios' environment (credentials, endpoints: S3's is replaced by the row's own). */
export async function runLargeLeafRow(options: {
  leaves: number;
  mib: number;
  concurrency: number;
  env: NodeJS.ProcessEnv;
  log: (text: string) => void;
}): Promise<LargeLeafRow> {
  const config: LargeLeafServersConfig = {
    leaves: options.leaves,
    mib: options.mib,
    catalogLatencyMs: 20,
    s3LatencyMs: 30,
  };
  const servers = fork(join(here, 'large-leaf-servers.js'), [JSON.stringify(config)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    const ready = await new Promise<LargeLeafServersReady>((resolve, reject) => {
      servers.once('exit', (code) => reject(new Error(`large-leaf servers exited (${code}) before they were ready`)));
      servers.once('message', (message: LargeLeafServersReady) => resolve(message));
    });
    const label = `engine, 1 commit of ${options.leaves} leaves of ${options.mib} MiB (${LAMBDA_MEMORY_MB} MB Lambda)`;
    options.log(
      `${label}: leaves of ${ready.leafBytes} bytes (${ready.sentBytes} gzip), concurrency ${options.concurrency}`,
    );
    const scenario: ScenarioConfig = {
      kind: 'engine',
      label,
      source: ready.serviceIndexUrl,
      s3Endpoint: ready.s3Endpoint,
      bucket: 'catalog-sync-bench',
      leaves: options.leaves,
      concurrency: options.concurrency,
      cursor: 'memory',
      cursorLatencyMs: 5,
    };
    const env = {
      ...options.env,
      AWS_ENDPOINT_URL_S3: ready.s3Endpoint,
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(LAMBDA_MEMORY_MB),
    };
    const result = await runChild<ScenarioResult>('scenario.js', scenario, env, lambdaNodeFlags(LAMBDA_MEMORY_MB));
    options.log(
      `  ${result.leaves} leaves in ${result.wallMs} ms, peak RSS ${result.maxRssMB} MB (sampled: heap ${result.peak.heapUsedMB} MB, array buffers ${result.peak.arrayBuffersMB} MB), ${result.cpuPerLeafMs} ms CPU/leaf`,
    );
    return {
      leaves: options.leaves,
      leafBytes: ready.leafBytes,
      sentBytes: ready.sentBytes,
      lambdaMemoryMb: LAMBDA_MEMORY_MB,
      result,
    };
  } finally {
    servers.kill('SIGTERM');
  }
}

/** The row's target: peak RSS within the function's memory. */
export function largeLeafTargets(row: LargeLeafRow | undefined): { target: string; value: string; ok: boolean }[] {
  if (row === undefined) return [];
  const ok = row.result.leaves === row.leaves && row.result.maxRssMB <= row.lambdaMemoryMb;
  return [
    {
      target: `${row.leaves} leaves of ${Math.round(row.leafBytes / 1024 / 1024)} MiB in one commit: every leaf stored, peak RSS <= the function's ${row.lambdaMemoryMb} MB`,
      value: `${row.result.leaves} stored, ${row.result.maxRssMB} MB`,
      ok,
    },
  ];
}

/** The row's line in the report's text. */
export function largeLeafText(row: LargeLeafRow | undefined): string {
  if (row === undefined) return '';
  const { result } = row;
  return (
    `large leaves: 1 commit of ${row.leaves} leaves of ${row.leafBytes} bytes (${row.sentBytes} gzip), ${LAMBDA_MEMORY_MB} MB Lambda's V8 flags and leaf budget, concurrency ${result.concurrency}: ` +
    `${result.leaves} stored in ${result.wallMs} ms, peak RSS ${result.maxRssMB} MB (sampled peaks: heap used ${result.peak.heapUsedMB} MB, heap ${result.peak.heapTotalMB} MB, array buffers ${result.peak.arrayBuffersMB} MB), GC ${result.gcMs} ms, ${result.cpuPerLeafMs} ms CPU/leaf\n`
  );
}
