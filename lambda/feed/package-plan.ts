/**
 * A package's next state, from the latest view and the state before: which versions are stored (downloading those
 * whose leaf gives bytes the feed does not hold), which wait, which are quarantined, which are to be removed. The
 * downloads happen here, so every package the indexes will name is stored before they are written.
 */
import type { VersionEntry } from '../view/package-index.js';
import type { FeedContext } from './feed-context.js';
import { readLeafPackage, type LeafPackage } from './leaf-package.js';
import { fetchPackage, nextTry } from './package-fetch.js';
import type { HeldVersion, PackageState, QuarantinedVersion, WaitingVersion } from './package-state.js';

/** A package's next state, and what it took to make it. */
export interface PackagePlan {
  readonly held: Record<string, HeldVersion>;
  readonly waiting: Record<string, WaitingVersion>;
  readonly quarantined: Record<string, QuarantinedVersion>;
  readonly removing: string[];
  /** The leaves read, by identity version (the registration reuses them). */
  readonly leaves: Map<string, LeafPackage>;
  /** New quarantine records to write, by identity version. */
  readonly records: Map<string, Record<string, unknown>>;
}

/**
 * Plans the package `id` from `entries` (its view entries; none: everything removed) and the `previous` state; the
 * versions `refetch` names are downloaded again as if not held (a repair of bytes that are no longer the leaf's).
 */
export async function planPackage(
  ctx: FeedContext,
  id: string,
  entries: readonly VersionEntry[],
  previous: PackageState | undefined,
  now: number,
  refetch?: (version: string) => boolean,
  /** Leaves already read, by key (read ahead with the view). */
  early?: ReadonlyMap<string, LeafPackage>,
): Promise<PackagePlan> {
  const plan: PackagePlan = {
    held: {},
    waiting: {},
    quarantined: {},
    removing: [],
    leaves: new Map(),
    records: new Map(),
  };
  const planned = await Promise.all(
    entries.map((entry) => planVersion(ctx, id, entry, previous, now, plan, refetch?.(entry.version) === true, early)),
  );
  // In the view's order (versions lowest first), so equal plans are equal bytes.
  for (const [i, entry] of entries.entries()) {
    const one = planned[i]!;
    if (one.held) plan.held[entry.version] = one.held;
    if (one.waiting) plan.waiting[entry.version] = one.waiting;
    if (one.quarantined) plan.quarantined[entry.version] = one.quarantined;
  }
  const removing = new Set([...Object.keys(previous?.held ?? {}), ...(previous?.removing ?? [])]);
  for (const version of removing) if (plan.held[version] === undefined) plan.removing.push(version);
  return plan;
}

interface VersionPlan {
  held?: HeldVersion;
  waiting?: WaitingVersion;
  quarantined?: QuarantinedVersion;
}

async function planVersion(
  ctx: FeedContext,
  id: string,
  entry: VersionEntry,
  previous: PackageState | undefined,
  now: number,
  plan: PackagePlan,
  refetch: boolean,
  early: ReadonlyMap<string, LeafPackage> | undefined,
): Promise<VersionPlan> {
  const version = entry.version;
  const held = refetch ? undefined : previous?.held[version];
  // A delete: nothing held (removed). A leaf the mirror set aside: its bytes are unknown, what is held stays.
  if (entry.type === 'delete') return {};
  if (entry.quarantined) return held === undefined ? {} : { held };
  if (held?.leaf === entry.leaf) return { held };
  const leaf =
    early?.get(entry.leaf) ?? (await ctx.reads(() => readLeafPackage(ctx.mirror.store, ctx.mirror.where, entry)));
  plan.leaves.set(version, leaf);
  const keep = held === undefined ? {} : { held };
  const quarantine = (reason: string, record: Record<string, unknown> = {}): VersionPlan => {
    ctx.counts.quarantined++;
    plan.records.set(version, { id, version: leaf.body['version'] ?? version, leaf: entry.leaf, reason, ...record });
    return { ...keep, quarantined: { leaf: entry.leaf, reason } };
  };
  const { digest } = leaf;
  if ('problem' in digest)
    return previous?.quarantined[version]?.leaf === entry.leaf
      ? { ...keep, quarantined: previous.quarantined[version] }
      : quarantine(digest.problem);
  if (held !== undefined && held.hash === digest.hash && held.size === digest.size)
    return { held: { leaf: entry.leaf, ...digest } };
  const before = previous?.quarantined[version];
  if (before?.leaf === entry.leaf) return { ...keep, quarantined: before };
  if (digest.size > ctx.maxPackageBytes)
    return quarantine(
      `the leaf's packageSize of ${digest.size} bytes is more than the feed takes (${ctx.maxPackageBytes})`,
    );
  const waited = previous?.waiting[version]?.leaf === entry.leaf ? previous.waiting[version] : undefined;
  if (waited !== undefined && waited.due > now) return { ...keep, waiting: waited };
  const outcome = await fetchPackage(ctx, id, version, digest);
  if (outcome.kind === 'stored') {
    ctx.counts.stored++;
    ctx.counts.storedBytes += digest.size;
    return { held: { leaf: entry.leaf, ...digest } };
  }
  if (outcome.kind === 'mismatch')
    return quarantine('the bytes served are not what the leaf says', {
      url: outcome.error.url,
      expected: outcome.error.expected,
      actual: outcome.error.actual,
    });
  const since = waited?.since ?? now;
  const attempts = (waited?.attempts ?? 0) + 1;
  const due = nextTry(ctx.wait, since, attempts, now);
  if (due === undefined)
    return quarantine(`not served by the source for ${Math.round((now - since) / 60_000)} min (${outcome.reason})`, {
      url: ctx.source.packageUrl(id, version),
    });
  ctx.counts.waiting++;
  return { ...keep, waiting: { leaf: entry.leaf, ...digest, since, attempts, due, reason: outcome.reason } };
}
