/** Small statistics helpers for the benchmark. */
import { readFileSync } from 'node:fs';

/** Quantile `q` (0..1) of sorted values, by nearest rank; NaN when empty. */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

/** Sorted copy of the first `n` values. */
export function sortedPrefix(values: Float64Array, n: number): Float64Array {
  return values.slice(0, n).sort();
}

/** Mean of the first `n` values. */
export function mean(values: ArrayLike<number>, n = values.length): number {
  if (n === 0) return Number.NaN;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += values[i]!;
  return sum / n;
}

/** Median of a list of numbers. */
export function median(values: readonly number[]): number {
  return quantile(Float64Array.from(values).sort(), 0.5);
}

/** Rounds to `digits` decimals (for JSON output). */
export function round(value: number, digits = 2): number {
  if (!Number.isFinite(value)) return value;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** CPU time used by every process of the machine so far, ms (Linux `/proc/stat`); NaN elsewhere. */
export function machineCpuMs(): number {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal: everything but idle and iowait, in USER_HZ (100 per second).
    const busy = fields[0]! + fields[1]! + fields[2]! + fields[5]! + fields[6]! + fields[7]!;
    return busy * 10;
  } catch {
    return Number.NaN;
  }
}

/** Runs `action` and returns its result with its wall time and this process's CPU time (user + system), ms. */
export async function timed<T>(action: () => Promise<T>): Promise<{ result: T; wallMs: number; cpuMs: number }> {
  const cpu0 = process.cpuUsage();
  const started = performance.now();
  const result = await action();
  const cpu = process.cpuUsage(cpu0);
  return { result, wallMs: performance.now() - started, cpuMs: (cpu.user + cpu.system) / 1000 };
}
