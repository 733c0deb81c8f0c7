import type { BackfillPlan } from '../../contract/index.js';
import type { RangeOutcome } from '../index.js';
import { formatLeft, writeProgressLine } from '../../sync/cli/progress.js';

/**
 * Shows a backfill's progress on stderr: ranges done of the plan's, leaves stored, leaves per second and time
 * left (from the plan's leaf estimate). On a terminal a bar redrawn in place; otherwise one line per event
 * (planned, each range done, a failed attempt, finishing) and a progress line every 5 s, so a log (or a test)
 * can follow it.
 */
export class BackfillProgress {
  private readonly tty: boolean;
  private readonly inFlight = new Map<number, number>();
  private rangesDone = 0;
  private leavesDone = 0;
  /** Leaves of ranges already done when this process started: not part of its rate. */
  private leavesBefore = 0;
  private startedAt = Date.now();
  private lastDraw = 0;
  private drawn = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly stream: NodeJS.WriteStream,
    private readonly enabled: boolean,
    private readonly plan: BackfillPlan,
  ) {
    this.tty = stream.isTTY === true;
  }

  /** The plan is in hand; `done` are its ranges already done (a resumed plan), with the leaves they stored. */
  planned(resumed: boolean, done: number, leaves: number): void {
    this.rangesDone = done;
    this.leavesDone = leaves;
    this.leavesBefore = leaves;
    this.startedAt = Date.now();
    const { plan } = this;
    this.line(
      `backfill ${plan.backfillId} ${resumed ? 'resumed' : 'planned'}: ${plan.ranges} ranges, about ${plan.leaves} leaves, ` +
        `${plan.start} -> ${plan.bound}${done > 0 ? `, ${done} ranges already done` : ''}`,
    );
    if (this.enabled) this.timer = setInterval(() => this.draw(), this.tty ? 250 : 5_000).unref();
  }

  onProgress(n: number, leaves: number): void {
    this.inFlight.set(n, leaves);
    if (this.tty && Date.now() - this.lastDraw >= 100) this.draw();
  }

  onRangeDone(outcome: RangeOutcome): void {
    this.inFlight.delete(outcome.n);
    this.rangesDone++;
    this.leavesDone += outcome.totals.leaves;
    if (!this.tty)
      this.line(
        `range ${outcome.n} done${outcome.skipped ? ' (already)' : ''}: ${this.rangesDone}/${this.plan.ranges} ranges, ${this.leaves()} leaves`,
      );
    else this.draw();
  }

  onRangeFailed(n: number, attempt: number, message: string): void {
    this.inFlight.delete(n);
    this.line(`range ${n} attempt ${attempt} failed: ${message}`);
  }

  /** Prints a line of its own (on a terminal, over the bar, which is then redrawn). */
  line(text: string): void {
    if (!this.enabled) return;
    if (this.drawn) this.stream.write('\r\u001b[K');
    this.drawn = false;
    this.stream.write(`${text}\n`);
  }

  /** The workers are done (or stopped): leave the terminal on a fresh line. */
  finish(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.tty && this.enabled) this.draw();
    if (this.drawn) this.stream.write('\n');
    this.drawn = false;
  }

  private leaves(): number {
    let leaves = this.leavesDone;
    for (const inFlight of this.inFlight.values()) leaves += inFlight;
    return leaves;
  }

  private draw(): void {
    if (!this.enabled) return;
    const now = Date.now();
    this.lastDraw = now;
    const { plan } = this;
    const leaves = this.leaves();
    const elapsed = (now - this.startedAt) / 1000;
    const rate = elapsed > 0 ? (leaves - this.leavesBefore) / elapsed : 0;
    const share =
      plan.ranges === 0
        ? 1
        : Math.min(1, Math.max(this.rangesDone / plan.ranges, plan.leaves > 0 ? leaves / plan.leaves : 0));
    const left = rate > 0 && plan.leaves > leaves ? (plan.leaves - leaves) / rate : Number.NaN;
    const text =
      `${this.rangesDone}/${plan.ranges} ranges, ${leaves} leaves, ${rate.toFixed(0)} leaves/s` +
      (Number.isFinite(left) && share < 1 ? `, ${formatLeft(left)} left` : '');
    if (writeProgressLine(this.stream, this.tty, share, text)) this.drawn = true;
  }
}
