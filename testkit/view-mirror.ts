/**
 * For the latest view's tests: a mirror written straight from generated commits (leaves, manifests and the
 * watermark, in the follower's layout), leaves decorated with deprecations and vulnerabilities, and the view a
 * reader would expect, computed from the generated commits alone (testkit's own version identity; none of the
 * view's code but the order of versions, which has its own published vectors in version-order.test.ts).
 */
import { commitKeyOf, leafKey, manifestKey, watermarkKeyOf } from '../lambda/contract/keys.js';
import { formatTimestamp, parseTimestamp } from '../lambda/contract/time.js';
import { compareVersions } from '../lambda/contract/version-order.js';
import type { SnapshotStore } from '../lambda/stores/types.js';
import type { GeneratedCommit, GeneratedLeaf } from './generated-commit.js';
import { renderLeafBody } from './leaf-body.js';
import { versionIdentity } from './package-identities.js';
import type { Prng } from './prng.js';

/** The origin the mirror's leaf bodies name (never fetched). */
const ORIGIN = 'http://catalog.test';

/** What a decorated details leaf carries besides `listed`, as the view should show it. */
export interface Decoration {
  readonly deprecation?: Record<string, unknown>;
  readonly vulnerabilities?: Record<string, unknown>[];
}

/** Gives some details leaves a deprecation and vulnerabilities (in their bodies, with JSON-LD keys), in place. */
export function decorate(
  commits: readonly GeneratedCommit[],
  prng: Prng,
  ratio: number,
): Map<GeneratedLeaf, Decoration> {
  const decorations = new Map<GeneratedLeaf, Decoration>();
  for (const commit of commits) {
    for (const leaf of commit.leaves) {
      if (leaf.type !== 'PackageDetails' || !prng.chance(ratio)) continue;
      // The JSON after the leaf's byte-order mark, if it has one: the decorated body keeps the mark (`leaf.bom`).
      const body = JSON.parse(renderLeafBody(commit, leaf, ORIGIN).replace(/^\uFEFF/, '')) as Record<string, unknown>;
      const decoration: { deprecation?: Record<string, unknown>; vulnerabilities?: Record<string, unknown>[] } = {};
      if (prng.chance(0.7)) {
        decoration.deprecation = {
          reasons: [prng.pick(['Legacy', 'CriticalBugs', 'Other'])],
          message: `use ${leaf.id}.Next`,
          alternatePackage: { id: `${leaf.id}.Next`, range: '[1.0.0, )' },
        };
        body['deprecation'] = {
          '@id': `${body['@id']}#deprecation`,
          ...decoration.deprecation,
          alternatePackage: { '@id': `${body['@id']}#alt`, ...(decoration.deprecation['alternatePackage'] as object) },
        };
      }
      if (prng.chance(0.5)) {
        decoration.vulnerabilities = [
          {
            advisoryUrl: `https://github.com/advisories/GHSA-${prng.int(1000, 9999)}`,
            severity: String(prng.int(0, 3)),
          },
        ];
        body['vulnerabilities'] = decoration.vulnerabilities.map((v, i) => ({
          '@id': `${body['@id']}#vulnerability/${i}`,
          '@type': 'Vulnerability',
          ...v,
        }));
      }
      leaf.body = JSON.stringify(body, null, 2);
      decorations.set(leaf, decoration);
    }
  }
  return decorations;
}

/** Writes commits (leaves, then manifests) and then the watermark at the last of them, as the follower does. */
export async function writeMirror(
  store: SnapshotStore,
  prefix: string,
  commits: readonly GeneratedCommit[],
): Promise<void> {
  for (const commit of commits) {
    const key = commitKeyOf(commit.timestamp);
    const entries = await Promise.all(
      commit.leaves.map(async (leaf) => {
        const leafKeyOfLeaf = leafKey(prefix, key, leaf.id, leaf.version);
        await store.putLeaf(leafKeyOfLeaf, Buffer.from(renderLeafBody(commit, leaf, ORIGIN)), {});
        return { key: leafKeyOfLeaf, id: leaf.id, version: leaf.version, type: leaf.type };
      }),
    );
    entries.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    await store.putJson(manifestKey(prefix, key), {
      commitId: commit.commitId,
      commitTimeStamp: formatTimestamp(parseTimestamp(commit.timestamp)),
      leaves: entries,
    });
  }
  const last = commits[commits.length - 1];
  if (last === undefined) return;
  const cursor = formatTimestamp(parseTimestamp(last.timestamp));
  await store.putJson(watermarkKeyOf(prefix), {
    cursor,
    commitId: last.commitId,
    commitKey: commitKeyOf(last.timestamp),
    updatedAt: new Date(0).toISOString(),
  });
}

/** The expected `index.json` of every package, by lower-case id, after `commits`. */
export function expectedView(
  prefix: string,
  commits: readonly GeneratedCommit[],
  decorations: ReadonlyMap<GeneratedLeaf, Decoration>,
): Map<string, unknown> {
  const packages = new Map<
    string,
    { id: string; commitKey: string; commitTimeStamp: string; versions: Map<string, Record<string, unknown>> }
  >();
  for (const commit of commits) {
    const commitKey = commitKeyOf(commit.timestamp);
    const commitTimeStamp = formatTimestamp(parseTimestamp(commit.timestamp));
    const sorted = [...commit.leaves].sort((a, b) =>
      leafKey(prefix, commitKey, a.id, a.version) < leafKey(prefix, commitKey, b.id, b.version) ? -1 : 1,
    );
    for (const leaf of sorted) {
      const id = leaf.id.toLowerCase();
      const known = packages.get(id) ?? { id: leaf.id, commitKey, commitTimeStamp, versions: new Map() };
      const version = versionIdentity(leaf.version);
      const entry: Record<string, unknown> = {
        version,
        type: leaf.type === 'PackageDelete' ? 'delete' : 'details',
        leaf: leafKey(prefix, commitKey, leaf.id, leaf.version),
        commitKey,
        commitTimeStamp,
      };
      if (leaf.type === 'PackageDetails') {
        entry['listed'] = leaf.listed ?? true;
        const decoration = decorations.get(leaf);
        if (decoration?.deprecation) entry['deprecation'] = decoration.deprecation;
        if (decoration?.vulnerabilities) entry['vulnerabilities'] = decoration.vulnerabilities;
      }
      known.versions.set(version, entry);
      packages.set(id, { id: leaf.id, commitKey, commitTimeStamp, versions: known.versions });
    }
  }
  const view = new Map<string, unknown>();
  for (const [id, known] of packages) {
    const versions = [...known.versions.values()].sort((a, b) =>
      compareVersions(a['version'] as string, b['version'] as string),
    );
    view.set(id, { id: known.id, commitKey: known.commitKey, commitTimeStamp: known.commitTimeStamp, versions });
  }
  return view;
}
