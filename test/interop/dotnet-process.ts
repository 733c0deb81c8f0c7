/**
 * Running `dotnet` for the interoperability suite: one child process (never a shell), its output collected, and an
 * environment that leaves nothing behind (no telemetry, no first-run text, no build servers kept alive after it).
 */
import { spawn } from 'node:child_process';

/** What a `dotnet` run printed and how it ended. */
export interface DotnetResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The environment of every `dotnet` child: the process's own, with telemetry, the logo and the first-run experience
 * off, no MSBuild node reuse, shared compilation or MSBuild server (so no process outlives the call), English output,
 * then `overrides` (e.g. fresh `NUGET_PACKAGES` and `NUGET_HTTP_CACHE_PATH`).
 */
export function dotnetEnvironment(overrides: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DOTNET_CLI_TELEMETRY_OPTOUT: '1',
    DOTNET_NOLOGO: '1',
    DOTNET_SKIP_FIRST_TIME_EXPERIENCE: '1',
    DOTNET_CLI_UI_LANGUAGE: 'en',
    MSBUILDDISABLENODEREUSE: '1',
    UseSharedCompilation: 'false',
    DOTNET_CLI_USE_MSBUILD_SERVER: '0',
    ...overrides,
  };
}

/**
 * Runs `dotnet args…` and resolves with its exit code and output (a non-zero exit is a result, not an error).
 *
 * @throws when `dotnet` cannot be started (not on the PATH).
 */
export function runDotnet(
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; cwd?: string; input?: string },
): Promise<DotnetResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('dotnet', args, { env: options.env, cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.once('error', reject);
    child.once('close', (code, signal) => {
      resolve({
        code: code ?? (signal ? 128 : 1),
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
      });
    });
    child.stdin.on('error', () => {}); // a child that exits early closes its stdin: its exit code tells
    child.stdin.end(options.input ?? '');
  });
}
