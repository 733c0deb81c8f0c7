import { formatTimestamp, type Ticks } from '../../contract/index.js';
import type { Progress } from '../index.js';

/** What bounds a slice, besides the catalog head. */
export interface ProgressOptions {
  enabled: boolean;
  /** `--max-commits` / `--max-leaves`: a slice ends at the first limit it reaches. */
  maxCommits?: number;
  maxLeaves?: number;
  /** Epoch ms of the `--time-budget` deadline, if any. */
  deadline?: number;
}

/**
 * Shows a run's progress: a bar redrawn in place on a terminal, a plain line every few seconds otherwise.
 * The share of the slice done is the largest of: the catalog time covered between the first commit completed
 * and the newest commit the run may reach, and the commits and leaves done against `--max-commits` and
 * `--max-leaves` (a slice ends at whichever comes first; the number of leaves ahead is unknown until their
 * pages are read). Time left is estimated from that share, and never exceeds the time budget.
 */
export class ProgressReporter {
  private startTicks: Ticks | undefined;
  private startedAt = 0;
  /** When the first commit completed: time left is measured from there, as the share is. */
  private firstAt = 0;
  private lastDraw = 0;
  private last: Progress | undefined;
  private drawnLast = false;
  private drawn = false;
  private readonly tty: boolean;

  constructor(
    private readonly stream: NodeJS.WriteStream,
    private readonly options: ProgressOptions,
  ) {
    this.tty = stream.isTTY === true;
  }

  /** A run read the catalog head. */
  start(_head: Ticks): void {
    this.startTicks = undefined;
    this.startedAt = Date.now();
    this.lastDraw = 0;
    this.last = undefined;
    this.drawnLast = false;
  }

  /** A commit completed. */
  update(progress: Progress): void {
    if (!this.options.enabled) return;
    const now = Date.now();
    if (this.startTicks === undefined) {
      this.startTicks = progress.cursor;
      this.firstAt = now;
    }
    this.last = progress;
    this.drawnLast = false;
    if (now - this.lastDraw < (this.tty ? 100 : 5_000)) return;
    this.draw(progress, now);
  }

  /** The run ended: on a terminal, draw the final state and leave the terminal on a fresh line. */
  finish(): void {
    if (this.tty && this.last !== undefined && !this.drawnLast) this.draw(this.last, Date.now());
    if (this.drawn) this.stream.write('\n');
    this.drawn = false;
    this.last = undefined;
  }

  private draw(progress: Progress, now: number): void {
    this.lastDraw = now;
    this.drawnLast = true;
    const elapsed = Math.max(0, (now - this.startedAt) / 1000);
    const share = this.share(progress);
    const rate = elapsed > 0 ? progress.leaves / elapsed : 0;
    const sinceFirst = (now - this.firstAt) / 1000;
    let left = share > 0 && share < 1 && sinceFirst > 0 ? (sinceFirst / share) * (1 - share) : Number.NaN;
    if (this.options.deadline !== undefined && share < 1) {
      const budgetLeft = Math.max(0, (this.options.deadline - now) / 1000);
      left = Number.isFinite(left) ? Math.min(left, budgetLeft) : budgetLeft;
    }
    // Most useful first: a terminal too narrow cuts the end of the line.
    const text =
      `${progress.commits} commits, ${progress.leaves} leaves, ${rate.toFixed(0)} leaves/s` +
      (Number.isFinite(left) ? `, ${formatLeft(left)} left` : '') +
      `, at ${formatTimestamp(progress.cursor).slice(0, 19)}Z`;
    if (writeProgressLine(this.stream, this.tty, share, text)) this.drawn = true;
  }

  /** The share of the slice done, from 0 to 1. */
  private share(progress: Progress): number {
    const start = this.startTicks ?? progress.cursor;
    const span = Number(progress.upper - start);
    let share = span > 0 ? Number(progress.cursor - start) / span : 1;
    const { maxCommits, maxLeaves } = this.options;
    if (maxCommits !== undefined && maxCommits > 0) share = Math.max(share, progress.commits / maxCommits);
    if (maxLeaves !== undefined && maxLeaves > 0) share = Math.max(share, progress.leaves / maxLeaves);
    return Math.min(1, Math.max(0, share));
  }
}

/** `42 s`, `3 min 5 s`, `2 h 10 min`. */
export function formatLeft(seconds: number): string {
  const s = Math.ceil(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/**
 * Writes one progress line: on a terminal a bar redrawn in place (cut to the terminal's width, since a line that
 * wraps cannot be redrawn: `\r` returns only to the start of its last row), otherwise a plain line. Returns
 * whether it drew in place (the caller then ends the line before printing anything else).
 */
export function writeProgressLine(stream: NodeJS.WriteStream, tty: boolean, share: number, text: string): boolean {
  if (!tty) {
    stream.write(`progress: ${(share * 100).toFixed(0)}% ${text}\n`);
    return false;
  }
  const width = 20;
  const filled = Math.min(width, Math.floor(share * width));
  let line = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${Math.floor(share * 100)
    .toString()
    .padStart(3)}% ${text}`;
  const columns = stream.columns;
  if (columns !== undefined && columns > 1 && line.length > columns - 1) line = line.slice(0, columns - 1);
  stream.write(`\r${line}\u001b[K`);
  return true;
}
