/**
 * Every leaf nuget.org serves can be read back (issue 29, part 1): the NuGetGallery fixture leaves (nuget.org's own
 * writer's output, thirteen of them beginning with a UTF-8 byte-order mark) are stored by the follower byte for byte, on a
 * folder and on S3, and read by `MirrorLeaf.json()`, the view's upkeep, its quarantine refresh and the rebuild. A stored leaf that cannot be
 * read is an error naming its key and its own commit (not the batch's first), with a stable code.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogClient } from '../../lambda/catalog/catalog-client.js';
import { HttpClient } from '../../lambda/catalog/http-client.js';
import { readCommits, type MirrorLeaf } from '../../lambda/consumer/index.js';
import { commitKeyOf, leafKey } from '../../lambda/contract/keys.js';
import { parseSettings } from '../../lambda/contract/settings.js';
import { formatTimestamp, parseTimestamp } from '../../lambda/contract/time.js';
import { runSlice } from '../../lambda/sync/index.js';
import {
  keepView,
  packageIndexKey,
  rebuildView,
  refreshQuarantinedEntry,
  serializeIndex,
  type PackageIndex,
} from '../../lambda/view/index.js';
import { generateCatalog } from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { fixtureLeafCatalog } from '../../testkit/fixture-leaves.js';
import { versionIdentity } from '../../testkit/package-identities.js';
import { FAST_RETRY } from '../../testkit/sync-harness.js';
import { openViewTarget, VIEW_KINDS, type ViewTestTarget } from '../../testkit/view-harness.js';
import { writeMirror } from '../../testkit/view-mirror.js';

const LEAVES = fileURLToPath(new URL('../fixtures/NuGetGallery', import.meta.url));
const fixtures = fixtureLeafCatalog(LEAVES);

/** Every key under `prefix` with its bytes. */
async function bytesUnder(target: ViewTestTarget, prefix: string): Promise<Map<string, Buffer>> {
  const bytes = new Map<string, Buffer>();
  for await (const key of target.store.listKeys(prefix)) bytes.set(key, (await target.store.getBytes(key))!);
  return bytes;
}

describe.each(VIEW_KINDS)('every fixture leaf the follower stores is readable: %s', (kind) => {
  let replica: CatalogReplica;
  let target: ViewTestTarget;
  const commitKey = commitKeyOf(fixtures.catalog.commits[0]!.timestamp);
  const keyOf = (leaf: { id: string; version: string }): string => leafKey('', commitKey, leaf.id, leaf.version);

  beforeAll(async () => {
    replica = await CatalogReplica.start({ catalog: fixtures.catalog });
    target = await openViewTarget(kind);
    const settings = parseSettings({ CATALOG_SOURCE: replica.serviceIndexUrl });
    const http = new HttpClient({ connections: 4, retry: FAST_RETRY });
    try {
      const summary = await runSlice(settings, {
        catalog: new CatalogClient(http, settings.source, settings.allowedOrigins),
        cursors: target.cursors,
        snapshots: target.store,
      });
      expect(summary).toMatchObject({ commits: 1, leaves: fixtures.leaves.length, stoppedBy: 'caught-up' });
    } finally {
      await http.close();
    }
  });
  afterAll(async () => {
    await replica.stop();
    target.close();
  });

  it('stores each leaf byte for byte as the fixture file holds it, byte-order mark included', async () => {
    expect(fixtures.leaves.filter((fixture) => fixture.bom)).toHaveLength(13);
    for (const fixture of fixtures.leaves)
      expect((await target.store.getBytes(keyOf(fixture.leaf)))?.equals(fixture.bytes), fixture.file).toBe(true);
  });

  it("json() gives every leaf's JSON", async () => {
    const read: MirrorLeaf[] = [];
    for await (const commit of readCommits(target.mirror)) read.push(...commit.leaves);
    expect(read).toHaveLength(fixtures.leaves.length);
    for (const fixture of fixtures.leaves) {
      const leaf = read.find((candidate) => candidate.key === keyOf(fixture.leaf))!;
      expect(await leaf.json(), fixture.file).toEqual(
        JSON.parse(fixture.bytes.toString('utf8').replace(/^\uFEFF/, '')),
      );
    }
  });

  it("the view's upkeep indexes every package from its leaf, and the rebuild gives the same bytes", async () => {
    const kept = await keepView(
      { documents: target.documents, prefix: '' },
      { mirror: target.mirror, cursors: target.cursors },
    );
    expect(kept).toMatchObject({ commits: 1, written: fixtures.leaves.length });
    const view = await bytesUnder(target, 'packages/');
    expect(view.size).toBe(fixtures.leaves.length);
    for (const fixture of fixtures.leaves) {
      const index = [...view.values()]
        .map(
          (bytes) =>
            JSON.parse(bytes.toString('utf8')) as { id: string; versions: { leaf: string; listed: boolean }[] },
        )
        .find((candidate) => candidate.id === fixture.leaf.id)!;
      expect(index.versions, fixture.file).toMatchObject([{ leaf: keyOf(fixture.leaf), listed: true }]);
    }
    for (const key of view.keys()) await target.store.deleteKey(key);
    const rebuilt = await rebuildView({ documents: target.documents, prefix: '' }, target.mirror, target.cursors, {
      name: 'view-rebuilt',
      shards: 4,
    });
    expect(rebuilt).toMatchObject({
      complete: true,
      packages: fixtures.leaves.length,
      bodiesRead: fixtures.leaves.length,
    });
    expect(await bytesUnder(target, 'packages/')).toEqual(view);
  });

  it("the view's quarantine refresh reads a leaf set aside and stored since", async () => {
    const marked = fixtures.leaves.find((fixture) => fixture.bom)!;
    const indexKey = packageIndexKey('', marked.leaf.id);
    const timeStamp = formatTimestamp(parseTimestamp(fixtures.catalog.commits[0]!.timestamp));
    const entry = {
      version: versionIdentity(marked.leaf.version),
      type: 'details' as const,
      leaf: keyOf(marked.leaf),
      commitKey,
      commitTimeStamp: timeStamp,
    };
    const setAside: PackageIndex = {
      id: marked.leaf.id,
      commitKey,
      commitTimeStamp: timeStamp,
      versions: [{ ...entry, quarantined: true }],
    };
    expect(
      await target.documents.writeIf(indexKey, serializeIndex(setAside), (await target.documents.read(indexKey))?.tag),
    ).toBe(true);
    expect(
      await refreshQuarantinedEntry(target.documents, indexKey, keyOf(marked.leaf), (key) =>
        target.store.getBytes(key),
      ),
    ).toBe('refreshed');
    expect(JSON.parse((await target.documents.read(indexKey))!.bytes.toString('utf8'))).toEqual({
      ...setAside,
      versions: [{ ...entry, listed: true }],
    });
  });
});

