/**
 * The run's stop signal joins the deadline and the caller's signal (Ctrl-C, SIGTERM); `interrupted()` tells which
 * stopped the run, so the summary says `interrupted` for a signal and `time-budget` for the deadline.
 */
import { describe, expect, it } from 'vitest';
import { startRunBudget, TimeBudgetReached } from '../../lambda/sync/run-budget.js';

describe('startRunBudget: which stop came first', () => {
  it('no deadline: the caller\'s signal is the stop, and interrupted once it fired', () => {
    const stop = new AbortController();
    const budget = startRunBudget(undefined, stop.signal);
    expect(budget.interrupted()).toBe(false);
    stop.abort();
    expect(budget.signal?.aborted).toBe(true);
    expect(budget.interrupted()).toBe(true);
  });

  it('a deadline not reached: the caller\'s signal stops the run, interrupted', () => {
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

  it('a deadline and no caller\'s signal (the Lambda): never interrupted', () => {
    const budget = startRunBudget(Date.now() - 1, undefined);
    expect(budget.signal?.aborted).toBe(true);
    expect(budget.interrupted()).toBe(false);
  });
});
