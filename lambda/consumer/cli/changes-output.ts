/**
 * What `catalog-sync changes` does with each commit: a line on stdout (JSON or text, per commit or per leaf),
 * or a command run with the commit's JSON on stdin. Either resolves only once the commit is handed over, so the
 * consumer's checkpoint that follows never covers a commit that was not.
 */
import type { MirrorCommit } from '../mirror.js';

/** How each commit is written out. */
export interface OutputOptions {
  readonly json?: boolean;
  readonly leaves?: boolean;
  readonly exec?: string;
}

/** stdout was closed by its reader (`| head`): the command stops, and the commit in hand is not checkpointed. */
export class OutputClosed extends Error {
  override readonly name = 'OutputClosed';
}

/** The lines of a commit: one per commit, or one per leaf with `--leaves`. */
export function linesOf(commit: MirrorCommit, options: OutputOptions): string[] {
  const { commitKey, commitId, commitTimeStamp } = commit;
  if (options.leaves) {
    return commit.leaves.map((leaf) =>
      options.json
        ? JSON.stringify({ commitKey, commitId, commitTimeStamp, ...leaf })
        : `${commitTimeStamp} ${leaf.type === 'PackageDelete' ? 'delete ' : 'details'} ${leaf.id} ${leaf.version}${leaf.quarantined ? ' (quarantined)' : ''}`,
    );
  }
  if (options.json) return [JSON.stringify(commit)];
  const count = commit.leaves.length;
  const filtered = commit.filtered ? `, ${commit.filtered} filtered` : '';
  return [
    `${commitTimeStamp} ${commitKey} ${count} ${count === 1 ? 'leaf' : 'leaves'}${filtered} (commit ${commitId})`,
  ];
}

/** Writes `text` to `stream` and resolves once it is handed to the OS (or rejects with {@link OutputClosed}). */
export function writeOut(stream: NodeJS.WritableStream, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    stream.write(text, (error) => {
      if (error === undefined || error === null) resolve();
      else
        reject(
          (error as NodeJS.ErrnoException).code === 'EPIPE'
            ? new OutputClosed('stdout was closed', { cause: error })
            : error,
        );
    });
  });
}

/** How long a command ended by SIGINT or SIGTERM waits for this process's own signal (ms). */
const INTERRUPT_GRACE_MS = 100;

/** `--exec`'s command was ended by the signal that stops `changes` (Ctrl-C reaches the whole process group). */
export class ExecInterrupted extends Error {
  override readonly name = 'ExecInterrupted';
}

/**
 * Runs `command` in the shell with the commit's JSON on stdin and `CATALOG_SYNC_COMMIT_KEY` (its idempotency key)
 * in the environment; its output is the terminal's. Resolves when it exits 0; rejects naming the command and
 * the commit otherwise, with {@link ExecInterrupted} when it died of a signal after `stopped` aborted (Ctrl-C).
 */
export async function execFor(command: string, commit: MirrorCommit, stopped?: AbortSignal): Promise<void> {
  // Loaded on the first --exec, not with the CLI: child_process is a few ms of every command's start-up.
  const { spawn } = await import('node:child_process');
  return new Promise((resolve, reject) => {
    const child = spawn(command, {
      shell: true,
      stdio: ['pipe', 'inherit', 'inherit'],
      env: { ...process.env, CATALOG_SYNC_COMMIT_KEY: commit.commitKey },
    });
    child.on('error', reject);
    // A command that does not read its stdin closes it early: that is its business, not an error.
    child.stdin.on('error', () => undefined);
    child.stdin.end(`${JSON.stringify(commit)}\n`);
    child.on('close', (code, signal) => {
      if (code === 0) return resolve();
      const failed = (): void => {
        if (signal !== null && stopped?.aborted)
          reject(
            new ExecInterrupted(
              `--exec ${JSON.stringify(command)} was stopped by ${signal} on commit ${commit.commitKey}`,
            ),
          );
        else
          reject(
            new Error(
              `--exec ${JSON.stringify(command)} ${signal ? `was killed by ${signal}` : `exited with ${code}`} on commit ${commit.commitKey}`,
            ),
          );
      };
      // Ctrl-C reaches the command and this process at once, and the command's end may be seen first: a moment for
      // this process's own signal handler before the command is judged failed.
      if (signal === 'SIGINT' || signal === 'SIGTERM') setTimeout(failed, INTERRUPT_GRACE_MS);
      else failed();
    });
  });
}
