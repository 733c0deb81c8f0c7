/** testkit/sequencer.ts: the known long test files start first, longest first; the others keep vitest's order. */
import { describe, expect, it } from 'vitest';
import { KNOWN_SECONDS, longestFirst } from '../../testkit/sequencer.js';

describe('longestFirst', () => {
  it('puts the known long files first, longest first, and keeps the order of the others', () => {
    // The longest known file and a shorter known one, whatever their measured seconds are today.
    const known = Object.entries(KNOWN_SECONDS).sort(([, a], [, b]) => b - a);
    const [longest] = known[0]!;
    const [shorter] = known.at(-1)!;
    expect(KNOWN_SECONDS[longest]!).toBeGreaterThan(KNOWN_SECONDS[shorter]!);
    const files = ['test/unit/a.test.ts', shorter, 'test/unit/b.test.ts', longest, 'test/unit/c.test.ts'];
    expect(longestFirst(files, (file) => file)).toEqual([
      longest,
      shorter,
      'test/unit/a.test.ts',
      'test/unit/b.test.ts',
      'test/unit/c.test.ts',
    ]);
  });

  it('knows only files that exist', async () => {
    const { existsSync } = await import('node:fs');
    const root = new URL('../../', import.meta.url);
    for (const path of Object.keys(KNOWN_SECONDS)) expect(existsSync(new URL(path, root)), path).toBe(true);
  });
});
