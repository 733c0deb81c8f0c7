/**
 * The benchmark's child processes: one script with IPC per scenario (scenario.js, warm.js, planning.js,
 * validation.js), the servers child, and how busy the machine is meanwhile.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServersConfig, ServersReady, ReplicaInfo } from './servers.js';
import { machineCpuMs } from './stats.js';

const here = dirname(fileURLToPath(import.meta.url));

/** Runs a child script with IPC; resolves with its `{ type: 'result' }` message once it has exited (and written any profile). */
export function runChild<T>(
  script: string,
  config: unknown,
  env: NodeJS.ProcessEnv,
  execArgv: string[] = [],
  timeoutMs = 900_000,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = fork(join(here, script), [JSON.stringify(config)], {
      env,
      execArgv,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let outcome: { result: T } | { error: Error } | undefined;
    const timer = setTimeout(() => {
      outcome ??= { error: new Error(`${script} took longer than ${timeoutMs} ms`) };
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('message', (message: { type: string; result?: T; error?: string }) => {
      if (message.type === 'result') outcome ??= { result: message.result as T };
      else if (message.type === 'error') outcome ??= { error: new Error(`${script}: ${message.error}`) };
    });
    child.on('error', (error) => {
      outcome ??= { error };
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (outcome && 'result' in outcome) resolve(outcome.result);
      else reject(outcome?.error ?? new Error(`${script} exited (${code ?? signal}) without a result`));
    });
  });
}

/** The child that serves the catalog replicas and the fake S3, and how to ask it things. */
export interface Servers {
  ready: ServersReady;
  child: ChildProcess;
  replica(name: string): ReplicaInfo;
  admin<T>(path: string): Promise<T>;
}

/** Starts servers.js and resolves once it reports its endpoints. */
export function startServers(config: ServersConfig): Promise<Servers> {
  return new Promise((resolve, reject) => {
    const child = fork(join(here, 'servers.js'), [JSON.stringify(config)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.once('exit', (code) => reject(new Error(`servers exited (${code}) before they were ready`)));
    child.once('message', (message: ServersReady) => {
      resolve({
        ready: message,
        child,
        replica: (name) => message.replicas.find((r) => r.name === name)!,
        admin: async <T>(path: string): Promise<T> => {
          const response = await fetch(`${message.admin}${path}`);
          if (!response.ok) throw new Error(`admin ${path}: HTTP ${response.status}: ${await response.text()}`);
          return (await response.json()) as T;
        },
      });
    });
  });
}

/** Cores busy with anything during the next `ms`. */
export async function machineLoad(ms: number): Promise<number> {
  const before = machineCpuMs();
  await new Promise((resolve) => setTimeout(resolve, ms));
  return (machineCpuMs() - before) / ms;
}
