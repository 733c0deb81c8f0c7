/**
 * The differential of the project's version rules (lambda/contract/nuget-version.ts, identity.ts, version-order.ts)
 * against NuGet.Versioning 8.0.0 itself: every version of the catalog fixtures and of a generated catalog, the edge
 * cases, and 20,000 generated versions of the awkward kinds, with the identity of each (so that NuGet also says
 * which identities it reads). Any disagreement is printed with both answers (version-differential.ts).
 *
 * The edge cases' answers are recorded in test/fixtures/nuget-versioning/versions.json for the Node suite
 * (test/unit/nuget-version.test.ts), which holds the rules without dotnet; the first test keeps that record NuGet's.
 * `CATALOG_SYNC_RECORD_NUGET_VERSIONS=1 npm run test:interop -- version-rules` writes it anew.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { comparableVersion } from '../../lambda/contract/identity.js';
import { probeVersions } from './probe-kit.js';
import { asciiJson, versionDifferential } from './version-differential.js';
import { EDGE_CASES, fixtureVersions, generatedCatalogVersions, randomVersions } from './version-inputs.js';

const RECORD = fileURLToPath(new URL('../fixtures/nuget-versioning/versions.json', import.meta.url));
/** The generator's seed; `CATALOG_SYNC_TEST_SEED=n` tries another. */
const SEED = Number(process.env.CATALOG_SYNC_TEST_SEED ?? 33);
const GENERATED = 20_000;

const unique = (list: readonly string[]): string[] => [...new Set(list)];

describe('the version rules against NuGet.Versioning 8.0.0', () => {
  it("the answers recorded for the Node suite are NuGet's", async () => {
    const nuget = await probeVersions(EDGE_CASES);
    const record = {
      source:
        'NuGet.Versioning 8.0.0: NuGetVersion.TryParse, ToNormalizedString().ToLowerInvariant() (key), VersionComparer.Default (order: indexes of the valid inputs, ascending, equal ones grouped); by the probe of test/interop (version-rules.test.ts)',
      versions: EDGE_CASES.map((input, i) => {
        const answer = nuget.answers[i]!;
        return answer.valid ? { input, valid: true, key: answer.key } : { input, valid: false };
      }),
      order: nuget.order,
    };
    // One version and one order group a line: a change shows as the lines it touches.
    const text = `{"source": ${JSON.stringify(record.source)},\n"versions": [\n${record.versions.map((v) => asciiJson(v)).join(',\n')}\n],\n"order": [\n${record.order.map((g) => JSON.stringify(g)).join(',\n')}\n]}\n`;
    if (process.env.CATALOG_SYNC_RECORD_NUGET_VERSIONS === '1') writeFileSync(RECORD, text);
    expect(
      readFileSync(RECORD, 'utf8'),
      `${RECORD} is not NuGet's answer any more: CATALOG_SYNC_RECORD_NUGET_VERSIONS=1 writes it anew`,
    ).toBe(text);
  });

  it(`agree on the fixtures, a generated catalog, the edge cases and ${GENERATED} generated versions (seed ${SEED})`, async () => {
    const fixtures = fixtureVersions();
    expect(fixtures.length).toBeGreaterThan(10);
    const versions = unique([
      ...EDGE_CASES,
      ...fixtures,
      ...generatedCatalogVersions(),
      ...randomVersions(SEED, GENERATED),
    ]);
    const inputs = unique([...versions, ...versions.map(comparableVersion)]);
    const nuget = await probeVersions(inputs);
    const result = versionDifferential(inputs, nuget);
    console.log(
      `${result.inputs} inputs, ${result.validForNuGet} valid for NuGet, ${result.disagreements.length} disagreements`,
    );
    expect(result.validForNuGet).toBeGreaterThan(inputs.length / 2);
    expect(result.disagreements).toEqual([]);
  });
});
