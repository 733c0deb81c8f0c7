/**
 * One package's feed made from the latest view: its packages stored (package-plan.ts), then its documents written
 * from them (the flat container's version list, the registration), then its state, with a compare-and-swap, then the
 * packages no longer listed deleted. The order is what keeps the feed exact for a client reading at any moment: a
 * version is named by an index only once its package is stored, and a package is deleted only once no index names it.
 *
 * The state's compare-and-swap is the package's guard (one writer per package, no feed-wide lock): a writer whose
 * state was overtaken writes the documents again from the state now stored. Documents are written before the state,
 * so a crash leaves a state that is behind its documents, never ahead: the next batch does the package again.
 */
import { keepsId } from '../contract/id-filter.js';
import { parseIndex } from '../view/guarded-write.js';
import { leafFieldsOf } from '../view/leaf-fields.js';
import type { PackageIndex, VersionEntry } from '../view/package-index.js';
import { packageIndexKey } from '../view/view-keys.js';
import { FeedError } from './errors.js';
import type { FeedContext } from './feed-context.js';
import { catalogEntryOf, readLeafPackage, type LeafPackage } from './leaf-package.js';
import { planPackage, type PackagePlan } from './package-plan.js';
import { parseState, serializeState, type PackageState } from './package-state.js';
import {
  readRegistration,
  registrationDocuments,
  registrationItem,
  writeRegistration,
  type RegistrationItem,
  type StoredRegistration,
} from './registration.js';
import { vulnerabilityEntriesOf, type VulnerabilityEntry } from './vulnerabilities.js';

/** A compare-and-swap that keeps failing this often means something else writes the package in a loop. */
const MAX_ATTEMPTS = 20;

/** What {@link syncPackage} did. */
export interface PackageOutcome {
  /** `skipped`: not in the view, or an id the filter leaves out. */
  readonly outcome: 'written' | 'current' | 'skipped';
  /** The package's vulnerability entries now (for its page), when it is in the feed. */
  readonly vulnerabilities?: readonly VulnerabilityEntry[];
  /**
   * Its vulnerability page needs no change: the feed had no state of it (so no page holds an entry of it: an entry
   * is written only after the package's state, and a state is never deleted) and it has no vulnerabilities now.
   */
  readonly noVulnerabilityChange?: boolean;
}

/** Options of {@link syncPackage}. */
export interface SyncPackageOptions {
  /** Write the documents again even when the state is the view's latest (a rebuild). */
  readonly force?: boolean;
  /** Remove what the feed holds of a package the id filter leaves out (a rebuild after the filter changed). */
  readonly removeExcluded?: boolean;
  /** Make every registration item again from its leaf, none kept from the stored documents (a repair). */
  readonly fresh?: boolean;
  /** Versions (identity form) whose stored bytes are not trusted: downloaded again, as if not held (a repair). */
  readonly refetch?: (id: string, version: string) => boolean;
  /**
   * The details leaves of the package that the commit being applied names (mirror keys): read at once with the view
   * and the state instead of after them, since the view most often names the very same leaves (a new version). A leaf
   * the view does not name is dropped unread; one it names is never read twice.
   */
  readonly leaves?: readonly LeafRef[];
}

/** A leaf of the mirror: its key and the commit that wrote it (named in errors). */
export interface LeafRef {
  readonly key: string;
  readonly commitKey: string;
}

