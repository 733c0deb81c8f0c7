/**
 * Version strings for the differential of the project's version rules against NuGet.Versioning
 * (version-rules.test.ts): hand-picked edge cases (recorded with NuGet's answers in
 * test/fixtures/nuget-versioning/versions.json for the Node suite), every version the catalog fixtures and a
 * generated catalog hold, and a seeded generator of the awkward kinds (leading zeros, four and five parts, numbers
 * around 2^31, signed and huge numeric labels, mixed case, build metadata, .NET's and JavaScript's white space,
 * characters NuGet refuses, garbage).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateCatalog } from '../../testkit/catalog-generator.js';
import { mulberry32, type Prng } from '../../testkit/prng.js';

const FIXTURES = fileURLToPath(new URL('../fixtures', import.meta.url));
/** The catalog documents among the fixtures (the rest are not catalog data). */
const CATALOG_FIXTURES = ['NuGetGallery', 'docs.microsoft.com-nuget'];

/** Hand-picked cases, one or more of each kind of disagreement found and of every rule of NuGet's parser. */
export const EDGE_CASES: readonly string[] = [
  // Numbers: one to four parts, leading zeros, a zero fourth part, int bounds, five parts, empty parts.
  '1',
  '1.0',
  '1.0.0',
  '1.0.0.0',
  '1.0.0.1',
  '01.0',
  '1.00.000.0000',
  '001.002.003.000',
  '1.2.3.4',
  '0.0.0',
  '0.0.0.0',
  '2147483647.0.0',
  '2147483648.0.0',
  '1.2147483647.0.2147483647',
  '99999999999999999999.0.0',
  '1.0.0.0.0',
  '1..0',
  '1.',
  '.1',
  '-1',
  '',
  // White space: trimmed by NuGet (.NET's set: U+0085 and U+3000 yes, U+FEFF and U+200B no), and around numbers.
  ' 1.0.0',
  '1.0.0 ',
  '\t1.0\n',
  '\r\n1.0.0\r\n',
  '1 . 0',
  '1.0 .0.0 ',
  '1.0.0 -beta',
  '1.0.0- beta',
  '1.0.0 +meta',
  '1.0.0-beta +meta',
  '\u00851.0',
  '\u00a01.0.0\u3000',
  '\u20281.0\u2029',
  '\ufeff1.0',
  '1.0\u200b',
  ' ',
  '1 0',
  // Labels: SemVer 2.0.0's precedence examples, case, hyphens, leading zeros, empty parts.
  '1.0.0-alpha',
  '1.0.0-alpha.1',
  '1.0.0-alpha.beta',
  '1.0.0-beta',
  '1.0.0-beta.2',
  '1.0.0-beta.11',
  '1.0.0-rc.1',
  '1.0.0-RC.1',
  '1.0.0-Rc.1',
  '1.0.0-ALPHA',
  '1.0.0-a-b',
  '1.0.0--',
  '1.0.0-0',
  '1.0.0-00',
  '1.0.0-01',
  '1.0.0-0a',
  '1.0.0-x.01',
  '1.0.0-x.1',
  '1.0.0-a.01',
  '1.0.0-',
  '1.0.0-a..b',
  '1.0.0-a.',
  '1.0.0-.a',
  '1.0.0-be_ta',
  '1.0.0-ı',
  '1.0.0-İ',
  '1.0.0-ß',
  '1.0.0-\u212a',
  '1.0.0-k',
  '1.0.0-beta.2.ω',
  '1.0.0.0-beta',
  '1.0.0-preview1-00258',
  // Numeric labels: over Int32 they are text for NuGet; a sign makes a number.
  '1.0.0-a.2147483647',
  '1.0.0-a.2147483648',
  '1.0.0-a.9999999999',
  '1.0.0-a.10000000000',
  '1.0.0-a.b',
  '0-0a.z',
  '0.0-2147483648',
  '1.0.0-ci.20230101123456',
  '1.0.0-ci.202301011234',
  '1.0.0-ci.99',
  '1.0.0-ci.a',
  '1.0.0-a.-1',
  '1.0.0-a.0',
  '1.0.0-a.-0',
  '1.0.0-a.-00',
  '1.0.0-a.-01',
  '1.0.0--1',
  '1.0.0-a.-2147483648',
  '1.0.0-a.-2147483649',
  // Build metadata: removed from the identity; NuGet refuses a second `+`, an empty part, other characters.
  '1.0.0+build',
  '1.0.0+BUILD',
  '1.0.0-rc.1+Build.5',
  '1.0.0+meta+more',
  '1.0.0+',
  '1.0.0-a+',
  '1.0.0+a..b',
  '1.0.0+-a',
  '1.0.0-+a',
  '1.0.0-a-+b',
  '1.0.0+x_y',
  '1.0.0-alpha+001',
  '1.0.0+20130313144700',
  '1.0.0-beta+exp.sha.5114f85',
  '3.1.0-RC.1+sha.5',
  '+build',
  '+',
  // Not versions.
  'v1.0.0',
  'V1.0+X',
  '1.A.0',
  '-Beta',
  'not-a-version',
];

