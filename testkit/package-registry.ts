/**
 * What a generated catalog has done to packages so far: which id + versions exist, which are
 * deleted, which are unlisted. The generator consults it so that deletes name packages that
 * exist, new versions are really new, and a grown catalog continues where it stopped.
 */
import { packageKey } from './package-identities.js';
import type { Prng } from './prng.js';

/** One package id + version as the registry knows it. */
export interface RegisteredVersion {
  readonly key: string;
  readonly id: string;
  /** The version string as last pushed (full, with build metadata). */
  version: string;
  live: boolean;
  listed: boolean;
}

/** A set with O(1) add, delete and uniform random pick. */
class PickableSet<T> {
  private readonly items: T[] = [];
  private readonly positions = new Map<T, number>();

  /** How many items. */
  get size(): number {
    return this.items.length;
  }

  add(item: T): void {
    if (this.positions.has(item)) return;
    this.positions.set(item, this.items.length);
    this.items.push(item);
  }

  delete(item: T): void {
    const at = this.positions.get(item);
    if (at === undefined) return;
    const last = this.items.pop()!;
    this.positions.delete(item);
    if (at < this.items.length) {
      this.items[at] = last;
      this.positions.set(last, at);
    }
  }

  pick(prng: Prng): T | undefined {
    return this.items.length === 0 ? undefined : prng.pick(this.items);
  }
}

/** The registry of packages a generated catalog has touched. */
export class PackageRegistry {
  /** Package ids by lower-cased id, with the casing first registered. */
  private readonly ids = new Map<string, { id: string; lastVersion: string }>();
  private readonly idList = new PickableSet<string>();
  private readonly versions = new Map<string, RegisteredVersion>();
  private readonly live = new PickableSet<RegisteredVersion>();
  private readonly deleted = new PickableSet<RegisteredVersion>();

  /** How many distinct package ids exist. */
  get packageCount(): number {
    return this.ids.size;
  }

  /** True when a package with this id (any casing) exists. */
  hasId(id: string): boolean {
    return this.ids.has(id.toLowerCase());
  }

  /** The registered id + version, or undefined. */
  get(id: string, version: string): RegisteredVersion | undefined {
    return this.versions.get(packageKey(id, version));
  }

  /** A random existing package id with its latest pushed version. */
  pickPackage(prng: Prng): { id: string; lastVersion: string } | undefined {
    const lower = this.idList.pick(prng);
    return lower === undefined ? undefined : this.ids.get(lower);
  }

  /** A random id + version that exists now (not deleted). */
  pickLive(prng: Prng): RegisteredVersion | undefined {
    return this.live.pick(prng);
  }

  /** A random deleted id + version. */
  pickDeleted(prng: Prng): RegisteredVersion | undefined {
    return this.deleted.pick(prng);
  }

  /** Records a PackageDetails leaf: the id + version exists (again) with this listing. */
  recordDetails(id: string, version: string, listed: boolean): void {
    const lower = id.toLowerCase();
    const pkg = this.ids.get(lower);
    const key = packageKey(id, version);
    const existing = this.versions.get(key);
    if (!pkg) {
      this.ids.set(lower, { id, lastVersion: version });
      this.idList.add(lower);
    } else if (!existing) {
      pkg.lastVersion = version;
    }
    const entry = existing ?? { key, id: pkg?.id ?? id, version, live: true, listed };
    entry.version = version;
    entry.live = true;
    entry.listed = listed;
    this.versions.set(key, entry);
    this.live.add(entry);
    this.deleted.delete(entry);
  }

  /** Records a PackageDelete leaf. */
  recordDelete(id: string, version: string): void {
    const key = packageKey(id, version);
    let entry = this.versions.get(key);
    if (!entry) {
      // A hand-made catalog may delete what it never pushed; remember it as deleted.
      entry = { key, id, version, live: false, listed: false };
      this.versions.set(key, entry);
    }
    entry.live = false;
    this.live.delete(entry);
    this.deleted.add(entry);
  }
}
