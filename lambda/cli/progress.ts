import { formatTimestamp, type Ticks } from '../catalog/timestamp.js';
import type { Progress } from '../sync/engine.js';

/**
 * Shows a run's progress: a bar redrawn in place on a terminal, a plain line every few seconds otherwise.
 * The share done is measured in catalog time between the cursor at the start and the newest commit the run
 * may reach, because the number of leaves ahead is unknown until their pages are read.
 */
export class ProgressReporter {
  private startTicks: Ticks | undefined;
  private upper: Ticks | undefined;
  private startedAt = 0;
  private lastDraw = 0;
  private drawn = false;
  private readonly tty: boolean;

  constructor(
    private readonly stream: NodeJS.WriteStream,
    private readonly options: { enabled: boolean },
  ) {
    this.tty = stream.isTTY === true;
  }

  /** A run read the catalog head. */
  start(_head: Ticks): void {
    this.startTicks = undefined;
    this.startedAt = Date.now();
    this.lastDraw = 0;
  }

  /** A commit completed. */
  update(progress: Progress): void {
    if (!this.options.enabled) return;
    this.startTicks ??= progress.cursor;
    this.upper = progress.upper;
    const now = Date.now();
    if (now - this.lastDraw < (this.tty ? 100 : 5_000)) return;
    this.lastDraw = now;
    const elapsed = (now - this.startedAt) / 1000;
    const rate = elapsed > 0 ? progress.leaves / elapsed : 0;
    const span = Number(this.upper - this.startTicks);
    const share = span > 0 ? Math.min(1, Number(progress.cursor - this.startTicks) / span) : 1;
    const left = share > 0 ? (elapsed / share) * (1 - share) : Number.NaN;
    const text =
      `${progress.commits} commits, ${progress.leaves} leaves, ${rate.toFixed(0)} leaves/s, ` +
      `at ${formatTimestamp(progress.cursor).slice(0, 19)}Z` +
      (Number.isFinite(left) ? `, about ${Math.ceil(left)} s left` : '');
    if (this.tty) {
      const width = 24;
      const filled = Math.round(share * width);
      this.stream.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(share * 100).toFixed(0).padStart(3)}% ${text}\u001b[K`);
      this.drawn = true;
    } else {
      this.stream.write(`progress: ${text}\n`);
    }
  }

  /** The run ended: leave the terminal on a fresh line. */
  finish(): void {
    if (this.drawn) this.stream.write('\n');
    this.drawn = false;
  }
}
