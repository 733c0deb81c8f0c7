/**
 * The catalog replica's `PackageBaseAddress/3.0.0` resource (the "flat container", nuget.org's `v3-flatcontainer/`):
 * the `.nupkg` of every package a generated catalog holds now, where its details leaves carry one
 * (testkit/catalog-packages.ts), at `{lowerid}/{lowerversion}/{lowerid}.{lowerversion}.nupkg`, and each id's version
 * list at `{lowerid}/index.json`. A delete leaf removes the package, a later details leaf brings it back.
 *
 * What a package source does to a mirror, on demand: a package not served yet (a CDN behind the catalog after a
 * push: 404, and absent from the version list, until released), and other bytes than the leaf's hash (a corrupt or
 * re-signed copy).
 */
import { compareVersions } from '../lambda/contract/version-order.js';
import type { GeneratedCatalog } from './catalog-generator.js';
import { versionIdentity } from './package-identities.js';
import type { ServedDocument } from './replica-source.js';

/** URL path of the flat container, as the replica's service index names it (`PackageBaseAddress/3.0.0`). */
export const FLAT_CONTAINER_PATH = '/v3-flatcontainer/';

/** A package the flat container serves. */
export interface ServedPackage {
  /** The id as its newest details leaf gives it. */
  readonly id: string;
  /** The version as its newest details leaf gives it (full). */
  readonly version: string;
  /** The bytes served (the leaf's package, or what a test put in their place). */
  readonly bytes: Buffer;
}

interface State {
  readonly catalog: GeneratedCatalog;
  readonly commitCount: number;
  /** lower id → identity version → package. */
  readonly packages: Map<string, Map<string, ServedPackage>>;
}

const identityOf = (id: string, version: string): string => `${id.toLowerCase()}/${versionIdentity(version)}`;

/** The flat container of a catalog replica. See the module documentation. */
export class FlatContainer {
  private state: State | undefined;
  private readonly withheld = new Set<string>();
  private readonly replaced = new Map<string, Buffer>();

  /** @param catalog the generated catalog served now (`undefined` while the replica serves fixtures: nothing here). */
  constructor(private readonly catalog: () => GeneratedCatalog | undefined) {}

  /** The URL path of the `.nupkg` of `id` `version` (lowercased, normalized, without build metadata). */
  static packagePath(id: string, version: string): string {
    const lowerId = id.toLowerCase();
    const lowerVersion = versionIdentity(version);
    return `${FLAT_CONTAINER_PATH}${lowerId}/${lowerVersion}/${lowerId}.${lowerVersion}.nupkg`;
  }

  /** The URL path of the version list of `id`. */
  static indexPath(id: string): string {
    return `${FLAT_CONTAINER_PATH}${id.toLowerCase()}/index.json`;
  }

  /** Answers 404 for the package (and leaves it out of its id's version list) until {@link release}. */
  withhold(id: string, version: string): void {
    this.withheld.add(identityOf(id, version));
  }

  /** Serves a withheld package again. */
  release(id: string, version: string): void {
    this.withheld.delete(identityOf(id, version));
  }

  /** Serves `bytes` instead of the leaf's package (whose hash they then need not match). */
  replaceBytes(id: string, version: string, bytes: Buffer): void {
    this.replaced.set(identityOf(id, version), bytes);
  }

  /**
   * Serves the package with one byte changed in its middle: the leaf's `packageSize`, not its `packageHash`.
   *
   * @throws when the catalog holds no such package now.
   */
  corrupt(id: string, version: string): void {
    const served = this.current()?.packages.get(id.toLowerCase())?.get(versionIdentity(version));
    if (!served) throw new Error(`the flat container holds no ${id} ${version}`);
    const bytes = Buffer.from(served.bytes);
    const middle = bytes.length >> 1;
    bytes[middle] = bytes[middle]! ^ 0xff;
    this.replaceBytes(id, version, bytes);
  }

  /** Undoes every {@link withhold} and replacement. */
  reset(): void {
    this.withheld.clear();
    this.replaced.clear();
  }

  /** Every package the catalog holds now, as served (withheld ones left out), by id then version order. */
  served(): ServedPackage[] {
    return [...(this.current()?.packages.keys() ?? [])].sort().flatMap((lowerId) => this.versionsOf(lowerId));
  }

  /** The document at `path` under {@link FLAT_CONTAINER_PATH}, or `undefined` (a 404). */
  resolve(path: string): ServedDocument | undefined {
    const match = /^\/v3-flatcontainer\/([^/]+)\/(?:index\.json|([^/]+)\/([^/]+)\.nupkg)$/.exec(path);
    if (!match) return undefined;
    const lowerId = decodeURIComponent(match[1]!);
    if (match[2] === undefined) {
      const versions = this.versionsOf(lowerId);
      if (versions.length === 0) return undefined;
      const body = JSON.stringify({ versions: versions.map((p) => versionIdentity(p.version)) }, null, 2);
      return { body: Buffer.from(body), contentType: 'application/json' };
    }
    const served = this.versionsOf(lowerId).find((p) => FlatContainer.packagePath(p.id, p.version) === path);
    return served ? { body: served.bytes, contentType: 'application/octet-stream' } : undefined;
  }

  private versionsOf(lowerId: string): ServedPackage[] {
    const byVersion = this.current()?.packages.get(lowerId);
    if (!byVersion) return [];
    return [...byVersion.values()]
      .filter((p) => !this.withheld.has(identityOf(p.id, p.version)))
      .map((p) => ({ ...p, bytes: this.replaced.get(identityOf(p.id, p.version)) ?? p.bytes }))
      .sort((a, b) => compareVersions(a.version, b.version));
  }

  /** What the catalog holds now: its commits replayed in order (recomputed when it grew or was replaced). */
  private current(): State | undefined {
    const catalog = this.catalog();
    if (!catalog) return undefined;
    if (this.state?.catalog === catalog && this.state.commitCount === catalog.commits.length) return this.state;
    const packages = new Map<string, Map<string, ServedPackage>>();
    for (const commit of catalog.commits) {
      for (const leaf of commit.leaves) {
        const lowerId = leaf.id.toLowerCase();
        const version = versionIdentity(leaf.version);
        if (leaf.type === 'PackageDelete') {
          packages.get(lowerId)?.delete(version);
        } else if (leaf.package) {
          if (!packages.has(lowerId)) packages.set(lowerId, new Map());
          packages.get(lowerId)!.set(version, { id: leaf.id, version: leaf.version, bytes: leaf.package.bytes });
        }
      }
    }
    this.state = { catalog, commitCount: catalog.commits.length, packages };
    return this.state;
  }
}
