/** The hedged write: a second one after the delay, the first success wins, failures are not hedged. Writes settle when the test says. */
import { describe, expect, it } from 'vitest';
import { hedged } from '../../lambda/sync/hedge.js';

/** A write the test settles by hand, and the calls made. */
function controlledWrites() {
  const calls: { resolve: () => void; reject: (error: Error) => void }[] = [];
  const write = (): Promise<void> => new Promise<void>((resolve, reject) => calls.push({ resolve, reject }));
  /** Resolves once `n` writes were started. */
  const started = async (n: number): Promise<void> => {
    while (calls.length < n) await new Promise((resolve) => setTimeout(resolve, 1));
  };
  return { write, calls, started };
}

describe('hedged', () => {
  it('a write that answers before the delay is sent once', async () => {
    const { write, calls } = controlledWrites();
    const result = hedged(write, 60_000);
    calls[0]!.resolve();
    await result;
    expect(calls).toHaveLength(1);
  });

  it('a slow write is sent again; the second one succeeding settles it, whatever the first does later', async () => {
    const { write, calls, started } = controlledWrites();
    const result = hedged(write, 0);
    await started(2);
    calls[1]!.resolve();
    await result;
    calls[0]!.reject(new Error('late failure of the first'));
    expect(calls).toHaveLength(2);
  });

  it('a write that fails before the delay is not hedged: its error is the result', async () => {
    const { write, calls } = controlledWrites();
    const result = hedged(write, 60_000);
    calls[0]!.reject(new Error('refused'));
    await expect(result).rejects.toThrow('refused');
    expect(calls).toHaveLength(1);
  });

  it("once hedged, one failure waits for the other write; both failing gives the first one's error", async () => {
    const { write, calls, started } = controlledWrites();
    const ok = hedged(write, 0);
    await started(2);
    calls[1]!.reject(new Error('second failed'));
    calls[0]!.resolve();
    await ok;

    const both = controlledWrites();
    const failing = hedged(both.write, 0);
    await both.started(2);
    both.calls[0]!.reject(new Error('first failed'));
    both.calls[1]!.reject(new Error('second failed'));
    await expect(failing).rejects.toThrow('first failed');
  });

  it('a write its server answered (its client retrying after SlowDown or a 5xx) is not hedged', async () => {
    const calls: { resolve: () => void }[] = [];
    const result = hedged(
      (answered) =>
        new Promise<void>((resolve) => {
          calls.push({ resolve });
          answered();
        }),
      0,
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(calls).toHaveLength(1);
    calls[0]!.resolve();
    await result;
  });
});
