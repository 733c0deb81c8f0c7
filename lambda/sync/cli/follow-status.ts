import { StoppedBy, type RunSummary } from '../../contract/index.js';
import type { StopCause } from './format.js';

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
    this.stream.write(
      `catalog-sync: ${waitingFor(summary, cause)}; checking ${every}, one line per slice that finds new commits (Ctrl-C to stop)\n`,
    );
  }

  /** The wait is over (a slice is taking commits, failed, or the follow ends): the line drawn in place goes. */
  done(): void {
    if (this.drawn) this.stream.write('\r\u001b[K');
    this.drawn = false;
  }
}

/** What the follower waits for, after a slice that stopped at `summary` (a polling stop). */
function waitingFor(summary: RunSummary, cause: StopCause): string {
  if (summary.stoppedBy === StoppedBy.backfill)
    return `a backfill of cursor ${summary.cursorName} is running; waiting for it to finish`;
  if (summary.stoppedBy === StoppedBy.until)
    return `at ${summary.cursorAfter}, ${cause.ceiling ?? 'its bound'} behind the head; waiting for newer commits to come within it`;
  return `caught up at ${summary.cursorAfter}; waiting for new commits`;
}

function formatPoll(seconds: number): string {
  return seconds < 60 || seconds % 60 !== 0 ? `${seconds} s` : `${seconds / 60} min`;
}

/** Local wall-clock time, `14:03:05`. */
function clock(epochMs: number): string {
  return new Date(epochMs).toTimeString().slice(0, 8);
}

/** The slices of one `run --follow` added up into one run summary: what it prints on its way out. */
export class FollowTotals {
  private total: RunSummary | undefined;
  private readonly startedAt = Date.now();

  /** A slice ended (a failed one too: what it completed is stored). */
  add(summary: RunSummary): void {
    const { error: _error, ...slice } = summary;
    const sum = this.total;
    this.total =
      sum === undefined
        ? slice
        : {
            ...slice,
            cursorBefore: sum.cursorBefore,
            commits: sum.commits + slice.commits,
            leaves: sum.leaves + slice.leaves,
            deletes: sum.deletes + slice.deletes,
            quarantined: sum.quarantined + slice.quarantined,
            bytes: sum.bytes + slice.bytes,
            putRetries: (sum.putRetries ?? 0) + (slice.putRetries ?? 0),
          };
  }

  /**
   * The whole follow as one run's summary (undefined before any slice ended): the cursor from its first slice to its
   * last, what they took, how long it followed, and why it stopped (`stoppedBy`, when the follower knows better than
   * its last slice: a signal or the time budget while it waited).
   */
  summary(stoppedBy?: StoppedBy): RunSummary | undefined {
    if (this.total === undefined) return undefined;
    return {
      ...this.total,
      durationMs: Date.now() - this.startedAt,
      ...(stoppedBy === undefined ? {} : { stoppedBy }),
    };
  }
}
