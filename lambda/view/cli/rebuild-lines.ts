/** What `view --rebuild` (and the refill's rebuild of the added packages) says about a rebuild. */
import { staleLine } from '../../contract/view.js';
import type { RebuildResult } from '../rebuild.js';
import type { ViewStaleness } from '../staleness.js';

/** A rebuild's summary line. */
export function rebuiltLine(name: string, result: RebuildResult, added: boolean): string {
  if (added && result.complete && result.rebuildId === '')
    return `nothing to rebuild: ${result.stale.length === 0 ? 'the view lacks nothing' : 'no stale id filter change is refilled yet'}`;
  const what = added ? 'packages added by id filter changes' : 'packages';
  const resume = result.complete
    ? ''
    : `; run \`catalog-sync view --rebuild\` again to resume view rebuild ${result.rebuildId}`;
  return `${result.complete ? 'rebuilt' : 'stopped: rebuilt'} ${result.packages} ${what} from ${result.commits} commits up to ${result.commitKey ?? '(none)'} (${result.bodiesRead} leaf bodies read): ${result.written} written, ${result.current} already current; cursor ${name} ${result.cursorMoved ? 'moved' : 'left'}${resume}`;
}

/** Writes each stale change's line to stderr. */
export function printStale(name: string, stale: readonly ViewStaleness[]): void {
  for (const change of stale) process.stderr.write(`catalog-sync: ${staleLine(name, change)}\n`);
}
