/**
 * `verify --repair`: stores the commits an audit found incomplete again, with the normal pipeline (`runSlice`:
 * the same keys, bytes, metadata, manifests and quarantine as the follower), but never moves the mirror's cursor
 * or watermark: each commit is run as a one-commit slice whose cursor lives in memory, and whose watermark write
 * is dropped.
 */
import { formatTimestamp, type Ticks } from '../contract/time.js';
import { watermarkKeyOf } from '../contract/keys.js';
import type { SyncSettings } from '../contract/settings.js';
import type { CompareAndSetResult, CursorState, CursorStore, CursorTarget, SnapshotStore } from '../stores/types.js';
import type { CatalogClient } from '../catalog/catalog-client.js';
import { runSlice } from '../sync/engine.js';

/** A cursor kept in memory for one repair: the mirror's own cursor is never read or written. */
class RepairCursor implements CursorStore {
  private state: CursorState;

  constructor(start: Ticks) {
    this.state = { value: start, stored: formatTimestamp(start) };
  }

  read(): Promise<CursorState | undefined> {
    return Promise.resolve(this.state);
  }

  compareAndSet(_name: string, expected: CursorState | undefined, next: CursorTarget): Promise<CompareAndSetResult> {
    if (expected?.stored !== this.state.stored) return Promise.resolve({ outcome: 'conflict', current: this.state });
    this.state = { value: next.value, stored: formatTimestamp(next.value), commitId: next.commitId, runId: next.runId };
    return Promise.resolve({ outcome: 'written' });
  }
}

/**
 * The store, less the watermark: a repair must not move it (its one-commit cursor is far behind), so its writes are
 * dropped, and the read the watermark's writer makes before each write (it only moves forward) answers "none"
 * instead of a GET per repaired commit.
 */
function withoutWatermark(snapshots: SnapshotStore, prefix: string): SnapshotStore {
  const watermark = watermarkKeyOf(prefix);
  return {
    putLeaf: (key, body, metadata) => snapshots.putLeaf(key, body, metadata),
    putJson: (key, value) => (key === watermark ? Promise.resolve() : snapshots.putJson(key, value)),
    getJson: (key) => (key === watermark ? Promise.resolve(undefined) : snapshots.getJson(key)),
    getTagged: (key, options) => (key === watermark ? Promise.resolve(undefined) : snapshots.getTagged(key, options)),
    putJsonIf: (key, value, expected, options) =>
      key === watermark ? Promise.resolve(true) : snapshots.putJsonIf(key, value, expected, options),
    deleteKey: (key) => snapshots.deleteKey(key),
    listKeys: (under, startAfter) => snapshots.listKeys(under, startAfter),
    ...(snapshots.getBytes === undefined ? {} : { getBytes: (key: string) => snapshots.getBytes!(key) }),
    ...(snapshots.maxKeySegmentBytes === undefined ? {} : { maxKeySegmentBytes: snapshots.maxKeySegmentBytes }),
  };
}

/** What repairing one commit did. */
export interface RepairOutcome {
  readonly commit: string;
  readonly leaves: number;
  readonly quarantined: number;
  /** Why it could not be repaired; absent when it was. */
  readonly error?: string;
}

/**
 * Stores each commit of `commits` (commit times) again, whole, with the normal pipeline. A commit that fails is
 * reported and the others still run.
 */
export async function repairCommits(
  settings: SyncSettings,
  deps: { catalog: CatalogClient; snapshots: SnapshotStore },
  commits: readonly Ticks[],
): Promise<RepairOutcome[]> {
  const snapshots = withoutWatermark(deps.snapshots, settings.prefix);
  const outcomes: RepairOutcome[] = [];
  for (const ticks of commits) {
    const one: SyncSettings = { ...settings, dependsOn: [], startCursor: ticks - 1n, maxCommits: 1 };
    try {
      const summary = await runSlice(one, {
        catalog: deps.catalog,
        cursors: new RepairCursor(ticks - 1n),
        snapshots,
        ceiling: ticks,
      });
      outcomes.push(
        summary.commits === 1
          ? { commit: formatTimestamp(ticks), leaves: summary.leaves, quarantined: summary.quarantined }
          : {
              commit: formatTimestamp(ticks),
              leaves: 0,
              quarantined: 0,
              error: 'the catalog no longer has this commit',
            },
      );
    } catch (error) {
      outcomes.push({ commit: formatTimestamp(ticks), leaves: 0, quarantined: 0, error: (error as Error).message });
    }
  }
  return outcomes;
}
