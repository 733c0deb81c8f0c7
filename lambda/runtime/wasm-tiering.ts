/**
 * The HTTP parser of undici (llhttp) is a WebAssembly module. V8 compiles it fast (Liftoff) at the first
 * connection, then, once it has run a little (V8's default `--wasm-tiering-budget` of 1.8 M, a few responses), again
 * with TurboFan on a background thread: about 90 ms of CPU for its large state machine, which a short process pays
 * in full and, at exit, waits for. That was a third of a no-op `catalog-sync run` (0.24 CPU-s, 0.14 without it) and
 * lands in a cold Lambda's first invocation, where a 512 MB function has a third of a vCPU to share between it and
 * the work. A budget this much higher leaves TurboFan to processes that parse enough to gain from it (a long run or
 * a warm Lambda still tiers up); parsing a response's head in Liftoff's code costs microseconds.
 */
import { setFlagsFromString } from 'node:v8';

/** V8's budget before a WebAssembly function is compiled again by TurboFan: ~55 times its default. */
export const WASM_TIERING_BUDGET = 100_000_000;

/**
 * Raises V8's WebAssembly tiering budget for this process, unless the process was started with its own
 * `--wasm-tiering-budget`. Only the faces that own their process call it (the CLI, the Lambda handlers), before
 * their first request: a library import never changes its host's V8 flags.
 */
export function deferWasmTierUp(execArgv: readonly string[] = process.execArgv): void {
  if (execArgv.some((arg) => arg.startsWith('--wasm-tiering-budget') || arg.startsWith('--wasm_tiering_budget')))
    return;
  setFlagsFromString(`--wasm-tiering-budget=${WASM_TIERING_BUDGET}`);
}
