/**
 * For the private feed's tests and benchmark: a catalog written commit by commit with named packages (versions,
 * unlists, deprecations, vulnerabilities, deletes, re-adds, sized packages), its mirror and latest view written in
 * process (`writeMirror`, `keepView`), and the feed kept over it (`keepFeed`) on the mirror's own storage.
 */
import { HttpClient } from '../lambda/catalog/http-client.js';
import type { Mirror } from '../lambda/consumer/mirror.js';
import {
  keepFeed,
  LocalFeedStorage,
  S3FeedStorage,
  type FeedRunResult,
  type FeedStorage,
  type FeedTarget,
} from '../lambda/feed/index.js';
import type { LocalStore } from '../lambda/stores/local-store.js';
import type { CursorStore, SnapshotStore } from '../lambda/stores/types.js';
import { keepView, type ViewDocuments } from '../lambda/view/index.js';
import { attachPackages } from './catalog-packages.js';
import type { GeneratedCatalog, GeneratedCommit, GeneratedLeaf } from './catalog-generator.js';
import type { GeneratedDeprecation, GeneratedVulnerability } from './generated-commit.js';
import type { NupkgDependency } from './nupkg.js';
import { leafPath } from './package-identities.js';
import { formatTicks, parseTicks } from './catalog-time.js';
import type { ViewTestTarget } from './view-harness.js';
import { writeMirror } from './view-mirror.js';

/** One leaf of a commit the test writes. */
export interface LeafSpec {
  readonly id: string;
  readonly version: string;
  readonly delete?: boolean;
  readonly listed?: boolean;
  readonly deprecation?: GeneratedDeprecation;
  readonly vulnerabilities?: readonly GeneratedVulnerability[];
  readonly dependencies?: readonly NupkgDependency[];
  /** Filler bytes in the package (a package of about this size). */
  readonly fillerBytes?: number;
  /** The package's bytes as they are (not a zip: the feed checks only the leaf's hash and size), for large ones. */
  readonly packageBytes?: Buffer;
  readonly bom?: boolean;
}

/** A catalog grown one commit at a time, a second apart, each details leaf with a real package. */
export class FeedCatalog {
  readonly catalog: GeneratedCatalog = { commits: [] };
  private readonly specs = new Map<GeneratedLeaf, LeafSpec>();
  private ticks = parseTicks('2024-01-01T00:00:00.0000000Z');

  /** Appends a commit of `leaves` and gives its details leaves their packages (the same bytes while a package is held). */
  commit(leaves: readonly LeafSpec[]): GeneratedCommit {
    this.ticks += 10_000_000n;
    const timestamp = formatTicks(this.ticks, false);
    const commit: GeneratedCommit = {
      commitId: `00000000-0000-4000-8000-${String(this.catalog.commits.length + 1).padStart(12, '0')}`,
      timestamp,
      leaves: leaves.map((spec) => {
        const leaf: GeneratedLeaf = {
          id: spec.id,
          version: spec.version,
          type: spec.delete ? 'PackageDelete' : 'PackageDetails',
          path: leafPath(this.ticks, spec.id, spec.version),
          ...(spec.delete ? {} : { listed: spec.listed ?? true }),
          ...(spec.deprecation === undefined ? {} : { deprecation: spec.deprecation }),
          ...(spec.vulnerabilities === undefined ? {} : { vulnerabilities: spec.vulnerabilities }),
          ...(spec.bom ? { bom: true } : {}),
          ...(spec.packageBytes === undefined
            ? {}
            : { package: { bytes: spec.packageBytes, targetFramework: 'net10.0', dependencies: [] } }),
        };
        this.specs.set(leaf, spec);
        return leaf;
      }),
    };
    this.catalog.commits.push(commit);
    attachPackages(this.catalog, {
      dependencies: (leaf) => this.specs.get(leaf)?.dependencies ?? [],
      fillerBytes: (leaf) => this.specs.get(leaf)?.fillerBytes ?? 0,
    });
    return commit;
  }

  /** The latest details leaf of `id` `version` (its package's bytes, its hash). */
  latest(id: string, version: string): GeneratedLeaf {
    for (const commit of [...this.catalog.commits].reverse())
      for (const leaf of commit.leaves)
        if (leaf.type === 'PackageDetails' && leaf.id.toLowerCase() === id.toLowerCase() && leaf.version === version)
          return leaf;
    throw new Error(`no details leaf of ${id} ${version}`);
  }
}

