import { join } from 'node:path';
import type { StagedFile } from '../stores/atomic-file.js';
import { STATE_DIR } from '../stores/local-folder.js';
import { LocalLock, type LocalLockOptions } from '../stores/local-lock.js';
import { contentTag, type LocalSnapshotStore } from '../stores/local-snapshot-store.js';
import type { SnapshotReader } from '../stores/types.js';
import { forEachBounded } from './commit-leaves.js';
import type { ConditionalWrite, StoredDocument, ViewDocuments } from './view-documents.js';

/** The view's lock file in the folder's state folder: the follower's lock is never taken by the view. */
export const VIEW_LOCK_FILE = 'view.lock';

/** Files written aside at once by one `writeMany` (each an open file until it is fsynced and closed). */
const STAGED_AT_ONCE = 32;

/** The writes of one {@link LocalViewDocuments.writeMany} call, waiting for a round. */
interface QueuedWrites {
  readonly writes: readonly ConditionalWrite[];
  readonly staged: readonly StagedFile[];
  readonly resolve: (placed: boolean[]) => void;
  readonly reject: (error: unknown) => void;
}

/** What became of one write in a round: placed, refused (the stored document was not the expected one), or failed. */
type Placement = boolean | { readonly error: unknown };

/**
 * The view in a local folder, beside the mirror (same key layout, atomic durable writes). A compare-and-swap is
 * the read, the comparison and the rename under the folder's view lock (heartbeat, abandoned-lock breaking, and a
 * last check that the lock is still this writer's before the renames), so a writer that lost its lock writes
 * nothing, and another process's writes wait for the lock.
 *
 * Within one process the writes go in rounds (a group commit): each write's bytes are written aside and fsynced
 * first, outside the lock; then one round takes the lock once for every write queued by then, compares and renames
 * them (microseconds each), releases it, and syncs their folders. Writes queued meanwhile make the next round. So
 * the writers of one process never race each other for the lock (each taking it for its own fsyncs, as 32 writers
 * once did), and another process gets the lock between two rounds.
 */
export class LocalViewDocuments implements ViewDocuments {
  private readonly lock: LocalLock;
  private queue: QueuedWrites[] = [];
  private committing = false;

  /**
   * @param lockOptions - for tests: observe (or hold) the view lock's events; `fileName`: another lock than the
   * view's, for other documents written the same way (the private feed's states).
   */
  constructor(
    readonly where: string,
    private readonly snapshots: SnapshotReader & Pick<LocalSnapshotStore, 'stage'>,
    lockOptions: LocalLockOptions = {},
  ) {
    this.lock = new LocalLock(join(where, STATE_DIR), {
      ...lockOptions,
      fileName: lockOptions.fileName ?? VIEW_LOCK_FILE,
    });
  }

  async read(key: string): Promise<StoredDocument | undefined> {
    const bytes = await this.snapshots.getBytes(key);
    return bytes === undefined ? undefined : { bytes, tag: contentTag(bytes) };
  }

  async writeIf(key: string, bytes: Buffer, expected: string | undefined): Promise<boolean> {
    return (await this.writeMany([{ key, bytes, expected }]))[0]!;
  }

  async writeMany(writes: readonly ConditionalWrite[]): Promise<boolean[]> {
    if (writes.length === 0) return [];
    const staged: StagedFile[] = new Array(writes.length);
    try {
      await forEachBounded(writes.keys(), STAGED_AT_ONCE, async (i) => {
        staged[i] = await this.snapshots.stage(writes[i]!.key, writes[i]!.bytes);
      });
    } catch (error) {
      await discardAll(staged.filter((file) => file !== undefined));
      throw error;
    }
    return new Promise<boolean[]>((resolve, reject) => {
      this.queue.push({ writes, staged, resolve, reject });
      this.nextRound();
    });
  }

  /** Starts a round with every write queued, unless one is under way (its end starts the next). */
  private nextRound(): void {
    if (this.committing || this.queue.length === 0) return;
    this.committing = true;
    const round = this.queue;
    this.queue = [];
    void this.commit(round).finally(() => {
      this.committing = false;
      this.nextRound();
    });
  }

  /** One round: the lock taken once, every write compared and renamed under it; folders synced after it is released. */
  private async commit(round: readonly QueuedWrites[]): Promise<void> {
    const writes = round.flatMap((queued) => queued.writes.map((write, i) => ({ write, staged: queued.staged[i]! })));
    let placements: Placement[];
    try {
      placements = await this.lock.hold(async (held) => {
        const out: Placement[] = [];
        await held.whileHeld(() => this.placeAll(writes, out));
        return out;
      });
    } catch (error) {
      // No lock (another process kept it a minute), or it was judged abandoned: nothing of the round was renamed.
      for (const queued of round) void discardAll(queued.staged).finally(() => queued.reject(error));
      return;
    }
    let at = 0;
    for (const queued of round) {
      const mine = placements.slice(at, (at += queued.writes.length));
      void settle(queued, mine);
    }
  }

  /** Under the lock: per key, in the order queued, the stored document compared with the expected one, and renamed on a match. */
  private async placeAll(
    writes: readonly { write: ConditionalWrite; staged: StagedFile }[],
    out: Placement[],
  ): Promise<void> {
    const byKey = new Map<string, number[]>();
    writes.forEach(({ write }, i) => {
      const same = byKey.get(write.key);
      if (same === undefined) byKey.set(write.key, [i]);
      else same.push(i);
    });
    await Promise.all(
      [...byKey.entries()].map(async ([key, indexes]) => {
        const current = await this.snapshots.getBytes(key).catch((error: unknown) => ({ error }));
        if (current !== undefined && !Buffer.isBuffer(current)) {
          for (const i of indexes) out[i] = current;
          return;
        }
        let tag = current === undefined ? undefined : contentTag(current);
        for (const i of indexes) {
          const { write, staged } = writes[i]!;
          if (tag !== write.expected) {
            out[i] = false;
            continue;
          }
          try {
            await staged.place();
            out[i] = true;
            // Another write of the same key in this round compares with these bytes.
            if (indexes.length > 1) tag = contentTag(write.bytes);
          } catch (error) {
            out[i] = { error };
          }
        }
      }),
    );
  }
}

/** After the round: the placed files' folders synced, the others' files dropped; then the caller is answered. */
async function settle(queued: QueuedWrites, placements: readonly Placement[]): Promise<void> {
  try {
    await Promise.all(
      placements.map((placement, i) => (placement === true ? queued.staged[i]!.settle() : queued.staged[i]!.discard())),
    );
  } catch (error) {
    queued.reject(error);
    return;
  }
  const failed = placements.find((placement): placement is { error: unknown } => typeof placement !== 'boolean');
  if (failed !== undefined) queued.reject(failed.error);
  else queued.resolve(placements as boolean[]);
}

function discardAll(staged: readonly StagedFile[]): Promise<unknown> {
  return Promise.allSettled(staged.map((file) => file.discard()));
}
