/**
 * The order of versions in the latest view, against published vectors that share none of our code: the SemVer
 * 2.0.0 specification's precedence examples (semver.org, item 11) and NuGet.Versioning's comparer tests
 * (NuGet.Client `VersionComparerTests`: four parts, case-insensitive labels, build metadata ignored). NuGet's own
 * answers on edge cases are in nuget-version.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareVersions } from '../../lambda/contract/version-order.js';

const sign = (n: number): number => Math.sign(n);

describe('compareVersions', () => {
  it("orders the SemVer 2.0.0 specification's precedence examples", () => {
    // semver.org item 11: 1.0.0 < 2.0.0 < 2.1.0 < 2.1.1, and the prerelease chain.
    const chain = [
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-alpha.beta',
      '1.0.0-beta',
      '1.0.0-beta.2',
      '1.0.0-beta.11',
      '1.0.0-rc.1',
      '1.0.0',
      '2.0.0',
      '2.1.0',
      '2.1.1',
    ];
    for (let i = 0; i < chain.length; i++) {
      for (let j = 0; j < chain.length; j++)
        expect(sign(compareVersions(chain[i]!, chain[j]!)), `${chain[i]} vs ${chain[j]}`).toBe(sign(i - j));
    }
    expect([...chain].reverse().sort(compareVersions)).toEqual(chain);
  });

  it('follows NuGet: four parts, case-insensitive labels, build metadata ignored', () => {
    // Equal in NuGet.Versioning's VersionComparer.Default (VersionComparerTests.VersionComparisonDefaultEqual).
    for (const [a, b] of [
      ['1.0.0', '1.0.0.0'],
      ['1.0.0-BETA', '1.0.0-beta'],
      ['1.0.0-beta+AA', '1.0.0-beta+BB'],
      ['1.0', '1.0.0'],
      ['01.0.0', '1.0.0'],
    ]) {
      expect(compareVersions(a!, b!), `${a} = ${b}`).toBe(0);
    }
    // Ordered (VersionComparisonDefaultLess): the fourth part counts; numeric labels before alphanumeric.
    for (const [a, b] of [
      ['1.0.0', '1.0.0.1'],
      ['1.0.0.1', '1.0.1'],
      ['1.0.0-1', '1.0.0-a'],
      ['1.0.0-a.2', '1.0.0-a.10'],
      ['0.0.0-alpha', '0.0.0'],
      ['1.0.0-beta.1', '1.0.0-beta.1.1'],
      ['9.0.0', '10.0.0'],
      ['2147483646.0.0', '2147483647.0.0'],
    ]) {
      expect(compareVersions(a!, b!), `${a} < ${b}`).toBeLessThan(0);
      expect(compareVersions(b!, a!), `${b} > ${a}`).toBeGreaterThan(0);
    }
  });

  it('puts versions NuGet cannot parse last, and is a total order', () => {
    expect(compareVersions('not-a-version', '999.0.0')).toBeGreaterThan(0);
    // Beyond a 32-bit int NuGet refuses a number: last, ordinally among themselves.
    expect(compareVersions('99999999999999999999.0.0', '2147483647.0.0')).toBeGreaterThan(0);
    const version = fc.oneof(
      fc
        .tuple(
          fc.nat(20),
          fc.nat(20),
          fc.nat(20),
          fc.option(fc.nat(3)),
          fc.option(
            fc.array(fc.oneof(fc.nat(12).map(String), fc.constantFrom('alpha', 'Beta', 'rc', '01')), {
              minLength: 1,
              maxLength: 3,
            }),
          ),
        )
        .map(
          ([a, b, c, d, label]) =>
            `${a}.${b}.${c}${d === null ? '' : `.${d}`}${label === null ? '' : `-${label.join('.')}`}`,
        ),
      fc.constantFrom('x', '1.2.3.4.5', ''),
    );
    fc.assert(
      fc.property(version, version, version, (a, b, c) => {
        expect(sign(compareVersions(a, b)) + sign(compareVersions(b, a))).toBe(0);
        if (compareVersions(a, b) <= 0 && compareVersions(b, c) <= 0)
          expect(compareVersions(a, c)).toBeLessThanOrEqual(0);
      }),
    );
  });
});
