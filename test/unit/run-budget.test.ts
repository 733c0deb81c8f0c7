/**
 * The run's stop signal joins the deadline and the caller's signal (Ctrl-C, SIGTERM); `interrupted()` tells which
 * stopped the run, so the summary says `interrupted` for a signal and `time-budget` for the deadline.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  CLOSING_MS,
  RUN_LOG_RESERVE_MS,
  startClosingWindow,
  startRunBudget,
  TimeBudgetReached,
} from '../../lambda/sync/run-budget.js';

describe('startRunBudget: which stop came first', () => {
  it("no deadline: the caller's signal is the stop, and interrupted once it fired", () => {
    const stop = new AbortController();
    const budget = startRunBudget(undefined, stop.signal);
    expect(budget.interrupted()).toBe(false);
    stop.abort();
    expect(budget.signal?.aborted).toBe(true);
    expect(budget.interrupted()).toBe(true);
  });

  it("a deadline not reached: the caller's signal stops the run, interrupted", () => {
    const stop = new AbortController();
    const budget = startRunBudget(Date.now() + 3_600_000, stop.signal);
    try {
      expect(budget.interrupted()).toBe(false);
      stop.abort();
      expect(budget.signal?.aborted).toBe(true);
      expect(budget.interrupted()).toBe(true);
    } finally {
      budget.release();
    }
  });

  it('a deadline reached first: time budget, even when a signal follows', () => {
    const stop = new AbortController();
    const budget = startRunBudget(Date.now() - 1, stop.signal);
    expect(budget.signal?.reason).toBeInstanceOf(TimeBudgetReached);
    expect(budget.interrupted()).toBe(false);
    stop.abort();
    expect(budget.interrupted()).toBe(false);
  });

  it("a deadline and no caller's signal (the Lambda): never interrupted", () => {
    const budget = startRunBudget(Date.now() - 1, undefined);
    expect(budget.signal?.aborted).toBe(true);
    expect(budget.interrupted()).toBe(false);
  });
});

describe('startClosingWindow: when the writes after the stop end', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('no deadline, no end, no signal: unbounded', () => {
    const window = startClosingWindow(undefined, undefined, undefined);
    expect(window.writes).toBeUndefined();
    expect(window.runLog).toBeUndefined();
  });

  it('a deadline: the checkpoints and the watermark end CLOSING_MS less a second after it, the run log CLOSING_MS after it', () => {
    vi.useFakeTimers({ now: 0 });
    const window = startClosingWindow(1_000, undefined, undefined);
    vi.advanceTimersByTime(1_000 + CLOSING_MS - RUN_LOG_RESERVE_MS - 1);
    expect(window.writes?.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(window.writes?.aborted).toBe(true);
    expect(window.runLog?.aborted).toBe(false);
    vi.advanceTimersByTime(RUN_LOG_RESERVE_MS);
    expect(window.runLog?.aborted).toBe(true);
  });

  it("the caller's end (the Lambda's) rules over the deadline's; a signal brings it nearer, never further", () => {
    vi.useFakeTimers({ now: 0 });
    const stop = new AbortController();
    const window = startClosingWindow(1_000, 30_000, stop.signal);
    vi.advanceTimersByTime(2_000);
    // Ctrl-C at 2 s: the writes end at 2 s + CLOSING_MS less the reserve, not at 29 s.
    stop.abort();
    vi.advanceTimersByTime(CLOSING_MS - RUN_LOG_RESERVE_MS);
    expect(window.writes?.aborted).toBe(true);
    expect(window.runLog?.aborted).toBe(false);
    window.release();
    // A signal whose CLOSING_MS reaches past the caller's end leaves that end.
    const late = new AbortController();
    const near = startClosingWindow(undefined, Date.now() + 2_000, late.signal);
    late.abort();
    vi.advanceTimersByTime(2_000);
    expect(near.runLog?.aborted).toBe(true);
    near.release();
  });
});
