/**
 * The upkeep's request budget (lambda/view/request-budget.ts, issue 32), hand-written, checked against a second
 * implementation that shares none of its code: a plain list model of a priority semaphore. Random submissions (each
 * with a priority) and completions; after each step, the tasks the budget has started must be the model's, in the
 * model's order, and never more than the limit in flight.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RequestPriority, requestBudget } from '../../lambda/view/request-budget.js';

type Step = { readonly submit: RequestPriority } | { readonly finish: number };

/** The model: a task starts at once when a slot is free, else waits; a freed slot goes to the waiting task of the lowest priority value, first come first. */
function modelStarts(limit: number, steps: readonly Step[]): number[][] {
  const running: number[] = [];
  const waiting: { id: number; priority: number }[] = [];
  const started: number[] = [];
  const after: number[][] = [];
  let next = 0;
  for (const step of steps) {
    if ('submit' in step) {
      const id = next++;
      if (running.length < limit) {
        running.push(id);
        started.push(id);
      } else waiting.push({ id, priority: step.submit });
    } else if (running.length > 0) {
      running.splice(step.finish % running.length, 1);
      if (waiting.length > 0) {
        let best = 0;
        for (let i = 1; i < waiting.length; i++) if (waiting[i]!.priority < waiting[best]!.priority) best = i;
        const [chosen] = waiting.splice(best, 1);
        running.push(chosen!.id);
        started.push(chosen!.id);
      }
    }
    after.push([...started]);
  }
  return after;
}

const settle = async (): Promise<void> => {
  for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
};

describe('the view upkeep request budget', () => {
  it('starts tasks as a priority semaphore does: within the limit, by priority, first come first', async () => {
    const priorities = Object.values(RequestPriority);
    const step = fc.oneof(
      fc.constantFrom(...priorities).map((submit): Step => ({ submit })),
      fc.nat(100).map((finish): Step => ({ finish })),
    );
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 4 }), fc.array(step, { maxLength: 40 }), async (limit, steps) => {
        const budget = requestBudget(limit);
        const started: number[] = [];
        // In the order the model keeps running tasks: the finish step picks one by its position.
        const running: { id: number; done: () => void }[] = [];
        let inFlight = 0;
        let most = 0;
        let next = 0;
        const expected = modelStarts(limit, steps);
        for (const [n, s] of steps.entries()) {
          if ('submit' in s) {
            const id = next++;
            void budget(s.submit, () => {
              started.push(id);
              most = Math.max(most, ++inFlight);
              return new Promise<void>((resolve) =>
                running.push({
                  id,
                  done: () => {
                    inFlight--;
                    resolve();
                  },
                }),
              );
            });
          } else if (running.length > 0) {
            running.splice(s.finish % running.length, 1)[0]!.done();
          }
          await settle();
          expect(started).toEqual(expected[n]);
        }
        expect(most).toBeLessThanOrEqual(limit);
        for (const task of running.splice(0)) task.done();
      }),
      { numRuns: 100 },
    );
  });
});
