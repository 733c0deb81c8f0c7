/**
 * The latest view and `retry-quarantine` (S3 + DynamoDB Local, and a folder): a leaf set aside by quarantine shows
 * as `"quarantined":true` in its package's index; once `retry-quarantine` stores it, the entry is a details entry
 * again (the retry refreshes it with a compare-and-swap), the view equals the catalog's, and `--rebuild` gives the
 * same bytes. A set-aside leaf that a later leaf replaced is not touched. And the race: upkeep writes the
 * quarantined entry after the retry looked at the index; its own look at the leaf after writing puts it right.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitKeyOf, leafKey, manifestKey, quarantineKey } from '../../../lambda/contract/keys.js';
import { keepView, packageIndexKey, rebuildView, viewRefresher } from '../../../lambda/view/index.js';
import {
  generateCatalog,
  type GeneratedCatalog,
  type GeneratedCommit,
  type GeneratedLeaf,
} from '../../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { runCli } from '../../../testkit/cli-process.js';
import { versionIdentity } from '../../../testkit/package-identities.js';
import { openViewTarget, VIEW_KINDS, type ViewTestTarget } from '../../../testkit/view-harness.js';
import { expectedView, writeMirror } from '../../../testkit/view-mirror.js';

/** The identity of a leaf. */
const identity = (leaf: GeneratedLeaf): string => `${leaf.id.toLowerCase()}/${versionIdentity(leaf.version)}`;

/** A details leaf whose identity no later leaf replaces (the view names it), and one that a later leaf replaces. */
function pickLeaves(commits: readonly GeneratedCommit[]): {
  latest: { commit: GeneratedCommit; leaf: GeneratedLeaf };
  replaced: { commit: GeneratedCommit; leaf: GeneratedLeaf };
} {
  let latest: { commit: GeneratedCommit; leaf: GeneratedLeaf } | undefined;
  let replaced: { commit: GeneratedCommit; leaf: GeneratedLeaf } | undefined;
  commits.forEach((commit, i) => {
    for (const leaf of commit.leaves) {
      if (
        leaf.type !== 'PackageDetails' ||
        commit.leaves.filter((other) => identity(other) === identity(leaf)).length > 1
      )
        continue;
      const later = commits.slice(i + 1).some((c) => c.leaves.some((other) => identity(other) === identity(leaf)));
      if (later) replaced ??= { commit, leaf };
      else if (i > 0) latest ??= { commit, leaf };
    }
  });
  if (latest === undefined || replaced === undefined)
    throw new Error('the generated catalog has no leaf of each kind: change its seed');
  return { latest, replaced };
}

interface Index {
  id: string;
  versions: { version: string; leaf: string; quarantined?: true; listed?: boolean }[];
}

