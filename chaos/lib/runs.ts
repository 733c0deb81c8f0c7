/**
 * Running slices: in this process with the engine (`runSlice`, stores built as the Lambda builds them), or as
 * the built CLI in a child process (`bin/catalog-sync.js`, as a user runs it), optionally SIGKILLed.
 */
import type { ChildProcess } from 'node:child_process';
import { CatalogClient, HttpClient, type HttpClientOptions } from '../../lambda/catalog/index.js';
import { runSlice, SyncError } from '../../lambda/sync/index.js';
import { parseSettings } from '../../lambda/contract/index.js';
import { startCli, type CliResult } from '../../testkit/index.js';
import type { Target } from './targets.js';

/** How a run ended: its `stoppedBy`, `error` (the run failed), `killed`, or `hung` (stopped by the watchdog). */
export type RunOutcome = string;

export interface EngineRunOptions {
  maxCommits: number;
  concurrency: number;
  /** HTTP client options (timeouts, retry policy). */
  http?: Partial<HttpClientOptions>;
  /** Called on every HTTP retry. */
  onRetry?: () => void;
  /** The run stops taking work at this epoch ms (a watchdog: nothing should ever need it). */
  deadline?: number;
}

/** Fast retries with short timeouts: a stalled body costs 1 s, not 30. Five attempts beat three faults. */
export const CHAOS_HTTP: Partial<HttpClientOptions> = {
  connectTimeoutMs: 2_000,
  headersTimeoutMs: 5_000,
  bodyTimeoutMs: 1_000,
  retry: { attempts: 5, baseDelayMs: 5, maxDelayMs: 50, maxRetryAfterMs: 5_000 },
};

export interface EngineRunResult {
  outcome: RunOutcome;
  error?: string;
  cursorAfter?: string;
}

/** One slice in this process. Never throws: a failed run is an outcome. */
export async function runEngine(target: Target, source: string, options: EngineRunOptions): Promise<EngineRunResult> {
  const settings = parseSettings({
    CATALOG_SOURCE: source,
    MAX_COMMITS: String(options.maxCommits),
    CONCURRENCY: String(options.concurrency),
    SNAPSHOT_PREFIX: target.prefix,
  });
  const http = new HttpClient({ ...CHAOS_HTTP, ...options.http, connections: options.concurrency });
  if (options.onRetry) http.onRetry = options.onRetry;
  let stores;
  try {
    stores = target.engineStores(options.concurrency);
  } catch (error) {
    await http.close();
    return { outcome: 'error', error: (error as Error).message };
  }
  try {
    const summary = await runSlice(settings, {
      catalog: new CatalogClient(http, settings.source, settings.allowedOrigins),
      cursors: stores.cursors,
      snapshots: stores.snapshots,
      runLog: stores.runLog,
      deadline: options.deadline ?? Date.now() + 120_000,
    });
    return { outcome: summary.stoppedBy, cursorAfter: summary.cursorAfter };
  } catch (error) {
    if (error instanceof SyncError)
      return {
        outcome: 'error',
        error: (error.cause as Error)?.message ?? error.message,
        cursorAfter: error.summary.cursorAfter,
      };
    return { outcome: 'error', error: (error as Error)?.message ?? String(error) };
  } finally {
    stores.close();
    await http.close().catch(() => undefined);
  }
}

/** CLI children still running: SIGKILLed if this process exits first (a `--follow` run would never end). */
const liveCli = new Set<ChildProcess>();
// Registered at load, so it runs before the 'exit' handlers that remove the targets' folders.
process.on('exit', () => {
  for (const child of liveCli) child.kill('SIGKILL');
});

export interface CliRun {
  child: ChildProcess;
  /** Resolves when the process has exited. */
  done: Promise<CliRunResult>;
  /** SIGKILL now; true if the process was still running. */
  kill(): boolean;
}

export interface CliRunResult extends CliResult {
  outcome: RunOutcome;
  /** Killed by us (on purpose). */
  killed: boolean;
}

/**
 * Starts `catalog-sync run` with `args` on `target`. With `killAfterMs`, SIGKILLs it then (if it still runs).
 * `hangAfterMs` is a watchdog: a process still running then is killed and reported as `hung`.
 */
export function startCliRun(
  target: Target,
  source: string,
  args: readonly string[],
  env: Record<string, string>,
  options: { killAfterMs?: number; hangAfterMs?: number } = {},
): CliRun {
  const { child, done } = startCli(['run', '--source', source, '--json', ...target.cliArgs(), ...args], env);
  liveCli.add(child);
  child.once('exit', () => liveCli.delete(child));
  let killed = false;
  let hung = false;
  const alive = (): boolean => child.exitCode === null && child.signalCode === null;
  const kill = (): boolean => {
    if (!alive()) return false;
    killed = child.kill('SIGKILL');
    return killed;
  };
  const killTimer = options.killAfterMs === undefined ? undefined : setTimeout(kill, options.killAfterMs);
  const hangTimer = setTimeout(() => {
    if (alive()) {
      hung = true;
      child.kill('SIGKILL');
    }
  }, options.hangAfterMs ?? 120_000);
  const result = done.then((r): CliRunResult => {
    clearTimeout(killTimer);
    clearTimeout(hangTimer);
    let outcome: RunOutcome;
    if (hung) outcome = 'hung';
    else if (killed && r.signal === 'SIGKILL') outcome = 'killed';
    else {
      const last = r.stdout.trim().split('\n').filter(Boolean).at(-1);
      let stoppedBy: string | undefined;
      try {
        stoppedBy = last ? (JSON.parse(last) as { stoppedBy?: string }).stoppedBy : undefined;
      } catch {
        stoppedBy = undefined;
      }
      outcome = r.code === 0 ? (stoppedBy ?? 'exit-0') : r.code === 1 ? 'error' : `exit-${r.code ?? r.signal}`;
    }
    return { ...r, outcome, killed: killed && r.signal === 'SIGKILL' };
  });
  return { child, done: result, kill };
}