/** Makes the feed of package `id` (any spelling) what the latest view says now. */
export async function syncPackage(
  ctx: FeedContext,
  id: string,
  options: SyncPackageOptions = {},
): Promise<PackageOutcome> {
  let force = options.force === true;
  ctx.counts.packages++;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const stateKey = ctx.keys.packageState(id);
    // The package's view, its state and the commit's leaves at once: none depends on the others.
    const [view, stored, early] = await Promise.all([
      readView(ctx, id),
      ctx.storage.read(stateKey),
      attempt === 0 ? readEarly(ctx, options.leaves) : undefined,
    ]);
    const previous = stored === undefined ? undefined : parseState(stored.bytes, `${ctx.storage.where} ${stateKey}`);
    const included = view !== undefined && keepsId(ctx.idFilter, view.id);
    if (!included && (previous === undefined || (view !== undefined && options.removeExcluded !== true)))
      return { outcome: 'skipped' };
    const now = ctx.now();
    if (!force && previous !== undefined && view !== undefined && isCurrent(previous, view, ctx.urls.base, now)) {
      ctx.counts.current++;
      return { outcome: 'current', vulnerabilities: vulnerabilitiesOf(view.versions, previous.held) };
    }
    const entries = included ? view.versions : [];
    const refetch = options.refetch;
    const plan = await planPackage(
      ctx,
      id,
      entries,
      previous,
      now,
      refetch && ((version) => refetch(id, version)),
      early,
    );
    const state: PackageState = {
      id: view?.id ?? previous!.id,
      viewCommitKey: view?.commitKey ?? previous!.viewCommitKey,
      baseUrl: ctx.urls.base,
      held: plan.held,
      waiting: plan.waiting,
      quarantined: plan.quarantined,
      removing: plan.removing,
    };
    for (const [version, record] of plan.records)
      await ctx.storage.put(ctx.keys.quarantine(id, version), Buffer.from(JSON.stringify(record)), 'json');
    const listed = entries.filter((entry) => plan.held[entry.version] !== undefined);
    await writeDocuments(ctx, state, view, listed, plan, {
      previous: options.fresh === true ? undefined : previous,
      stateless: stored === undefined,
    });
    const bytes = serializeState(state);
    if (!stored?.bytes.equals(bytes) && !(await ctx.storage.writeIf(stateKey, bytes, stored?.tag))) {
      // Overtaken: the documents just written may be older than the stored state's; made again from it.
      force = true;
      continue;
    }
    await afterState(ctx, id, state, previous, stateKey, bytes);
    const vulnerabilities = vulnerabilitiesOf(listed, plan.held);
    return {
      outcome: 'written',
      vulnerabilities,
      ...(stored === undefined && vulnerabilities.length === 0 ? { noVulnerabilityChange: true } : {}),
    };
  }
  throw new FeedError(
    `${ctx.storage.where} ${ctx.keys.packageState(id)}: the conditional write lost ${MAX_ATTEMPTS} times in a row to other writers`,
  );
}

/**
 * The leaves a commit names for the package, read ahead of the view (by key; a leaf that fails to read is left out:
 * read again where the view names it, its error then thrown).
 */
async function readEarly(
  ctx: FeedContext,
  leaves: readonly LeafRef[] | undefined,
): Promise<ReadonlyMap<string, LeafPackage> | undefined> {
  if (leaves === undefined || leaves.length === 0) return undefined;
  const read = await Promise.all(
    leaves.map((leaf) =>
      ctx
        .reads(() => readLeafPackage(ctx.mirror.store, ctx.mirror.where, { leaf: leaf.key, commitKey: leaf.commitKey }))
        .then(
          (body) => [leaf.key, body] as const,
          () => undefined,
        ),
    ),
  );
  return new Map(read.filter((entry) => entry !== undefined));
}

/** The package's latest view, or undefined when the view has none. */
async function readView(ctx: FeedContext, id: string): Promise<PackageIndex | undefined> {
  const key = packageIndexKey(ctx.mirror.prefix, id);
  const stored = await ctx.storage.read(key);
  return stored === undefined ? undefined : parseIndex(stored.bytes, `${ctx.storage.where} ${key}`);
}

/** The state is the view's latest, for this base URL, with nothing left to remove and no retry due. */
function isCurrent(state: PackageState, view: PackageIndex, base: string, now: number): boolean {
  return (
    state.viewCommitKey === view.commitKey &&
    state.baseUrl === base &&
    state.removing.length === 0 &&
    Object.values(state.waiting).every((waiting) => waiting.due > now)
  );
}

function vulnerabilitiesOf(
  entries: readonly VersionEntry[],
  held: PackageState['held'],
): readonly VulnerabilityEntry[] {
  return vulnerabilityEntriesOf(
    entries.filter((entry) => held[entry.version] !== undefined && entry.type === 'details'),
  );
}

/** How {@link writeDocuments} builds on what is stored. */
interface DocumentBasis {
  /** The state before; undefined: no stored registration item is kept (a new package, or a repair). */
  readonly previous: PackageState | undefined;
  /**
   * The feed has no state for the package (it never held it): its stored documents, if any, are left by a writer
   * that stopped before its state, so they are overwritten whole rather than read first (two GETs fewer a new
   * package). Only when something is listed: with nothing listed, the documents are read so that any such leftovers
   * are deleted.
   */
  readonly stateless: boolean;
}

/**
 * The flat container's version list and the registration of the `listed` versions (all stored by now), side by side:
 * neither names the other.
 */
