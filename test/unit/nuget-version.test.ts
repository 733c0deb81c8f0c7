/**
 * The project's version rules against NuGet.Versioning 8.0.0's own answers, without dotnet: the answers recorded by
 * the interoperability suite's probe for its edge cases (test/fixtures/nuget-versioning/versions.json, kept equal to
 * NuGet's by test/interop/version-rules.test.ts, which also runs the full differential), and one test for each kind
 * of disagreement that differential found in the rules before (issue 33).
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { comparableVersion, normalizeVersion } from '../../lambda/contract/identity.js';
import { parseNuGetVersion } from '../../lambda/contract/nuget-version.js';
import { compareVersions } from '../../lambda/contract/version-order.js';

interface Recorded {
  versions: ({ input: string; valid: true; key: string } | { input: string; valid: false })[];
  order: number[][];
}

const recorded = JSON.parse(
  readFileSync(new URL('../fixtures/nuget-versioning/versions.json', import.meta.url), 'utf8'),
) as Recorded;
const sign = (n: number): number => Math.sign(n);

describe("the version rules hold NuGet.Versioning 8.0.0's recorded answers", () => {
  it.each(recorded.versions.map((v) => [JSON.stringify(v.input), v] as const))('%s', (_, answer) => {
    expect(parseNuGetVersion(answer.input) !== undefined, 'read by NuGet').toBe(answer.valid);
    if (answer.valid) expect(comparableVersion(answer.input)).toBe(answer.key);
  });

  it('orders them as VersionComparer.Default, equal ones apart only by identity', () => {
    const groups = recorded.order.map((group) => group.map((i) => recorded.versions[i]!.input));
    for (let g = 0; g < groups.length; g++) {
      for (const a of groups[g]!) {
        for (const b of groups[g]!)
          expect(compareVersions(a, b) === 0, `${JSON.stringify(a)} ~ ${JSON.stringify(b)}`).toBe(
            comparableVersion(a) === comparableVersion(b),
          );
        for (const b of groups[g + 1] ?? [])
          expect(compareVersions(a, b), `${JSON.stringify(a)} < ${JSON.stringify(b)}`).toBeLessThan(0);
      }
    }
  });
});

describe('each kind of disagreement with NuGet, fixed', () => {
  it('trims white space around a version and its numbers, as .NET does (U+0085 and U+3000, not U+FEFF)', () => {
    for (const [input, key] of [
      [' 1.0.0', '1.0.0'],
      ['1.0.0 ', '1.0.0'],
      ['\t1.0\n', '1.0.0'],
      ['1 . 0', '1.0.0'],
      ['1.0.0 -Beta', '1.0.0-beta'],
      ['1.0.0 +meta', '1.0.0'],
      ['\u00851.0', '1.0.0'],
      ['\u00a01.0.0\u3000', '1.0.0'],
    ]) {
      expect(normalizeVersion(input!), JSON.stringify(input)).toBe(key);
      expect(compareVersions(input!, key!)).toBe(0);
    }
    // Refused by NuGet: inside a label, and characters .NET does not count as white space. The loose rule keeps them.
    for (const input of ['1.0.0- beta', '\ufeff1.0', '1.0\u200b'])
      expect(parseNuGetVersion(input), JSON.stringify(input)).toBeUndefined();
    expect(normalizeVersion('\ufeff1.0')).toBe('\ufeff1.0');
  });

  it('compares a numeric label beyond a 32-bit int as text, as NuGet does', () => {
    // Ordinal: "10000000000" < "2147483648"; a number that fits comes before any text; digits before letters.
    const chain = ['1.0.0-a.2147483647', '1.0.0-a.10000000000', '1.0.0-a.2147483648', '1.0.0-a.b'];
    for (let i = 0; i < chain.length; i++)
      for (let j = 0; j < chain.length; j++)
        expect(sign(compareVersions(chain[i]!, chain[j]!)), `${chain[i]} vs ${chain[j]}`).toBe(sign(i - j));
    expect(compareVersions('0-0a.z', '0.0-2147483648')).toBeLessThan(0);
    expect(compareVersions('1.0.0-ci.202301011234', '1.0.0-ci.20230101123456')).toBeLessThan(0);
  });

  it('compares a label with a sign as a number (-1 < 0), and orders NuGet-equal labels by identity', () => {
    expect(compareVersions('1.0.0-a.-1', '1.0.0-a.0')).toBeLessThan(0);
    expect(compareVersions('1.0.0--1', '1.0.0-0')).toBeLessThan(0);
    expect(compareVersions('1.0.0-a.-2147483648', '1.0.0-a.-1')).toBeLessThan(0);
    // -2147483649 does not fit: text, after every number.
    expect(compareVersions('1.0.0-a.-2147483649', '1.0.0-a.2147483647')).toBeGreaterThan(0);
    // NuGet holds 0, -0 and -00 equal (and -01 equal to -1); their identities differ, so the order is still total.
    expect(['1.0.0-a.-00', '1.0.0-a.0', '1.0.0-a.-0'].sort(compareVersions)).toEqual([
      '1.0.0-a.-0',
      '1.0.0-a.-00',
      '1.0.0-a.0',
    ]);
    expect(compareVersions('1.0.0-a.-01', '1.0.0-a.-1')).not.toBe(0);
    expect(compareVersions('1.0.0-a.-01', '1.0.0-a.-2')).toBeGreaterThan(0);
  });

  it('refuses what NuGet refuses, keeps its key, and orders it after every version NuGet reads', () => {
    for (const [input, key] of [
      ['1.0.0-01', '1.0.0-01'],
      ['1.0.0-a.01', '1.0.0-a.01'],
      ['2147483648.0.0', '2147483648.0.0'],
      ['01.0-Be_ta', '1.0.0-be_ta'],
      ['1.0.0.0.0', '1.0.0.0.0'],
    ]) {
      expect(parseNuGetVersion(input!), input).toBeUndefined();
      expect(normalizeVersion(input!)).toBe(key);
      expect(compareVersions(input!, '2147483647.2147483647.2147483647.2147483647'), input).toBeGreaterThan(0);
    }
    expect(['2147483649.0.0', '1.0.0-01', '99999999999999999999.0.0', '0.0.1'].sort(compareVersions)).toEqual([
      '0.0.1',
      '1.0.0-01',
      '2147483649.0.0',
      '99999999999999999999.0.0',
    ]);
    // Refused only for its build metadata: the identity is a version NuGet reads, and the version sorts as it.
    for (const input of ['1.0.0+meta+more', '1.0.0+', '1.0.0+x_y']) {
      expect(parseNuGetVersion(input), input).toBeUndefined();
      expect(normalizeVersion(input)).toBe('1.0.0');
      expect(compareVersions(input, '1.0.0')).toBe(0);
    }
  });

  it('the identity of an identity is itself, and a version sorts as its identity (any string)', () => {
    const characters = fc.constantFrom(
      ...'0123456789.-+ aAbBzZ_\t\n\u0085\u00a0\u3000\ufeff\u212a',
      '2147483648',
      '-1',
      '01',
    );
    fc.assert(
      fc.property(
        fc.array(characters, { maxLength: 14 }).map((parts) => parts.join('')),
        (version) => {
          const identity = comparableVersion(version);
          expect(comparableVersion(identity)).toBe(identity);
          expect(compareVersions(version, identity)).toBe(0);
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