/** Every `version`, `verbatimVersion` and `nuget:version` in the catalog fixtures. */
export function fixtureVersions(): string[] {
  const found = new Set<string>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value !== null && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) {
        if ((key === 'version' || key === 'verbatimVersion' || key === 'nuget:version') && typeof inner === 'string')
          found.add(inner);
        else walk(inner);
      }
    }
  };
  const visit = (path: string): void => {
    if (statSync(path).isDirectory()) for (const name of readdirSync(path).sort()) visit(join(path, name));
    else if (path.endsWith('.json')) walk(JSON.parse(readFileSync(path, 'utf8').replace(/^\uFEFF/, '')));
  };
  for (const folder of CATALOG_FIXTURES) visit(join(FIXTURES, folder));
  return [...found];
}

/** Every version of a generated catalog with SemVer 2.0.0 versions and non-normalized deletes. */
export function generatedCatalogVersions(): string[] {
  const catalog = generateCatalog({
    commits: 400,
    seed: 33,
    semver2Ratio: 0.4,
    deleteRatio: 0.2,
    nonNormalizedDeleteRatio: 0.5,
  });
  return [...new Set(catalog.commits.flatMap((commit) => commit.leaves.map((leaf) => leaf.version)))];
}

const SPACES = [' ', '\t', '\n', '\r\n', '\u00a0', '\u0085', '\u3000', '\u2028', '\ufeff', '\u200b', '\u180e'];
const WORDS = [
  'alpha',
  'Beta',
  'RC',
  'rc',
  'preview',
  'Preview',
  'ci',
  'dev',
  'a',
  'Z',
  'x-y',
  '-',
  '--',
  '0a',
  'a0',
  'final',
];
const SIGNED = ['-1', '-0', '-00', '-01', '-2147483648', '-2147483649', '-10000000000'];
const HUGE = [
  '2147483647',
  '2147483648',
  '4294967296',
  '9999999999',
  '10000000000',
  '20230101123456',
  '99999999999999999999',
];
const REFUSED = ['be_ta', 'ß', 'İ', 'ı', '\u212a', 'é', '', 'a b', 'a+b', '*'];
const GARBAGE = [
  '',
  '.',
  '-',
  '+',
  '1.',
  '.1',
  '1..0',
  'v1.0',
  'V1',
  'latest',
  '1.0.0.0.0',
  '1,0',
  '[1.0]',
  '1.0-',
  '١.٠',
];

function number(prng: Prng): string {
  const roll = prng.next();
  if (roll < 0.6) return String(prng.int(0, 12));
  if (roll < 0.75) return `${'0'.repeat(prng.int(1, 3))}${prng.int(0, 99)}`;
  if (roll < 0.85) return prng.pick(HUGE);
  return String(prng.int(0, 1_000_000));
}

function label(prng: Prng): string {
  const roll = prng.next();
  if (roll < 0.35) return prng.pick(WORDS);
  if (roll < 0.55) return String(prng.int(0, 30));
  if (roll < 0.65) return prng.pick(HUGE);
  if (roll < 0.75) return prng.pick(SIGNED);
  if (roll < 0.82) return `0${prng.int(0, 9)}`;
  if (roll < 0.9) return prng.pick(REFUSED);
  return `${prng.pick(WORDS)}${prng.int(0, 99)}`;
}

/** A random letter case, so that case-insensitive rules meet every spelling. */
function mixCase(prng: Prng, text: string): string {
  return prng.chance(0.3)
    ? [...text].map((c) => (prng.chance(0.5) ? c.toUpperCase() : c.toLowerCase())).join('')
    : text;
}

/** One generated version: mostly versions NuGet reads, with each awkward kind now and then. */
function randomVersion(prng: Prng): string {
  if (prng.chance(0.04)) return prng.pick(GARBAGE);
  const parts = Array.from({ length: prng.pick([1, 2, 3, 3, 3, 4, 4, 5]) }, () => number(prng));
  let version = parts.join(prng.chance(0.03) ? prng.pick([' . ', '. ', ' .', '..']) : '.');
  if (prng.chance(0.55))
    version += `${prng.chance(0.03) ? ' ' : ''}-${Array.from({ length: prng.int(1, 4) }, () => label(prng)).join('.')}`;
  if (prng.chance(0.2))
    version += `+${Array.from({ length: prng.int(1, 3) }, () => (prng.chance(0.1) ? prng.pick(REFUSED) : prng.pick(WORDS.concat(['sha', '001', 'Build'])))).join('.')}`;
  version = mixCase(prng, version);
  if (prng.chance(0.06)) version = `${prng.pick(SPACES)}${version}`;
  if (prng.chance(0.06)) version = `${version}${prng.pick(SPACES)}`;
  return version;
}

/** `count` generated versions from `seed` (the same seed, the same list). */
export function randomVersions(seed: number, count: number): string[] {
  const prng = mulberry32(seed);
  return Array.from({ length: count }, () => randomVersion(prng));
}
