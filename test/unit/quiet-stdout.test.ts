/**
 * testkit/quiet-stdout.ts (a setup file of every test project): what a test's code writes to the worker's stdout or
 * stderr, as Powertools' own Console does, reaches the console that vitest intercepts, line by line, and a write's
 * callback is still called.
 */
import { describe, expect, it, vi } from 'vitest';

describe('writes to stdout and stderr during a test', () => {
  it('go through the console, without their last newline, and call their callback', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const written = new Promise<void>((resolve) =>
      process.stdout.write('{"level":"INFO","message":"run finished"}\n', () => resolve()),
    );
    process.stderr.write(Buffer.from('No application metrics to publish.\n'));
    await written;
    expect(log).toHaveBeenCalledWith('{"level":"INFO","message":"run finished"}');
    expect(error).toHaveBeenCalledWith('No application metrics to publish.');
  });
});