describe('a stored leaf that cannot be read (local folder)', () => {
  let target: ViewTestTarget;
  const catalog = generateCatalog({ commits: 3, seed: 31, leavesPerCommit: [2, 3], deleteRatio: 0 });
  const last = catalog.commits[2]!;
  const lastKey = commitKeyOf(last.timestamp);
  const brokenKey = leafKey('', lastKey, last.leaves[1]!.id, last.leaves[1]!.version);

  beforeAll(async () => {
    target = await openViewTarget('local folder');
    await writeMirror(target.store, '', catalog.commits);
    // Two byte-order marks: the follower's reader drops one and refuses the rest, so no reader may accept it.
    const body = (await target.store.getBytes(brokenKey))!;
    await target.store.putLeaf(brokenKey, Buffer.concat([Buffer.from('\uFEFF\uFEFF'), body]), {});
  });
  afterAll(() => target.close());

  /** The error's message names the leaf's key and its commit, and its code is stable. */
  function expectNamed(error: unknown): void {
    expect(error).toBeInstanceOf(Error);
    const message = (error as Error).message;
    expect(message).toContain(brokenKey);
    expect(message).toContain(`commit ${lastKey}`);
    const reading = (error as { code?: string }).code === 'CS_ERR_STORED_LEAF' ? error : (error as Error).cause;
    expect((reading as { code?: string }).code).toBe('CS_ERR_STORED_LEAF');
    expect(reading).toMatchObject({ key: brokenKey, commitKey: lastKey });
  }

  it('json() names the leaf and its commit', async () => {
    let leaf: MirrorLeaf | undefined;
    for await (const commit of readCommits(target.mirror))
      leaf ??= commit.leaves.find((candidate) => candidate.key === brokenKey);
    expectNamed(await leaf!.json().catch((error: unknown) => error));
  });

  it("the view's upkeep, whose batch begins at the first commit, names the leaf's own commit", async () => {
    // A fixed batch, so that it begins at the first commit (batches as deep as the stream begin with one commit).
    const error = await keepView(
      { documents: target.documents, prefix: '' },
      { mirror: target.mirror, cursors: target.cursors, batchSize: 64 },
    ).catch((e: unknown) => e);
    expect((error as Error).message).toContain(`commit ${commitKeyOf(catalog.commits[0]!.timestamp)}`);
    expectNamed(error);
  });

  it('the rebuild names the leaf and its commit', async () => {
    expectNamed(
      await rebuildView({ documents: target.documents, prefix: '' }, target.mirror, target.cursors, {
        name: 'view-broken',
        shards: 4,
      }).catch((e: unknown) => e),
    );
  });
});
