/**
 * What run.ts tells a scenario process ({@link ScenarioConfig}) and what it reports back ({@link ScenarioResult}).
 */

export type ScenarioKind = 'engine' | 'sequential' | 'ceiling' | 'ceiling-lean';

/** argv[2] of this process. */
export interface ScenarioConfig {
  readonly kind: ScenarioKind;
  /** Row name in the table. */
  readonly label: string;
  /** Service index URL of the replica. */
  readonly source: string;
  readonly s3Endpoint: string;
  readonly bucket: string;
  /** Most leaves (whole commits only, like MAX_LEAVES). */
  readonly leaves: number;
  readonly concurrency: number;
  readonly cursor: 'memory' | 'dynamo';
  readonly cursorLatencyMs: number;
  readonly dynamoTable?: string;
  /** When set, the measured part runs under the V8 CPU profiler and the profile is written there. */
  readonly profileFile?: string;
}

/** Per-leaf times, ms. */
export interface LeafTimes {
  readonly p50: number;
  readonly p99: number;
  readonly mean: number;
  readonly fetchP50: number;
  readonly fetchP99: number;
  readonly putP50: number;
  readonly putP99: number;
}

/** What one scenario measured. */
export interface ScenarioResult {
  readonly label: string;
  readonly kind: ScenarioKind;
  readonly concurrency: number;
  readonly cursor: 'memory' | 'dynamo' | 'none';
  readonly leaves: number;
  readonly commits: number;
  readonly bytes: number;
  readonly wallMs: number;
  readonly leavesPerSec: number;
  readonly perLeafMs: LeafTimes;
  /** CPU (user + system) of this process during the measured part, ms. */
  readonly cpuMs: number;
  readonly cpuPerLeafMs: number;
  /** Share of the wall time the event loop was busy (1: CPU-bound on its one thread). */
  readonly eventLoopUtilization: number;
  /** Time in garbage collection during the measured part, ms. */
  readonly gcMs: number;
  /** CPU used by the whole machine during the measured part (all processes), ms; NaN without /proc/stat. */
  readonly machineCpuMs: number;
  /** Peak resident set size of this process, MB (from start to end, module loading included). */
  readonly maxRssMB: number;
  readonly heapUsedMB: number;
  /** Peaks sampled every 100 ms during the run, MB: V8 heap used and reserved, and memory outside it (Buffers). */
  readonly peak: { heapUsedMB: number; heapTotalMB: number; externalMB: number; arrayBuffersMB: number; rssMB: number };
  /** Heap used just after each full (mark-compact) GC during the run, with the leaves stored by then: about the live size. */
  readonly afterMajorGc: { leaves: number; heapUsedMB: number }[];
  readonly stoppedBy?: string;
}
