/**
 * Leaf documents of generated catalogs, modeled on nuget.org's (see the NuGetGallery fixtures):
 * same property names and order, pretty-printed with two spaces, JSON-LD `@context` included.
 *
 * Bodies derive only from the commit id and the leaf path, so every request gets the same bytes.
 * Some bodies carry things a client must pass through untouched: non-ASCII text, an unknown
 * property, and a number written as `1.50` (which `JSON.stringify` would never produce, so a
 * client that re-serializes instead of storing the bytes is caught).
 */
import type { GeneratedCommit, GeneratedLeaf } from './generated-commit.js';
import { formatTicks, parseTicks, TICKS_PER_SECOND } from './catalog-time.js';
import { packageDigest } from './nupkg.js';
import { hashSeed, mulberry32, type Prng } from './prng.js';

const DETAILS_CONTEXT = {
  '@vocab': 'http://schema.nuget.org/schema#',
  catalog: 'http://schema.nuget.org/catalog#',
  xsd: 'http://www.w3.org/2001/XMLSchema#',
  dependencies: { '@id': 'dependency', '@container': '@set' },
  dependencyGroups: { '@id': 'dependencyGroup', '@container': '@set' },
  packageEntries: { '@id': 'packageEntry', '@container': '@set' },
  packageTypes: { '@id': 'packageType', '@container': '@set' },
  supportedFrameworks: { '@id': 'supportedFramework', '@container': '@set' },
  tags: { '@id': 'tag', '@container': '@set' },
  vulnerabilities: { '@id': 'vulnerability', '@container': '@set' },
  published: { '@type': 'xsd:dateTime' },
  created: { '@type': 'xsd:dateTime' },
  lastEdited: { '@type': 'xsd:dateTime' },
  'catalog:commitTimeStamp': { '@type': 'xsd:dateTime' },
  reasons: { '@container': '@set' },
};

const DELETE_CONTEXT = {
  '@vocab': 'http://schema.nuget.org/schema#',
  catalog: 'http://schema.nuget.org/catalog#',
  xsd: 'http://www.w3.org/2001/XMLSchema#',
  details: 'catalog:details',
  'catalog:commitTimeStamp': { '@type': 'xsd:dateTime' },
  published: { '@type': 'xsd:dateTime' },
  categories: { '@container': '@set' },
  entries: { '@container': '@set' },
  links: { '@container': '@set' },
  tags: { '@container': '@set' },
  packageContent: { '@type': '@id' },
};

const AUTHORS = ['NuGet.org Team', 'James Newton-King', 'Contoso Ltd.', 'Jörg Müller', 'Fabrikam Engineering'];
const DESCRIPTIONS = [
  'Package description.',
  'A small library for the V3 protocol tests.',
  'Bibliothèque de paiements — für Zahlungen ✓',
  'Utilities for working with JSON, HTTP and logging.\nSecond line of the description.',
];
const FRAMEWORKS = ['.NETFramework4.6', '.NETStandard2.0', 'net6.0', '.NETStandard1.4'];
const DEPENDENCIES = ['Newtonsoft.Json', 'NETStandard.Library', 'Microsoft.CSharp', 'System.Text.Json', 'WebActivator'];
const TAGS = ['json', 'http', 'payments', 'nuget', 'test', 'utility'];

/** Marks a string that must appear in the output as raw JSON text, not as a string. */
const RAW = '@@raw@@';

/** A UTF-8 byte-order mark, as text: nuget.org's writer begins some leaves with it. */
export const BOM = '\uFEFF';

/** The body of `leaf` (of `commit`) with absolute URLs on `origin`, or `leaf.body` when set; after a BOM when `leaf.bom`. */
export function renderLeafBody(commit: GeneratedCommit, leaf: GeneratedLeaf, origin: string): string {
  return leaf.bom === true ? BOM + jsonOf(commit, leaf, origin) : jsonOf(commit, leaf, origin);
}

function jsonOf(commit: GeneratedCommit, leaf: GeneratedLeaf, origin: string): string {
  if (leaf.body !== undefined) return leaf.body;
  const prng = mulberry32(hashSeed(`${commit.commitId}|${leaf.path}`));
  const url = `${origin}${leaf.path}`;
  const commitTicks = parseTicks(commit.timestamp);
  const document =
    leaf.type === 'PackageDelete'
      ? deleteDocument(prng, commit, leaf, url, commitTicks)
      : detailsDocument(prng, commit, leaf, url, commitTicks);
  return JSON.stringify(document, null, 2).replace(new RegExp(`"${RAW}([^"]*)"`, 'g'), '$1');
}

