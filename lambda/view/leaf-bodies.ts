import type { MirrorCommit, MirrorLeaf } from '../consumer/mirror.js';
import { comparableVersion } from '../contract/identity.js';
import { leafFieldsOf, type LeafFields } from './leaf-fields.js';
import { RequestPriority, type RequestBudget } from './request-budget.js';

/**
 * The filter fields of details leaves for the upkeep, read through its {@link RequestBudget}: ahead of their batch
 * (at the lowest priority) as each commit is read, or when the batch asks. A read ahead whose identity has a later
 * leaf read by the time its turn comes is skipped: only an identity's latest leaf reaches the index.
 */
export class LeafFieldsReader {
  /** Reads ahead by leaf key; `undefined` when skipped. */
  private readonly ahead = new Map<string, Promise<LeafFields | undefined>>();
  /** The key of the latest leaf read of each identity (lowercased id and version), for the skip. */
  private readonly latest = new Map<string, string>();
  private closed = false;

  constructor(private readonly budget: RequestBudget) {}

  /** A commit was read: its details leaves' bodies are read ahead. */
  readAhead(commit: MirrorCommit): void {
    if (this.closed) return;
    for (const leaf of commit.leaves) {
      if (leaf.type !== 'PackageDetails' || leaf.quarantined) continue;
      const identity = identityOf(leaf);
      this.latest.set(identity, leaf.key);
      const read = this.budget(RequestPriority.ahead, async () =>
        !this.closed && this.latest.get(identity) === leaf.key ? leafFieldsOf(await leaf.json()) : undefined,
      );
      // A failure surfaces when the batch asks for the leaf; until then it must not count as unhandled.
      read.catch(() => undefined);
      this.ahead.set(leaf.key, read);
    }
  }

  /** The fields of a details leaf that is not quarantined: its read ahead, or a read now. */
  async fields(leaf: MirrorLeaf): Promise<LeafFields> {
    const early = this.ahead.get(leaf.key);
    this.ahead.delete(leaf.key);
    const found = early === undefined ? undefined : await early;
    return found ?? this.budget(RequestPriority.body, async () => leafFieldsOf(await leaf.json()));
  }

  /** Reads nothing more ahead, and waits for the reads ahead under way (the run is over). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled(this.ahead.values());
    this.ahead.clear();
    this.latest.clear();
  }

  /** Forgets what was read ahead for a handled batch (the leaves a later one of their identity replaced). */
  forget(commits: readonly MirrorCommit[]): void {
    for (const commit of commits)
      for (const leaf of commit.leaves) {
        this.ahead.delete(leaf.key);
        const identity = identityOf(leaf);
        if (this.latest.get(identity) === leaf.key) this.latest.delete(identity);
      }
  }
}

/** A leaf's identity: its id lowercased and its version's comparable form. */
export function identityOf(leaf: Pick<MirrorLeaf, 'id' | 'version'>): string {
  return `${leaf.id.toLowerCase()}/${comparableVersion(leaf.version)}`;
}
