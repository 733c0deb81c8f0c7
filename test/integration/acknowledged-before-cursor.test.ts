/**
 * The engine's half of "every commit at or before the cursor is stored whole" (issue 10, item 0): a run
 * writes a commit's manifest only once its own PUT of every leaf of that commit was acknowledged, and moves
 * the cursor only past commits whose leaves and manifest it saw acknowledged. The store's half (an
 * acknowledged PUT is readable whole, an overwrite is atomic) is the S3 server's: see
 * test/integration/emulators.test.ts and chaos/repro-stock-s3rver.ts.
 *
 * Observed at the store interfaces, at the instant of each call, per run: no reading back, no timing. Four
 * runs at once on one cursor, over a catalog that grows when the third cursor write is asked for.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { leafKey, manifestKey } from '../../lambda/contract/keys.js';
import { formatTimestamp, parseTimestamp, type Ticks } from '../../lambda/contract/time.js';
import { commitKey } from '../../lambda/contract/keys.js';
import type {
  CompareAndSetResult,
  CursorState,
  CursorStore,
  CursorTarget,
  SnapshotStore,
} from '../../lambda/stores/types.js';
import { appendCommits, generateCatalog, type GeneratedCatalog } from '../../testkit/catalog-generator.js';
import { CatalogReplica } from '../../testkit/catalog-replica.js';
import { commitTicks, SyncHarness } from '../../testkit/sync-harness.js';

/** The keys one commit is stored under. */
function keysOf(commit: GeneratedCatalog['commits'][number]): { manifest: string; leaves: string[] } {
  const key = commitKey(parseTimestamp(commit.timestamp));
  return {
    manifest: manifestKey('', key),
    leaves: commit.leaves.map((leaf) => leafKey('', key, leaf.id, leaf.version)),
  };
}

/** One run's view of the stores: which of its PUTs were acknowledged, and the cursor it started from. */
class ObservedRun implements CursorStore {
  readonly acknowledged = new Set<string>();
  private startedAt: Ticks | undefined;
  readonly snapshots: SnapshotStore;

  constructor(
    private readonly cursors: CursorStore,
    inner: SnapshotStore,
    private readonly catalog: GeneratedCatalog,
    private readonly violations: string[],
    private readonly onCursorWrite: () => void,
  ) {
    const acknowledged = this.acknowledged;
    const commitOfManifest = (key: string) => catalog.commits.find((commit) => keysOf(commit).manifest === key);
    this.snapshots = {
      async putLeaf(key, body, metadata) {
        await inner.putLeaf(key, body, metadata);
        acknowledged.add(key);
      },
      async putJson(key, value) {
        const commit = commitOfManifest(key);
        const unacknowledged = commit ? keysOf(commit).leaves.filter((leaf) => !acknowledged.has(leaf)) : [];
        if (unacknowledged.length > 0)
          violations.push(`manifest ${key} PUT before the PUT of ${unacknowledged.join(', ')} was acknowledged`);
        await inner.putJson(key, value);
        acknowledged.add(key);
      },
      getJson: (key) => inner.getJson(key),
      getTagged: (key, options) => inner.getTagged(key, options),
      putJsonIf: (key, value, expected, options) => inner.putJsonIf(key, value, expected, options),
      deleteKey: (key) => inner.deleteKey(key),
      listKeys: (prefix, startAfter) => inner.listKeys(prefix, startAfter),
    };
  }

  async read(name: string): Promise<CursorState | undefined> {
    const state = await this.cursors.read(name);
    // The engine reads its own cursor first: what the run starts from.
    this.startedAt ??= state?.value ?? 0n;
    return state;
  }

  compareAndSet(name: string, expected: CursorState | undefined, next: CursorTarget): Promise<CompareAndSetResult> {
    this.onCursorWrite();
    // Commits this run took (after its start, up to the new cursor): each must be acknowledged before the write is asked for.
    for (const commit of this.catalog.commits) {
      const ticks = parseTimestamp(commit.timestamp);
      if (ticks <= this.startedAt! || ticks > next.value) continue;
      const { manifest, leaves } = keysOf(commit);
      const missing = [manifest, ...leaves].filter((key) => !this.acknowledged.has(key));
      if (missing.length > 0)
        this.violations.push(
          `cursor ${formatTimestamp(next.value)} asked for before the PUT of ${missing.join(', ')} was acknowledged`,
        );
    }
    return this.cursors.compareAndSet(name, expected, next);
  }
}

const replicas: CatalogReplica[] = [];
afterAll(async () => {
  await Promise.all(replicas.map((replica) => replica.stop()));
});

describe('overlapping runs on a growing catalog', () => {
  it('write a manifest, and move the cursor, only after their own PUTs of it were acknowledged', async () => {
    const catalog = generateCatalog({ commits: 24, seed: 1010, leavesPerCommit: [1, 3], sameMillisecondPairs: 2 });
    const replica = await CatalogReplica.start({ catalog, pageSize: 5 });
    replicas.push(replica);
    const harness = await SyncHarness.create();
    const violations: string[] = [];
    let cursorWrites = 0;
    const grow = (): void => {
      // Deterministic growth mid-run: runs that read the index later see the new commits.
      if (++cursorWrites === 3) appendCommits(catalog, 6, 1011);
    };
    const outcomes: string[] = [];
    for (let round = 0; round < 8 && !outcomes.includes('caught-up'); round++) {
      const summaries = await Promise.all(
        Array.from({ length: 4 }, (_, i) => {
          const run = new ObservedRun(harness.store, harness.snapshots, catalog, violations, grow);
          return harness.run(
            replica.serviceIndexUrl,
            { MAX_COMMITS: String(4 + i * 4), CONCURRENCY: String(2 + i * 4) },
            { cursors: run, snapshots: run.snapshots },
          );
        }),
      );
      outcomes.push(...summaries.map((summary) => summary.stoppedBy));
    }
    expect(violations).toEqual([]);
    expect(catalog.commits).toHaveLength(30);
    expect(outcomes).toContain('lost-race');
    expect(outcomes).toContain('caught-up');
    expect(await harness.cursor()).toBe(formatTimestamp(commitTicks(catalog, -1)));
    expect(await harness.verify(catalog, replica.origin, commitTicks(catalog, -1))).toEqual([]);
  });
});