async function writeDocuments(
  ctx: FeedContext,
  state: PackageState,
  view: PackageIndex | undefined,
  listed: readonly VersionEntry[],
  plan: PackagePlan,
  basis: DocumentBasis,
): Promise<void> {
  const unread = basis.stateless && listed.length > 0;
  await Promise.all([
    writeFlatIndex(ctx, state.id, listed, unread),
    writeRegistrationOf(ctx, state, view, listed, plan, basis.previous, unread),
  ]);
}

/** The flat container's `{lowerid}/index.json`: deleted when nothing is listed; `unread`: written without a read. */
async function writeFlatIndex(
  ctx: FeedContext,
  id: string,
  listed: readonly VersionEntry[],
  unread: boolean,
): Promise<void> {
  const flatKey = ctx.keys.flatIndex(id);
  const flat = unread ? undefined : await ctx.storage.read(flatKey);
  if (listed.length === 0) {
    if (flat !== undefined) await ctx.storage.delete(flatKey);
    return;
  }
  const bytes = Buffer.from(JSON.stringify({ versions: listed.map((entry) => entry.version) }));
  if (flat?.bytes.equals(bytes)) return;
  await ctx.storage.put(flatKey, bytes, 'json');
  ctx.counts.documents++;
}

/** The registration of the `listed` versions; `unread`: written without reading the stored one. */
async function writeRegistrationOf(
  ctx: FeedContext,
  state: PackageState,
  view: PackageIndex | undefined,
  listed: readonly VersionEntry[],
  plan: PackagePlan,
  previous: PackageState | undefined,
  unread: boolean,
): Promise<void> {
  const id = state.id;
  const stored = unread ? NO_REGISTRATION : await readRegistration(ctx.storage, ctx.keys, id);
  const sameBase = previous?.baseUrl === ctx.urls.base;
  const items = await Promise.all(
    listed.map(async (entry) => {
      const version = entry.version;
      const known = stored.items.get(version);
      // An item made from this very leaf (its commit) for this base URL is kept as it is.
      if (known !== undefined && sameBase && (known['commitTimeStamp'] === entry.commitTimeStamp || entry.quarantined))
        return { version, item: known };
      const leafKey = entry.quarantined ? state.held[version]!.leaf : entry.leaf;
      const leaf =
        (!entry.quarantined ? plan.leaves.get(version) : undefined) ??
        (await ctx.reads(() =>
          readLeafPackage(ctx.mirror.store, ctx.mirror.where, { leaf: leafKey, commitKey: entry.commitKey }),
        ));
      const catalogEntry = catalogEntryOf(leaf.body, leafFieldsOf(leaf.body).listed, ctx.urls.nupkg(id, version));
      const item: RegistrationItem = registrationItem(ctx.urls, id, version, entry.commitTimeStamp, catalogEntry);
      return { version, item };
    }),
  );
  const documents =
    items.length === 0 || view === undefined
      ? undefined
      : registrationDocuments(ctx.urls, id, view.commitTimeStamp, items);
  // Awaited first: `counts.documents += await …` would read the count before the write and lose what other packages
  // counted meanwhile.
  const written = await writeRegistration(ctx.storage, ctx.keys, id, stored, documents);
  ctx.counts.documents += written;
}

/** A registration as if none were stored. */
const NO_REGISTRATION: StoredRegistration = { pages: new Map(), items: new Map() };

/** After the state is stored: the removed packages deleted, the waiting marker and the quarantine records kept true. */
async function afterState(
  ctx: FeedContext,
  id: string,
  state: PackageState,
  previous: PackageState | undefined,
  stateKey: string,
  bytes: Buffer,
): Promise<void> {
  const waitingKey = ctx.keys.waiting(id);
  const due = Object.values(state.waiting).map((waiting) => waiting.due);
  if (due.length > 0)
    await ctx.storage.put(waitingKey, Buffer.from(JSON.stringify({ id, due: Math.min(...due) })), 'json');
  else if (previous !== undefined && Object.keys(previous.waiting).length > 0) await ctx.storage.delete(waitingKey);
  for (const version of Object.keys(previous?.quarantined ?? {}))
    if (state.quarantined[version] === undefined) await ctx.storage.delete(ctx.keys.quarantine(id, version));
  if (state.removing.length === 0) return;
  for (const version of state.removing) {
    await ctx.storage.delete(ctx.keys.nupkg(id, version));
    ctx.counts.removed++;
  }
  // Done: the list is cleared, unless another writer moved the state on (it deletes them again, which is harmless).
  const now = await ctx.storage.read(stateKey);
  if (now?.bytes.equals(bytes))
    await ctx.storage.writeIf(stateKey, serializeState({ ...state, removing: [] }), now.tag);
}
