/**
 * How a scenario process measures: per-leaf times, wall time, CPU, event-loop use, GC (and the heap just after
 * each full GC), memory peaks sampled every 100 ms, and the {@link ScenarioResult} made of them.
 */
import { constants as perfConstants, PerformanceObserver } from 'node:perf_hooks';
import { profiled } from './profiler.js';
import type { LeafTimes, ScenarioConfig, ScenarioResult } from './scenario-types.js';
import { machineCpuMs, mean, quantile, round, sortedPrefix } from './stats.js';

/** Per-leaf times of a run, kept in typed arrays so that recording costs no allocation. */
export interface Timing {
  record(start: number, fetched: number, stored: number): void;
  summary(): LeafTimes & { count: number };
}

/** Records up to `capacity` leaves' start, fetched and stored times. */
export function timing(capacity: number): Timing {
  const total = new Float64Array(capacity);
  const fetch = new Float64Array(capacity);
  const put = new Float64Array(capacity);
  let n = 0;
  return {
    record(start, fetched, stored) {
      if (n >= capacity) return;
      total[n] = stored - start;
      fetch[n] = fetched - start;
      put[n] = stored - fetched;
      n++;
      leavesDone++;
    },
    summary() {
      const t = sortedPrefix(total, n);
      const f = sortedPrefix(fetch, n);
      const p = sortedPrefix(put, n);
      return {
        count: n,
        p50: round(quantile(t, 0.5)),
        p99: round(quantile(t, 0.99)),
        mean: round(mean(t)),
        fetchP50: round(quantile(f, 0.5)),
        fetchP99: round(quantile(f, 0.99)),
        putP50: round(quantile(p, 0.5)),
        putP99: round(quantile(p, 0.99)),
      };
    },
  };
}

/** What {@link measured} saw while `body` ran. */
export interface Measured<T> {
  value: T;
  wallMs: number;
  cpuMs: number;
  elu: number;
  gcMs: number;
  machineCpuMs: number;
}

/** Set from the config: the measured part runs under the CPU profiler, written to this file. */
let profileFile: string | undefined;

/** Profiles the measured part of this process into `file` (none when undefined). */
export function profileInto(file: string | undefined): void {
  profileFile = file;
}

/** Measures what happens inside `body`: wall time, CPU, event-loop use, GC, and the machine's CPU. */
export async function measured<T>(body: () => Promise<T>): Promise<Measured<T>> {
  return profiled(profileFile, () => measure(body));
}

async function measure<T>(body: () => Promise<T>): Promise<Measured<T>> {
  const sample = (): void => {
    const m = process.memoryUsage();
    peaks.heapUsedMB = Math.max(peaks.heapUsedMB, m.heapUsed / MB);
    peaks.heapTotalMB = Math.max(peaks.heapTotalMB, m.heapTotal / MB);
    peaks.externalMB = Math.max(peaks.externalMB, m.external / MB);
    peaks.arrayBuffersMB = Math.max(peaks.arrayBuffersMB, m.arrayBuffers / MB);
    peaks.rssMB = Math.max(peaks.rssMB, m.rss / MB);
  };
  const sampler = setInterval(sample, 100);
  try {
    return await measureOnly(body);
  } finally {
    clearInterval(sampler);
    sample();
  }
}

const MB = 1024 * 1024;
/** Leaves stored so far in this process (for the heap samples). */
let leavesDone = 0;
const afterMajorGc: { leaves: number; heapUsedMB: number }[] = [];
const peaks = { heapUsedMB: 0, heapTotalMB: 0, externalMB: 0, arrayBuffersMB: 0, rssMB: 0 };

async function measureOnly<T>(body: () => Promise<T>): Promise<Measured<T>> {
  let gcMs = 0;
  const observer = new PerformanceObserver((list) => {
    let major = false;
    for (const entry of list.getEntries()) {
      gcMs += entry.duration;
      if ((entry as { detail?: { kind?: number } }).detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR)
        major = true;
    }
    // Heap in use just after a full GC: about the live size. Growing with the leaves done means something is kept.
    if (major) afterMajorGc.push({ leaves: leavesDone, heapUsedMB: round(process.memoryUsage().heapUsed / MB, 1) });
  });
  observer.observe({ entryTypes: ['gc'] });
  const machine0 = machineCpuMs();
  const cpu0 = process.cpuUsage();
  const elu0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  const value = await body();
  const wallMs = performance.now() - t0;
  const elu = performance.eventLoopUtilization(elu0).utilization;
  const cpu = process.cpuUsage(cpu0);
  const machine = machineCpuMs() - machine0;
  await new Promise((resolve) => setImmediate(resolve));
  observer.disconnect();
  return { value, wallMs, cpuMs: (cpu.user + cpu.system) / 1000, elu, gcMs, machineCpuMs: machine };
}

function memory(): Pick<ScenarioResult, 'maxRssMB' | 'heapUsedMB' | 'peak' | 'afterMajorGc'> {
  return {
    afterMajorGc,
    maxRssMB: round(process.resourceUsage().maxRSS / 1024, 1),
    heapUsedMB: round(process.memoryUsage().heapUsed / MB, 1),
    peak: {
      heapUsedMB: round(peaks.heapUsedMB, 1),
      heapTotalMB: round(peaks.heapTotalMB, 1),
      externalMB: round(peaks.externalMB, 1),
      arrayBuffersMB: round(peaks.arrayBuffersMB, 1),
      rssMB: round(peaks.rssMB, 1),
    },
  };
}

/** A scenario's result from what was measured and counted, with the process's memory figures. */
export function result(
  config: ScenarioConfig,
  run: Omit<Measured<unknown>, 'value'>,
  leaves: number,
  commits: number,
  bytes: number,
  perLeafMs: LeafTimes,
  cursor: ScenarioResult['cursor'],
  stoppedBy?: string,
): ScenarioResult {
  return {
    label: config.label,
    kind: config.kind,
    concurrency: config.concurrency,
    cursor,
    leaves,
    commits,
    bytes,
    wallMs: round(run.wallMs, 1),
    leavesPerSec: round(leaves / (run.wallMs / 1000), 1),
    perLeafMs,
    cpuMs: round(run.cpuMs, 1),
    cpuPerLeafMs: round(run.cpuMs / Math.max(1, leaves), 3),
    eventLoopUtilization: round(run.elu, 3),
    gcMs: round(run.gcMs, 1),
    machineCpuMs: round(run.machineCpuMs, 0),
    ...memory(),
    ...(stoppedBy === undefined ? {} : { stoppedBy }),
  };
}
