import { parseStoredLeaf } from '../consumer/stored-leaf.js';
import { parseIndex } from './guarded-write.js';
import { ViewError } from './errors.js';
import { leafFieldsOf } from './leaf-fields.js';
import { entryOf, serializeIndex, type VersionEntry } from './package-index.js';
import type { SnapshotReader } from '../stores/types.js';
import type { ViewDocuments } from './view-documents.js';
import { packageIndexKey } from './view-keys.js';

/** A compare-and-swap that keeps failing this often means something else writes the key in a loop. */
const MAX_ATTEMPTS = 20;

/** What {@link refreshQuarantinedEntry} did. */
export type RefreshOutcome = 'refreshed' | 'unchanged';

/**
 * A leaf set aside by quarantine and stored since (`retry-quarantine`): if the package's index still names
 * `leafKey` as a quarantined entry and a body is now stored at that key, the entry is rewritten from the body
 * (`listed`, `deprecation`, `vulnerabilities`, without `quarantined`), exactly as upkeep and the rebuild write a
 * details leaf. Only that entry changes (the index keeps its `commitKey`), with a compare-and-swap on the index read:
 * a writer that moved the index on meanwhile makes it read again. Nothing changes when there is no index, when the
 * entry names a later leaf, or when no body is stored.
 *
 * Both sides of the race call it: `retry-quarantine` after storing the leaf, and the view's writers after writing a
 * quarantined entry. Whichever writes second sees the other's write, so the entry never stays quarantined.
 */
export async function refreshQuarantinedEntry(
  documents: ViewDocuments,
  indexKey: string,
  leafKey: string,
  readLeaf: (leafKey: string) => Promise<Buffer | undefined>,
): Promise<RefreshOutcome> {
  // The leaf's fields, read once (a lost compare-and-swap reads the index again, not the leaf): null when no body is stored.
  let fields: ReturnType<typeof leafFieldsOf> | null | undefined;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const stored = await documents.read(indexKey);
    if (stored === undefined) return 'unchanged';
    const index = parseIndex(stored.bytes, `${documents.where} ${indexKey}`);
    const at = index.versions.findIndex((entry) => entry.leaf === leafKey && entry.quarantined === true);
    if (at < 0) return 'unchanged';
    const old = index.versions[at]!;
    fields ??= await storedFields(documents, { key: leafKey, commitKey: old.commitKey }, readLeaf);
    if (fields === null) return 'unchanged';
    const entry: VersionEntry = entryOf(old.version, { key: leafKey, type: 'PackageDetails', fields }, old);
    const versions = index.versions.map((known, i) => (i === at ? entry : known));
    if (await documents.writeIf(indexKey, serializeIndex({ ...index, versions }), stored.tag)) return 'refreshed';
  }
  throw new ViewError(
    `${documents.where} ${indexKey}: the conditional write lost ${MAX_ATTEMPTS} times in a row to other writers`,
  );
}

/** The filter fields of the leaf stored at `leaf.key` (of commit `leaf.commitKey`), or null when none is stored. */
async function storedFields(
  documents: ViewDocuments,
  leaf: { readonly key: string; readonly commitKey: string },
  readLeaf: (leafKey: string) => Promise<Buffer | undefined>,
): Promise<ReturnType<typeof leafFieldsOf> | null> {
  const body = await readLeaf(leaf.key);
  return body === undefined ? null : leafFieldsOf(parseStoredLeaf(body, { where: documents.where, ...leaf }));
}

/**
 * `retry-quarantine`'s `afterStored` for the view under `prefix`: refreshes the package's entry for the leaf just
 * stored, if the view has one naming it (no view, no index of the package, or a later leaf: nothing to do).
 */
export function viewRefresher(
  documents: ViewDocuments,
  prefix: string,
  store: SnapshotReader,
): (leafKey: string, item: { readonly id: string }) => Promise<boolean> {
  return async (leafKey, item) =>
    (await refreshQuarantinedEntry(documents, packageIndexKey(prefix, item.id), leafKey, (key) =>
      store.getBytes(key),
    )) === 'refreshed';
}
