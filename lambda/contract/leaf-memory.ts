/**
 * How many bytes of leaf bodies a process holds at once (issue 30): the engine bounds the leaves in flight by their
 * bytes, not only by their count, so a feed serving a few dozen leaves of tens of MB cannot exhaust the process.
 *
 * The rule: a quarter ({@link LEAF_MEMORY_SHARE}) of the memory the process has, where that memory is
 * - in Lambda, the function's memory (`AWS_LAMBDA_FUNCTION_MEMORY_SIZE`): 128 MiB of the default 512 MB function;
 * - elsewhere (the CLI), the least of the machine's memory, the container's limit (cgroup) when there is one, and
 *   V8's heap limit (`--max-old-space-size`);
 * never below {@link MIN_LEAF_MEMORY_BYTES}. `LEAF_MEMORY_MB` sets it outright, in MiB (Lambda or CLI).
 *
 * The other three quarters are for what the budget does not count: Node, the AWS SDK and the engine (about 110 MB
 * resident), the parse of one leaf at a time (its JSON text and tree, two to three times its size, made and dropped
 * within one synchronous step), and the garbage V8 has not collected yet.
 */
import { totalmem } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { SettingsError } from './settings.js';

/** The variable that sets the budget outright, in MiB. */
export const LEAF_MEMORY_ENV = 'LEAF_MEMORY_MB';
/** Share of the process's memory that leaf bodies in flight may hold. */
export const LEAF_MEMORY_SHARE = 0.25;
/** Least budget the rule gives (a 32 MB function would otherwise get 8 MB). */
export const MIN_LEAF_MEMORY_BYTES = 16 * 1024 * 1024;
/** The budget of a caller that says nothing (a library user's engine): that of the default 512 MB function. */
export const DEFAULT_LEAF_MEMORY_BYTES = 128 * 1024 * 1024;
/** Most `LEAF_MEMORY_MB` accepts: 1 TiB. */
const MAX_LEAF_MEMORY_MB = 1024 * 1024;

const MIB = 1024 * 1024;

/** The memory a process has, as far as it can tell (contract/leaf-memory.ts's rule reads these). */
export interface ProcessMemory {
  /** The machine's memory (`os.totalmem()`). */
  readonly totalBytes: number;
  /** The container's limit (`process.constrainedMemory()`), when there is one. */
  readonly constrainedBytes?: number;
  /** V8's heap limit (`v8.getHeapStatistics().heap_size_limit`). */
  readonly heapLimitBytes: number;
}

/** A leaf memory budget: its bytes, and where they come from, in words (said in a leaf's error when it cannot fit). */
export interface LeafMemoryBudget {
  readonly bytes: number;
  readonly from: string;
}

/**
 * The budget for this process: from `LEAF_MEMORY_MB`, else from the function's memory in Lambda, else from the
 * process's memory (see the module).
 *
 * @throws {@link SettingsError} naming `LEAF_MEMORY_MB` when it is not a whole number of MiB from 1.
 */
export function leafMemoryBudget(
  env: Readonly<Record<string, string | undefined>>,
  memory: ProcessMemory,
): LeafMemoryBudget {
  const explicit = env[LEAF_MEMORY_ENV]?.trim();
  if (explicit !== undefined && explicit !== '') {
    if (!/^\d+$/.test(explicit) || Number(explicit) < 1 || Number(explicit) > MAX_LEAF_MEMORY_MB) {
      throw new SettingsError(
        LEAF_MEMORY_ENV,
        `${JSON.stringify(explicit)} must be a whole number of MiB from 1 to ${MAX_LEAF_MEMORY_MB}`,
      );
    }
    return { bytes: Number(explicit) * MIB, from: `${LEAF_MEMORY_ENV}=${explicit}` };
  }
  const functionMb = Number(env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE);
  if (Number.isInteger(functionMb) && functionMb > 0) {
    return shareOf(functionMb * MIB, `a quarter of the function's ${functionMb} MB`);
  }
  const limits: [number, string][] = [
    [memory.totalBytes, "the machine's memory"],
    ...(memory.constrainedBytes !== undefined && memory.constrainedBytes > 0
      ? [[memory.constrainedBytes, "the container's memory limit"] as [number, string]]
      : []),
    [memory.heapLimitBytes, "V8's heap limit"],
  ];
  const [bytes, what] = limits.reduce((least, each) => (each[0] < least[0] ? each : least));
  return shareOf(bytes, `a quarter of ${Math.round(bytes / MIB)} MiB, ${what}`);
}

function shareOf(bytes: number, from: string): LeafMemoryBudget {
  const share = Math.floor(bytes * LEAF_MEMORY_SHARE);
  return share >= MIN_LEAF_MEMORY_BYTES
    ? { bytes: share, from }
    : { bytes: MIN_LEAF_MEMORY_BYTES, from: `the least budget, ${MIN_LEAF_MEMORY_BYTES / MIB} MiB` };
}

/** This process's {@link ProcessMemory}. */
export function processMemory(): ProcessMemory {
  // Node 20.18+: the cgroup limit, or 0 (or an unlimited cgroup's huge number) when there is none.
  const constrained = (process as { constrainedMemory?: () => number | undefined }).constrainedMemory?.();
  return {
    totalBytes: totalmem(),
    ...(constrained !== undefined && constrained > 0 && constrained < Number.MAX_SAFE_INTEGER
      ? { constrainedBytes: constrained }
      : {}),
    heapLimitBytes: getHeapStatistics().heap_size_limit,
  };
}
