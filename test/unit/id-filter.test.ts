/**
 * The id filter's globs against a second implementation that shares none of our code (Node's own
 * `path.matchesGlob`, on ids that hold no `/`), and the rules of include/exclude, refilter widening and settings.
 */
import { matchesGlob } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { idFilterOf, keepsId, sameIdFilter, widens } from '../../lambda/contract/id-filter.js';
import { parseSettings, SettingsError } from '../../lambda/contract/settings.js';

const idChar = fc.constantFrom('a', 'b', 'A', 'B', '.', '-', '_', '1');
const id = fc
  .tuple(fc.constantFrom('a', 'B', 'c'), fc.array(idChar, { maxLength: 8 }))
  .map(([first, rest]) => first + rest.join(''));
const pattern = fc
  .array(fc.constantFrom('a', 'B', '.', '-', '_', '1', '*', '?'), { minLength: 1, maxLength: 6 })
  .map((chars) => chars.join(''));

describe('id globs', () => {
  it('match as path.matchesGlob does, case-insensitively', () => {
    fc.assert(
      fc.property(id, pattern, (candidate, glob) => {
        const filter = idFilterOf([glob], [])!;
        expect(keepsId(filter, candidate)).toBe(matchesGlob(candidate.toLowerCase(), glob.toLowerCase()));
      }),
      { numRuns: 2_000 },
    );
  });

  it('keep an id matching an include (or with none) and no exclude', () => {
    const filter = idFilterOf(['Newtonsoft.*', 'xunit'], ['*.Tests'])!;
    expect(keepsId(filter, 'newtonsoft.json')).toBe(true);
    expect(keepsId(filter, 'XUnit')).toBe(true);
    expect(keepsId(filter, 'Newtonsoft.Json.Tests')).toBe(false);
    expect(keepsId(filter, 'NUnit')).toBe(false);
    expect(keepsId(idFilterOf([], ['x?'])!, 'xy')).toBe(false);
    expect(keepsId(idFilterOf([], ['x?'])!, 'xyz')).toBe(true);
    expect(keepsId(undefined, 'anything')).toBe(true);
    expect(idFilterOf([], [])).toBeUndefined();
  });

  it('are canonical: lower case, no duplicates, sorted; widening decided on the patterns', () => {
    expect(sameIdFilter(idFilterOf(['B*', 'a*', 'A*'], []), idFilterOf(['a*', 'b*'], []))).toBe(true);
    const ab = idFilterOf(['a*', 'b*'], []);
    expect(widens(ab, idFilterOf(['a*'], []))).toBe(false);
    expect(widens(ab, idFilterOf(['a*', 'c*'], []))).toBe(true);
    expect(widens(ab, undefined)).toBe(true);
    expect(widens(undefined, ab)).toBe(false);
    expect(widens(idFilterOf([], ['x*']), idFilterOf([], []))).toBe(true);
    expect(widens(idFilterOf([], ['x*']), idFilterOf([], ['x*', 'y*']))).toBe(false);
  });

  it('come from INCLUDE_IDS / EXCLUDE_IDS; a bad pattern names its variable', () => {
    expect(parseSettings({ INCLUDE_IDS: 'Newtonsoft.*, xunit*', EXCLUDE_IDS: '*.Tests' }).idFilter).toEqual({
      include: ['newtonsoft.*', 'xunit*'],
      exclude: ['*.tests'],
    });
    expect(parseSettings({}).idFilter).toBeUndefined();
    expect(() => parseSettings({ EXCLUDE_IDS: 'a/b' })).toThrow(SettingsError);
    expect(() => parseSettings({ EXCLUDE_IDS: 'a/b' })).toThrow(/^EXCLUDE_IDS: "a\/b" is not an id pattern/);
    expect(() => parseSettings({ INCLUDE_IDS: 'x'.repeat(201) })).toThrow(/^INCLUDE_IDS: /);
  });
});
