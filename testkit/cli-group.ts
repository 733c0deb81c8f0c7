/**
 * Runs the built CLI in a process group of its own (`detached`), so a test can SIGKILL it together with every
 * process it forked (`catalog-sync backfill`'s workers), as a power cut or the OOM killer of a container would;
 * and waits for a line of its output, so kills land at points chosen from what it printed, not from timers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { CLI, type CliResult } from './cli-process.js';

/** A CLI run in its own process group. */
export interface CliGroup {
  readonly child: ChildProcess;
  readonly done: Promise<CliResult>;
  /** Resolves with the first stderr line (printed so far or later) that `match` accepts; rejects if the CLI exits first. */
  stderrLine(match: (line: string) => boolean): Promise<string>;
  /** SIGKILLs the whole group: the CLI and every process it started. */
  killGroup(): void;
}

export function startCliGroup(args: readonly string[], env: Record<string, string> = {}): CliGroup {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, ...env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  let partial = '';
  const lines: string[] = [];
  const waiters: {
    match: (line: string) => boolean;
    resolve: (line: string) => void;
    reject: (error: Error) => void;
  }[] = [];
  let exited = false;
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    stderr += text;
    partial += text;
    const complete = partial.split('\n');
    partial = complete.pop()!;
    for (const line of complete) {
      lines.push(line);
      for (const waiter of [...waiters]) {
        if (waiter.match(line)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(line);
        }
      }
    }
  });
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      exited = true;
      for (const waiter of waiters.splice(0))
        waiter.reject(
          new Error(`the CLI exited (${signal ?? code}) before printing the line waited for; stderr:\n${stderr}`),
        );
      resolve({ code, signal, stdout, stderr });
    });
  });
  return {
    child,
    done,
    stderrLine(match) {
      const seen = lines.find(match);
      if (seen !== undefined) return Promise.resolve(seen);
      if (exited)
        return Promise.reject(new Error(`the CLI exited before printing the line waited for; stderr:\n${stderr}`));
      return new Promise((resolve, reject) => waiters.push({ match, resolve, reject }));
    },
    killGroup() {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
      }
    },
  };
}