/** A time `maxSeconds` or less before `ticks`, with seven fractional digits. */
function before(prng: Prng, ticks: bigint, maxSeconds: number): string {
  return formatTicks(
    ticks - BigInt(prng.int(1, maxSeconds)) * TICKS_PER_SECOND - BigInt(prng.int(0, 9_999_999)),
    false,
  );
}

function deleteDocument(prng: Prng, commit: GeneratedCommit, leaf: GeneratedLeaf, url: string, ticks: bigint): object {
  return {
    '@id': url,
    '@type': ['PackageDelete', 'catalog:Permalink'],
    'catalog:commitId': commit.commitId,
    'catalog:commitTimeStamp': commit.timestamp,
    id: leaf.id,
    originalId: leaf.id,
    published: before(prng, ticks, 600),
    version: leaf.version,
    '@context': DELETE_CONTEXT,
  };
}

function detailsDocument(prng: Prng, commit: GeneratedCommit, leaf: GeneratedLeaf, url: string, ticks: bigint): object {
  const listed = leaf.listed ?? true;
  const published = before(prng, ticks, 3_600);
  const isPrerelease = /-/.test(leaf.version.split('+')[0] ?? '');
  const document: Record<string, unknown> = {
    '@id': url,
    '@type': ['PackageDetails', 'catalog:Permalink'],
    authors: prng.pick(AUTHORS),
    'catalog:commitId': commit.commitId,
    'catalog:commitTimeStamp': commit.timestamp,
    created: before(prng, ticks, 86_400 * 30),
    description: prng.pick(DESCRIPTIONS),
    id: leaf.id,
    isPrerelease,
    lastEdited: prng.chance(0.5) ? '0001-01-01T00:00:00Z' : published,
    listed,
    packageHash: prng.bytes(64).toString('base64'),
    packageHashAlgorithm: 'SHA512',
    packageSize: prng.int(2_000, 5_000_000),
    projectUrl: `https://github.com/example/${leaf.id.toLowerCase()}`,
    // nuget.org marks an unlisted package by publishing it in 1900.
    published: listed ? published : '1900-01-01T00:00:00Z',
    requireLicenseAcceptance: false,
    verbatimVersion: leaf.version,
    version: leaf.version,
  };
  if (prng.chance(0.3)) document.title = leaf.id.replace(/\./g, ' ');
  if (prng.chance(0.7)) document.dependencyGroups = dependencyGroups(prng, url);
  if (prng.chance(0.8)) document.tags = prng.shuffle(TAGS).slice(0, prng.int(1, 3));
  if (leaf.package) withPackage(document, leaf, url);
  if (leaf.deprecation) document.deprecation = { '@id': `${url}#deprecation`, ...leaf.deprecation };
  if (leaf.vulnerabilities) {
    document.vulnerabilities = leaf.vulnerabilities.map((v, i) => ({
      '@id': `${url}#vulnerability/GitHub/${i + 1}`,
      '@type': 'Vulnerability',
      ...v,
    }));
  }
  // Not in any documented schema: a client must keep it anyway.
  document.futureProperty = { '@type': 'catalogSync:Unknown', weight: `${RAW}1.50`, flags: [] };
  document['@context'] = DETAILS_CONTEXT;
  return document;
}

/** The package file's truth in place of the drawn one: its hash, size and dependencies. */
function withPackage(document: Record<string, unknown>, leaf: GeneratedLeaf, url: string): void {
  const { bytes, dependencies, targetFramework } = leaf.package!;
  Object.assign(document, packageDigest(bytes));
  delete document.dependencyGroups;
  if (dependencies.length > 0) {
    const groupId = `${url}#dependencygroup/${targetFramework.toLowerCase()}`;
    document.dependencyGroups = [
      {
        '@id': groupId,
        '@type': 'PackageDependencyGroup',
        dependencies: dependencies.map((d) => ({
          '@id': `${groupId}/${d.id.toLowerCase()}`,
          '@type': 'PackageDependency',
          id: d.id,
          range: d.range,
        })),
        targetFramework,
      },
    ];
  }
}

function dependencyGroups(prng: Prng, url: string): object[] {
  return prng
    .shuffle(FRAMEWORKS)
    .slice(0, prng.int(1, 2))
    .map((framework) => {
      const groupId = `${url}#dependencygroup/${framework.toLowerCase()}`;
      const dependencies = prng
        .shuffle(DEPENDENCIES)
        .slice(0, prng.int(0, 3))
        .map((id) => ({
          '@id': `${groupId}/${id.toLowerCase()}`,
          '@type': 'PackageDependency',
          id,
          range: `[${prng.int(1, 13)}.${prng.int(0, 9)}.${prng.int(0, 9)}, )`,
        }));
      return {
        '@id': groupId,
        '@type': 'PackageDependencyGroup',
        ...(dependencies.length > 0 ? { dependencies } : {}),
        targetFramework: framework,
      };
    });
}
