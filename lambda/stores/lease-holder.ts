/**
 * Who holds a lease, as the CLI and a consumer process name themselves: `<pid>@<host>`, and for a named consumer
 * `<pid>@<host>#<run id>` (one process may run several). A holder of this host whose process is gone (killed) is
 * known to be gone at once, so its lease is taken up without waiting for it to lapse.
 */
import { hostname } from 'node:os';

/** This process as a lease holder; with `instance`, one of several holders in it. */
export function processHolder(instance?: string): string {
  return `${process.pid}@${hostname()}${instance === undefined ? '' : `#${instance}`}`;
}

/** True when `holder` names a process of this host that no longer exists (a killed CLI or consumer). */
export function holderGone(holder: string): boolean {
  const match = /^(\d+)@([^#]+)(#.*)?$/.exec(holder);
  if (match === null || match[2] !== hostname()) return false;
  try {
    process.kill(Number(match[1]), 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