describe.each(VIEW_KINDS)('the latest view and retry-quarantine: %s', (kind) => {
  let catalog: GeneratedCatalog;
  let replica: CatalogReplica;
  let target: ViewTestTarget;
  const prefix = 'q/';

  beforeAll(async () => {
    catalog = generateCatalog({ commits: 14, seed: 2317, leavesPerCommit: [1, 3], deleteRatio: 0.1 });
    replica = await CatalogReplica.start({ catalog, pageSize: 5 });
    target = await openViewTarget(kind, prefix);
  });
  afterAll(async () => {
    await replica?.stop();
    target?.close();
  });

  const cli = (args: string[]) => runCli([...args, ...target.cli.args], target.cli.env);
  const readIndex = async (id: string): Promise<Index> =>
    JSON.parse((await target.store.getBytes(packageIndexKey(prefix, id)))!.toString('utf8')) as Index;
  async function viewBytes(under: string): Promise<Map<string, Buffer>> {
    const bytes = new Map<string, Buffer>();
    for await (const key of target.store.listKeys(`${under}packages/`))
      bytes.set(key, (await target.store.getBytes(key))!);
    return bytes;
  }

  it("a set-aside leaf stored by retry-quarantine becomes a details entry; the view is the catalog's; rebuild gives the same bytes", async () => {
    const { latest, replaced } = pickLeaves(catalog.commits);
    const latestKey = leafKey(prefix, commitKeyOf(latest.commit.timestamp), latest.leaf.id, latest.leaf.version);
    for (const { leaf } of [latest, replaced])
      replica.overrideBody(leaf.path, '{"@type": "PackageDetails"}', { times: 1_000 });
    try {
      const run = await cli(['run', '--source', replica.serviceIndexUrl, '--quarantine', '--json']);
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ quarantined: 2, stoppedBy: 'caught-up' });
    } finally {
      replica.clearFaults();
    }
    expect((await cli(['view', '--json'])).code).toBe(0);
    const before = (await readIndex(latest.leaf.id)).versions.find((entry) => entry.leaf === latestKey);
    expect(before).toMatchObject({ quarantined: true });
    expect(before).not.toHaveProperty('listed');

    const retried = await cli(['retry-quarantine', '--source', replica.serviceIndexUrl, '--json']);
    expect(retried.code, retried.stderr).toBe(0);
    const outcomes = retried.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { key: string; outcome: string; viewRefreshed?: true });
    const recordOf = ({ commit, leaf }: { commit: GeneratedCommit; leaf: GeneratedLeaf }) =>
      quarantineKey(prefix, commitKeyOf(commit.timestamp), leaf.id, leaf.version);
    expect(outcomes.find((o) => o.key === recordOf(latest))).toEqual(
      expect.objectContaining({ outcome: 'stored', viewRefreshed: true }),
    );
    // The replaced one is stored too, but the view names its later leaf: nothing to refresh.
    expect(outcomes.find((o) => o.key === recordOf(replaced))).toEqual(expect.objectContaining({ outcome: 'stored' }));
    expect(outcomes.find((o) => o.key === recordOf(replaced))).not.toHaveProperty('viewRefreshed');

    const expected = expectedView(prefix, catalog.commits, new Map());
    const stored = await viewBytes(prefix);
    expect(stored.size).toBe(expected.size);
    for (const index of expected.values())
      expect(JSON.parse(stored.get(packageIndexKey(prefix, (index as Index).id))!.toString('utf8'))).toEqual(index);

    for (const key of stored.keys()) await target.store.deleteKey(key);
    const rebuild = await cli(['view', '--rebuild', '--json']);
    expect(rebuild.code, rebuild.stderr).toBe(0);
    expect(await viewBytes(prefix)).toEqual(stored);
  }, 60_000);

  it('upkeep writes a quarantined entry after the retry looked at the index: its own look at the leaf puts it right', async () => {
    const racePrefix = 'race/';
    const commits = generateCatalog({ commits: 6, seed: 4141, leavesPerCommit: [1, 3], deleteRatio: 0 }).commits;
    await writeMirror(target.store, racePrefix, commits);
    const { latest } = pickLeaves(commits);
    const commitKey = commitKeyOf(latest.commit.timestamp);
    const key = leafKey(racePrefix, commitKey, latest.leaf.id, latest.leaf.version);
    // As a run with quarantine leaves it: no leaf at the key, the manifest's entry marked.
    const body = (await target.store.getBytes(key))!;
    const manifest = JSON.parse(
      (await target.store.getBytes(manifestKey(racePrefix, commitKey)))!.toString('utf8'),
    ) as { leaves: { key: string; quarantined?: true }[] };
    const marked = {
      ...manifest,
      leaves: manifest.leaves.map((entry) => (entry.key === key ? { ...entry, quarantined: true as const } : entry)),
    };
    await target.store.putJson(manifestKey(racePrefix, commitKey), marked);
    await target.store.deleteKey(key);

    const indexKey = packageIndexKey(racePrefix, latest.leaf.id);
    const retryFound: boolean[] = [];
    const view = { documents: target.documents, prefix: racePrefix };
    // The retry runs whole between upkeep's read of the manifest (marked) and its write of the index.
    const beforeWrite = async (written: string): Promise<void> => {
      if (written !== indexKey || retryFound.length > 0) return;
      await target.store.putLeaf(key, body, {});
      await target.store.putJson(manifestKey(racePrefix, commitKey), manifest);
      retryFound.push(await viewRefresher(target.documents, racePrefix, target.store)(key, latest.leaf));
    };
    await keepView(
      { ...view, beforeWrite },
      {
        mirror: { ...target.mirror, prefix: racePrefix },
        cursors: target.cursors,
        name: `view-race-${kind.length}`,
        batchSize: 64,
      },
    );
    expect(retryFound).toEqual([false]);
    const entry = (JSON.parse((await target.store.getBytes(indexKey))!.toString('utf8')) as Index).versions.find(
      (e) => e.leaf === key,
    );
    expect(entry).toMatchObject({ version: versionIdentity(latest.leaf.version), listed: expect.any(Boolean) });
    expect(entry).not.toHaveProperty('quarantined');
    const expected = expectedView(racePrefix, commits, new Map());
    const stored = await viewBytes(racePrefix);
    for (const index of expected.values())
      expect(JSON.parse(stored.get(packageIndexKey(racePrefix, (index as Index).id))!.toString('utf8'))).toEqual(index);
    for (const stale of stored.keys()) await target.store.deleteKey(stale);
    await rebuildView(view, { ...target.mirror, prefix: racePrefix }, target.cursors, {
      name: `view-race-rebuild-${kind.length}`,
    });
    expect(await viewBytes(racePrefix)).toEqual(stored);
  }, 60_000);
});
