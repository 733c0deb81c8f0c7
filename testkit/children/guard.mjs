/**
 * Runs a command (DynamoDB Local's `java`) and kills it when the test process that started this
 * guard goes away, since Java cannot watch its parent itself.
 *
 * Usage: node guard.mjs <command> [args...]; the command's stdout and stderr are this process's.
 */
import { spawn } from 'node:child_process';
import { exitWithParent } from './parent-watch.mjs';

const [command, ...args] = process.argv.slice(2);
if (!command) {
  process.stderr.write('usage: guard.mjs <command> [args...]\n');
  process.exit(2);
}
const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'] });
const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
child.once('error', (error) => {
  process.stderr.write(`guard: cannot start ${command}: ${error.message}\n`);
  process.exit(127);
});

const exit = exitWithParent(async () => {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  // A bound, not a wait for timing: SIGKILL if the JVM ignores SIGTERM.
  const force = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(force);
});
exited.then((code) => exit(code));
