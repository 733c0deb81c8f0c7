/** Runs the built CLI (`bin/catalog-sync.js`) as a child process, as a user would. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The CLI entry point. */
export const CLI = fileURLToPath(new URL('../bin/catalog-sync.js', import.meta.url));
/** The built CLI that entry point loads (`npm run build`). */
export const CLI_BUNDLE = fileURLToPath(new URL('../dist/cli/cli.js', import.meta.url));

/** What a finished CLI run printed and returned. */
export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Starts the CLI; `done` resolves when it exits. */
export function startCli(
  args: readonly string[],
  env: Record<string, string> = {},
  cwd?: string,
): { child: ChildProcess; done: Promise<CliResult> } {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, ...env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(cwd ? { cwd } : {}),
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done };
}

/** Runs the CLI to its end. */
export function runCli(args: readonly string[], env: Record<string, string> = {}, cwd?: string): Promise<CliResult> {
  return startCli(args, env, cwd).done;
}

/** Waits until `condition` holds, checking after each `check` interval; fails after `attempts` checks. */
export async function waitFor(
  condition: () => Promise<boolean> | boolean,
  what: string,
  attempts = 600,
  checkEveryMs = 50,
): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, checkEveryMs));
  }
  throw new Error(`gave up waiting for ${what}`);
}
