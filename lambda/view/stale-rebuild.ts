/**
 * What a rebuild does for a stale view (staleness.ts): it looks at the filter history first, then clears, once every
 * index is written, the stale changes that were refilled before it started (their manifests were rewritten, so it read
 * the leaves they added). `view --rebuild --added` reads every manifest too but folds only the packages those changes
 * added, and leaves the cursor where it is. Upkeep may be running meanwhile and write, on top of an index still
 * incomplete, a commit past the ones the rebuild read: such an index of an added package is not kept as it is (a
 * rebuild normally keeps a newer index) but merged, the rebuilt entries with the entries of the later commits.
 */
import type { Mirror } from '../consumer/mirror.js';
import type { CursorStore } from '../stores/types.js';
import { ViewError } from './errors.js';
import { parseIndex, type GuardedOutcome } from './guarded-write.js';
import { packageIndexOf, serializeIndex, type PackageIndex, type VersionEntry } from './package-index.js';
import { withRefills } from '../contract/view.js';
import { addedBy, checkStaleness, hasReadOf, type ViewStaleness } from './staleness.js';
import type { ViewDocuments } from './view-documents.js';
import { updateViewState } from './view-state.js';

/** What a rebuild clears, and the packages that concerns. */
export interface StaleRebuild {
  /** The stale changes refilled before the rebuild started (their places in the filter history). */
  readonly cleared: ReadonlySet<number>;
  /** Whether a package (its lowercased id) was added by a cleared change. */
  readonly added: (lowerId: string) => boolean;
  /** The cleared changes themselves (a rebuild's scope hands them to its workers). */
  readonly refilled: readonly ViewStaleness[];
}

/** Where the rebuild runs. */
export interface StaleRebuildTarget {
  readonly documents: ViewDocuments;
  readonly prefix: string;
  readonly mirror: Mirror;
  readonly cursors: CursorStore;
  /** The view consumer's name. */
  readonly name: string;
}

/**
 * Before a rebuild reads anything: looks at the filter history, and says which stale changes it will clear: those
 * refilled before it started (`startedAt`, an ISO time: a plan's `createdAt`, for the parts of a rebuild that run
 * later; by default now).
 */
export async function prepareStaleRebuild(target: StaleRebuildTarget, startedAt?: string): Promise<StaleRebuild> {
  const { stale } = await checkStaleness({
    ...target,
    hasRead: hasReadOf(target.cursors, target.mirror, target.name),
  });
  const refilled = stale.filter(
    (change) =>
      change.refilledAt !== undefined &&
      (startedAt === undefined || Date.parse(change.refilledAt) <= Date.parse(startedAt)),
  );
  return { cleared: new Set(refilled.map((change) => change.change)), added: addedBy(refilled), refilled };
}

/**
 * After a rebuild wrote every index: the changes it cleared are no longer stale (`view.json`, with `rebuilt`).
 * Resolves to the changes still stale.
 */
export async function finishStaleRebuild(
  target: StaleRebuildTarget,
  rebuild: StaleRebuild,
  rebuilt: { readonly upTo: string | null; readonly only?: 'added' },
  now: () => Date = () => new Date(),
): Promise<ViewStaleness[]> {
  if (rebuild.cleared.size === 0) return (await checkStaleness({ ...target, hasRead: async () => true })).stale;
  const at = now().toISOString();
  const state = await updateViewState(target.documents, target.prefix, (current) => ({
    ...current,
    historySeen: current?.historySeen ?? 0,
    stale: (current?.stale ?? []).filter((change) => !rebuild.cleared.has(change.change)),
    rebuilt: { at, ...rebuilt },
  }));
  const { record } = await checkStaleness({ ...target, hasRead: async () => true });
  return withRefills(state, record);
}

/**
 * The rebuilt index of a package, `rebuilt` (every commit up to `bound`), over a stored one of a later commit that
 * upkeep wrote meanwhile: each identity's entry of a commit past `bound` is the stored one, the others the rebuilt
 * ones; id and commit are the stored index's (its most recent leaf is past `bound`).
 */
export function mergeNewer(rebuilt: PackageIndex, stored: PackageIndex, bound: string): PackageIndex {
  const entries = new Map<string, VersionEntry>();
  for (const entry of stored.versions) entries.set(entry.version, entry);
  for (const entry of rebuilt.versions) {
    const later = entries.get(entry.version);
    if (later === undefined || later.commitKey <= bound) entries.set(entry.version, entry);
  }
  return packageIndexOf(stored.id, stored, entries.values());
}

/** Lost rounds against a writer that keeps moving the index on, before the rebuild leaves it (then still stale). */
const MAX_MERGE_ROUNDS = 5;

/**
 * Writes `rebuilt` (up to `bound`) over the stored index of `key` when that one is newer, merged ({@link mergeNewer}),
 * conditional on the index read (another writer in between: read and merge again). Resolves to `written`, or
 * `current` when there is nothing newer to merge over or the merge changes no byte (the stored index was whole).
 */
export async function writeOverNewer(
  documents: ViewDocuments,
  key: string,
  rebuilt: PackageIndex,
  bound: string,
): Promise<GuardedOutcome> {
  for (let round = 0; round < MAX_MERGE_ROUNDS; round++) {
    const stored = await documents.read(key);
    if (stored === undefined) return 'current';
    const index = parseIndex(stored.bytes, `${documents.where} ${key}`);
    if (index.commitKey <= bound) return 'current';
    const bytes = serializeIndex(mergeNewer(rebuilt, index, bound));
    if (bytes.equals(stored.bytes)) return 'current';
    if (await documents.writeIf(key, bytes, stored.tag)) return 'written';
  }
  throw new ViewError(
    `${documents.where} ${key}: the rebuilt index could not be merged over the newer one: the conditional write lost ${MAX_MERGE_ROUNDS} times in a row to other writers`,
  );
}
