/**
 * The built `catalog-sync serve` as a child process (as a user runs it, with `--verbose`), for the interop tests that
 * restore from it: started on a port, waited for, its request log read back, stopped with Ctrl-C.
 */
import { startCli, waitFor, type CliResult } from '../../testkit/cli-process.js';

/** A running `catalog-sync serve`. */
export interface ServeProcess {
  /** The base URL it says it serves at (`http://127.0.0.1:port/`). */
  readonly base: string;
  /** What it printed on stderr so far (warnings, the `--verbose` request log). */
  stderr(): string;
  /** The requests it logged so far, as `METHOD target status`. */
  served(): string[];
  /** Sends Ctrl-C (SIGINT) and resolves with how it ended; again after that, the same result. */
  stop(): Promise<CliResult>;
}

/** Starts `catalog-sync serve --data-dir dataDir --port port --verbose` and waits until it listens. */
export async function startServe(dataDir: string, port: number | string): Promise<ServeProcess> {
  const serve = startCli(['serve', '--data-dir', dataDir, '--port', String(port), '--verbose']);
  let stdout = '';
  let stderr = '';
  serve.child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  serve.child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  await waitFor(
    () => stdout.includes('Ctrl-C to stop') || serve.child.exitCode !== null,
    'catalog-sync serve to start',
  );
  const at = /at (http:\/\/127\.0\.0\.1:\d+\/)\n/.exec(stdout);
  if (!at) throw new Error(`catalog-sync serve did not start (exit ${serve.child.exitCode}):\n${stdout}${stderr}`);
  return {
    base: at[1]!,
    stderr: () => stderr,
    served: () =>
      stderr
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { method: string; target: string; status: number })
        .map(({ method, target, status }) => `${method} ${target} ${status}`),
    stop: () => {
      if (serve.child.exitCode === null && serve.child.signalCode === null) serve.child.kill('SIGINT');
      return serve.done;
    },
  };
}
