/**
 * Ties a child process's life to the test process that started it.
 *
 * A test run may end in any way (a crash, SIGKILL, Ctrl-C): emulators must not outlive it. The
 * parent holds the write end of this process's stdin, and the kernel closes it when the parent
 * dies, however it dies; the parent pid is watched as well, in case stdin is shared.
 */

/**
 * Calls `cleanup` and exits when the parent goes away or a termination signal arrives.
 *
 * @param {() => Promise<void> | void} cleanup
 * @returns {(code: number) => Promise<void>} a function that cleans up and exits.
 */
export function exitWithParent(cleanup) {
  const parent = process.ppid;
  let exiting = false;
  const exit = async (code) => {
    if (exiting) return;
    exiting = true;
    try {
      await cleanup();
    } finally {
      process.exit(code);
    }
  };
  process.stdin.on('end', () => void exit(0));
  process.stdin.on('close', () => void exit(0));
  process.stdin.on('error', () => void exit(0));
  process.stdin.resume();
  const timer = setInterval(() => {
    if (process.ppid !== parent) void exit(0);
  }, 500);
  timer.unref();
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => void exit(0));
  return exit;
}

/** Tells the parent this process is ready, as one JSON line on stdout. */
export function announce(fields) {
  process.stdout.write(`${JSON.stringify({ ready: true, ...fields })}\n`);
}
