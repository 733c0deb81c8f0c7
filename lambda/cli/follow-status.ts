import { parseTimestamp, StoppedBy, type RunSummary, type Ticks } from '../contract/index.js';
import { lagSeconds } from '../sync/index.js';
import { formatBytes, formatDuration, stopLabel, type StopCause } from './format.js';

/**
 * What `run --follow` tells a person between slices (text only: `--json` keeps stdout and stderr to its lines), so
 * that quiet is not taken for stuck: once caught up, that it is and how often it checks (stderr, once a follow); on
 * a terminal, a line redrawn in place with the time of the next check while it waits, erased when a slice moves.
 */
export class FollowWaitNotice {
  private said = false;
  private drawn = false;

  constructor(
    private readonly stream: NodeJS.WriteStream,
    private readonly options: { readonly enabled: boolean; readonly inPlace: boolean; readonly pollSeconds: number },
  ) {}

  /** A slice left nothing to take for now (`summary`): the follower waits until `nextCheckAt` (epoch ms). */
  waiting(summary: RunSummary, cause: StopCause, nextCheckAt: number): void {
    if (!this.options.enabled) return;
    const every = `every ${formatPoll(this.options.pollSeconds)}`;
    if (this.options.inPlace) {
      let line = `catalog-sync: ${waitingFor(summary, cause)}; next check at ${clock(nextCheckAt)} (${every}; Ctrl-C to stop)`;
      const columns = this.stream.columns;
      if (columns !== undefined && columns > 1 && line.length > columns - 1) line = line.slice(0, columns - 1);
      this.stream.write(`\r${line}\u001b[K`);
      this.drawn = true;
      return;
    }
    if (this.said) return;
    this.said = true;
    this.stream.write(`catalog-sync: ${waitingFor(summary, cause)}; checking ${every}, one line per slice that finds new commits (Ctrl-C to stop)\n`);
  }

  /** The wait is over (a slice is taking commits, failed, or the follow ends): the line drawn in place goes. */
  done(): void {
    if (this.drawn) this.stream.write('\r\u001b[K');
    this.drawn = false;
  }
}

/** What the follower waits for, after a slice that stopped at `summary` (a polling stop). */
function waitingFor(summary: RunSummary, cause: StopCause): string {
  if (summary.stoppedBy === StoppedBy.backfill) return `a backfill of cursor ${summary.cursorName} is running; waiting for it to finish`;
  if (summary.stoppedBy === StoppedBy.until) return `at ${summary.cursorAfter}, ${cause.ceiling ?? 'its bound'} behind the head; waiting for newer commits to come within it`;
  return `caught up at ${summary.cursorAfter}; waiting for new commits`;
}

function formatPoll(seconds: number): string {
  return seconds < 60 || seconds % 60 !== 0 ? `${seconds} s` : `${seconds / 60} min`;
}

/** Local wall-clock time, `14:03:05`. */
function clock(epochMs: number): string {
  return new Date(epochMs).toTimeString().slice(0, 8);
}

/** The slices of one `run --follow`, added up: what it printed on its way out. */
export class FollowTotals {
  private first: RunSummary | undefined;
  private last: RunSummary | undefined;
  private slices = 0;
  private commits = 0;
  private leaves = 0;
  private deletes = 0;
  private quarantined = 0;
  private bytes = 0;
  private putRetries = 0;
  private readonly startedAt = Date.now();

  /** A slice ended (a failed one too: what it completed is stored). */
  add(summary: RunSummary): void {
    this.first ??= summary;
    this.last = summary;
    if (summary.commits > 0) this.slices++;
    this.commits += summary.commits;
    this.leaves += summary.leaves;
    this.deletes += summary.deletes;
    this.quarantined += summary.quarantined;
    this.bytes += summary.bytes;
    this.putRetries += summary.putRetries ?? 0;
  }

  /**
   * The whole follow in two lines, as a run's summary reads: why it stopped (`stoppedBy` when the follower knows
   * better than its last slice: a signal while it waited), what it took, the cursor from its first slice to its
   * last; nothing when no slice ended.
   */
  print(stream: NodeJS.WritableStream, stoppedBy: StoppedBy | undefined, head: Ticks | undefined, cause: StopCause): void {
    if (this.first === undefined || this.last === undefined) return;
    const label = stoppedBy === undefined ? stopLabel(this.last, cause) : stopLabel({ ...this.last, stoppedBy }, cause);
    const retries = this.putRetries === 0 ? '' : `, ${this.putRetries} S3 PUT ${this.putRetries === 1 ? 'retry' : 'retries'}`;
    const lag = head === undefined ? '' : `, lag ${formatDuration(lagSeconds(head, parseTimestamp(this.last.cursorAfter)))}`;
    stream.write(
      `${label} after following ${formatDuration((Date.now() - this.startedAt) / 1000)}: ${this.slices} slice${this.slices === 1 ? '' : 's'} moved, ` +
        `${this.commits} commits, ${this.leaves} leaves (${this.deletes} deletes, ${this.quarantined} quarantined), ${formatBytes(this.bytes)}${retries}\n` +
        `cursor ${this.last.cursorName}: ${this.first.cursorBefore} -> ${this.last.cursorAfter}${lag}\n`,
    );
  }
}
