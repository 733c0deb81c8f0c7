/**
 * testkit/sequencer.ts: the files of one project together (vitest keeps a worker for the next file only when it is
 * of the same project); in each project the known long test files first, longest first; the others keep vitest's order.
 */
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

  it('keeps the files of a project together, the project with the longest known file first', () => {
    const known = Object.entries(KNOWN_SECONDS).sort(([, a], [, b]) => b - a);
    const [longest] = known[0]!;
    const [shorter] = known.at(-1)!;
    const one = new Set([shorter, 'test/unit/x1.test.ts', 'test/unit/x2.test.ts']);
    const project = (file: string): string => (one.has(file) ? 'one' : 'two');
    const files = ['test/unit/a.test.ts', shorter, 'test/unit/x1.test.ts', longest, 'test/unit/x2.test.ts'];
    // Longest first alone gives longest, shorter, a, x1, x2: the project changes after each of the first three.
    expect(longestFirst(files, (file) => file)).toEqual([
      longest,
      shorter,
      'test/unit/a.test.ts',
      'test/unit/x1.test.ts',
      'test/unit/x2.test.ts',
    ]);
    expect(longestFirst(files, (file) => file, project)).toEqual([
      longest,
      'test/unit/a.test.ts',
      shorter,
      'test/unit/x1.test.ts',
      'test/unit/x2.test.ts',
    ]);
  });

  it('knows only files that exist', async () => {
    const { existsSync } = await import('node:fs');
    const root = new URL('../../', import.meta.url);
    for (const path of Object.keys(KNOWN_SECONDS)) expect(existsSync(new URL(path, root)), path).toBe(true);
  });
});