/** A mirror with its view and feed storage, as a test opens them. */
export interface FeedPlace {
  readonly store: SnapshotStore;
  readonly cursors: CursorStore;
  readonly documents: ViewDocuments;
  readonly mirror: Mirror;
  readonly storage: FeedStorage;
}

/** The feed's storage beside a test's mirror: its bucket, or its folder. */
export function feedStorageOf(target: ViewTestTarget): FeedStorage {
  return target.harness === undefined
    ? new LocalFeedStorage(target.mirror.where, target.store as LocalStore)
    : new S3FeedStorage(target.harness.bucket, target.harness.clients.s3);
}

/** Writes `commits` into the mirror (leaves, manifests, watermark) and brings the latest view up to them. */
export async function mirrorCommits(place: FeedPlace, commits: readonly GeneratedCommit[]): Promise<void> {
  await writeMirror(place.store, place.mirror.prefix, commits);
  await keepView(
    { documents: place.documents, prefix: place.mirror.prefix },
    { mirror: place.mirror, cursors: place.cursors, lease: false },
  );
}

/** Fast retries: a test's faults are few, and waiting proves nothing. */
export const FEED_TEST_RETRY = { attempts: 3, baseDelayMs: 1, maxDelayMs: 5, maxRetryAfterMs: 1_000 } as const;

/** Keeps the feed of `place` from `source` (a replica's service index) up to the view, in process. */
export async function runFeed(
  place: FeedPlace,
  source: string,
  baseUrl: string,
  options: Partial<FeedTarget> & { readonly batchSize?: number } = {},
): Promise<FeedRunResult> {
  const http = options.http ?? new HttpClient({ retry: FEED_TEST_RETRY });
  try {
    const { batchSize, ...target } = options;
    return await keepFeed(
      { storage: place.storage, mirror: place.mirror, baseUrl, http, source, ...target },
      { cursors: place.cursors, lease: false, ...(batchSize === undefined ? {} : { batchSize }) },
    );
  } finally {
    if (options.http === undefined) await http.close();
  }
}

/**
 * A feed storage that checks, at every write and delete, the order a client relies on: every version a flat index
 * or a registration document names has its package stored, and no package is deleted while an index names it.
 * What breaks it is recorded in {@link violations}, with the key.
 */
export class OrderCheckedStorage implements FeedStorage {
  readonly violations: string[] = [];
  readonly where: string;

  constructor(
    private readonly inner: FeedStorage,
    private readonly feedRoot: string,
  ) {
    this.where = inner.where;
  }

  read(key: string) {
    return this.inner.read(key);
  }
  writeIf(key: string, bytes: Buffer, expected: string | undefined) {
    return this.inner.writeIf(key, bytes, expected);
  }
  putStream(key: string, body: AsyncIterable<Uint8Array>) {
    return this.inner.putStream(key, body);
  }
  list(prefix: string) {
    return this.inner.list(prefix);
  }

  async put(key: string, bytes: Buffer, kind: 'json' | 'nupkg'): Promise<void> {
    const flat = new RegExp(`^${this.feedRoot}flat/([^/]+)/index\\.json$`).exec(key);
    if (flat) {
      const { versions } = JSON.parse(bytes.toString('utf8')) as { versions: string[] };
      for (const version of versions)
        await this.expectStored(key, `${this.feedRoot}flat/${flat[1]}/${version}/${flat[1]}.${version}.nupkg`);
    }
    if (key.startsWith(`${this.feedRoot}registration/`))
      for (const match of bytes.toString('utf8').matchAll(/"packageContent":"[^"]*?\/flat\/([^"]+\.nupkg)"/g))
        await this.expectStored(key, `${this.feedRoot}flat/${match[1]}`);
    await this.inner.put(key, bytes, kind);
  }

  async delete(key: string): Promise<void> {
    const nupkg = new RegExp(`^${this.feedRoot}flat/([^/]+)/([^/]+)/[^/]+\\.nupkg$`).exec(key);
    if (nupkg) {
      const index = await this.inner.read(`${this.feedRoot}flat/${nupkg[1]}/index.json`);
      if (index && (JSON.parse(index.bytes.toString('utf8')) as { versions: string[] }).versions.includes(nupkg[2]!))
        this.violations.push(`${key} deleted while its flat index names it`);
    }
    await this.inner.delete(key);
  }

  private async expectStored(documentKey: string, packageKey: string): Promise<void> {
    if ((await this.inner.read(packageKey)) === undefined)
      this.violations.push(`${documentKey} names ${packageKey}, which is not stored`);
  }
}
