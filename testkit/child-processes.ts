/**
 * Child processes (emulators) that never outlive the test run.
 *
 * Three layers make sure of it: {@link ManagedChild.stop} for the normal end; `exit` and signal
 * handlers of this process for a vitest that is interrupted; and the children's own watch on
 * their parent (children/parent-watch.mjs: their stdin closes when this process dies, even by
 * SIGKILL). Only the processes started here are ever signalled, by pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** A child process started by {@link startChild}. */
export interface ManagedChild {
  readonly name: string;
  readonly process: ChildProcess;
  /** Resolves when the process has exited (with its code, or null when killed by a signal). */
  readonly exited: Promise<number | null>;
  /** The last few kB of its stdout and stderr, for error messages. */
  output(): string;
  /** SIGTERM, then SIGKILL if it is still running after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

const live = new Set<ManagedChild>();
const OUTPUT_LIMIT = 8 * 1024;

/** Absolute path of a script in testkit/children (also from a compiled copy under dist/). */
export function childScript(name: string): string {
  const candidates = [
    new URL(`./children/${name}`, import.meta.url),
    new URL(`../../testkit/children/${name}`, import.meta.url),
  ];
  const found = candidates.map((url) => fileURLToPath(url)).find((path) => existsSync(path));
  if (!found) throw new Error(`child script ${name} not found next to ${fileURLToPath(import.meta.url)}`);
  return found;
}

/**
 * Starts `command` with a stdin pipe held open by this process (the child's lifeline), stdout and
 * stderr captured. The child never keeps this process alive.
 */
export function startChild(
  name: string,
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): ManagedChild {
  installExitHandlers();
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], env });
  let output = '';
  const capture = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_LIMIT);
  };
  child.stdout!.on('data', capture);
  child.stderr!.on('data', capture);
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', (error) => {
      capture(Buffer.from(`\n${name}: ${error.message}\n`));
      resolve(null);
    });
  });
  // Neither the child nor its pipes may hold the test process open.
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr])
    (stream as unknown as { unref?: () => void } | null)?.unref?.();

  const managed: ManagedChild = {
    name,
    process: child,
    exited,
    output: () => output,
    async stop(graceMs = 5_000) {
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
        // While stopping, the child must hold this process open, or its exit would go unseen.
        child.ref();
        child.kill('SIGTERM');
        const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
        force.unref();
        await exited;
        clearTimeout(force);
      }
      live.delete(managed);
    },
  };
  live.add(managed);
  void exited.then(() => live.delete(managed));
  return managed;
}

/**
 * Resolves with the first line of the child's stdout that is a JSON object with `ready: true`.
 *
 * @throws when the child exits first, or after `timeoutMs`.
 */
export function waitForReady<T extends object>(child: ManagedChild, timeoutMs: number): Promise<T & { ready: true }> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer): void => {
      buffered += chunk.toString('utf8');
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        try {
          const parsed = JSON.parse(line) as { ready?: unknown };
          if (parsed && parsed.ready === true) {
            done();
            resolve(parsed as T & { ready: true });
            return;
          }
        } catch {
          // Not our announcement: ordinary output.
        }
      }
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`${child.name} not ready after ${timeoutMs} ms; output:\n${child.output()}`));
    }, timeoutMs);
    const done = (): void => {
      clearTimeout(timer);
      child.process.stdout!.off('data', onData);
    };
    child.process.stdout!.on('data', onData);
    void child.exited.then((code) => {
      done();
      reject(new Error(`${child.name} exited (code ${code}) before it was ready; output:\n${child.output()}`));
    });
  });
}

let handlersInstalled = false;

function installExitHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  // 'exit' handlers must be synchronous: kill() is, and each child (or its guard) shuts down on its own.
  process.on('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      killAll();
      process.off(signal, onSignal);
      // Without other listeners (vitest has its own), keep the signal's default effect: terminate.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}

function killAll(): void {
  for (const child of live) {
    if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill('SIGTERM');
  }
}
