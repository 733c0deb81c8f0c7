/**
 * For the feed's rows (feed-row.ts): the mirror and latest view a row's feed reads, written straight into S3 or a
 * folder (3 leaves a commit, nuget.org's shape; details leaves with the packages' hash and size), and the feed of the
 * demo catalog (`npm run demo`'s 500 commits) on a folder, for its build time and size.
 */
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpClient } from '../lambda/catalog/index.js';
import { consumerKey, type SnapshotReader } from '../lambda/consumer/index.js';
import {
  commitKeyOf,
  formatTimestamp,
  leafKey,
  manifestKey,
  parseTimestamp,
  VIEW_CONSUMER,
  watermarkKeyOf,
} from '../lambda/contract/index.js';
import { keepFeed, LocalFeedStorage } from '../lambda/feed/index.js';
import { LocalStore } from '../lambda/stores/index.js';
import { keepView, LocalViewDocuments, type ViewDocuments } from '../lambda/view/index.js';
import { attachPackages, CatalogReplica, generateCatalog, writeMirror } from '../testkit/index.js';
import { eachBounded } from './bounded.js';
import type { SourcePackage } from './feed-source.js';
import { MemoryCursorStore } from './memory-cursor-store.js';

/** Where a mirror is written: its store, its view's documents, and how its place is named (`s3://bucket/`, a folder/). */
export interface MirrorPlace {
  readonly store: SnapshotReader & {
    putLeaf(key: string, body: Buffer, metadata: Readonly<Record<string, string>>): Promise<void>;
    putJson(key: string, value: unknown): Promise<void>;
  };
  readonly documents: ViewDocuments;
  readonly where: string;
}

/** The demo catalog's feed: its build time and size. */
export interface DemoFeed {
  readonly commits: number;
  readonly packages: number;
  readonly buildMs: number;
  readonly feedObjects: number;
  readonly feedBytes: number;
  readonly stateObjects: number;
  readonly stateBytes: number;
}

/** Writes a mirror of `packages` (3 leaves a commit) and its latest view under `prefix`; the view's cursor. */
export async function mirrorOf(
  place: MirrorPlace,
  prefix: string,
  packages: readonly SourcePackage[],
  digests: readonly { hash: string; size: number }[],
): Promise<{ ticks: string; commitId: string }> {
  const { store, documents } = place;
  const start = parseTimestamp('2024-01-01T00:00:00Z');
  const commits = Array.from({ length: Math.ceil(packages.length / 3) }, (_, n) => {
    const timestamp = formatTimestamp(start + BigInt(n + 1) * 10_000_000n);
    return { at: n * 3, timestamp, commitId: `00000000-0000-4000-8000-${String(n * 3).padStart(12, '0')}` };
  });
  // Commits written side by side (the watermark last): only the measured runs need to be in the mirror's order.
  await eachBounded(commits, 16, async ({ at, timestamp, commitId }) => {
    const key = commitKeyOf(timestamp);
    const leaves = await Promise.all(
      packages.slice(at, at + 3).map(async (pkg, i) => {
        const leaf = leafKey(prefix, key, pkg.id, pkg.version);
        const digest = digests[at + i]!;
        const body = {
          '@id': `https://catalog.bench.test/${pkg.id}.${pkg.version}.json`,
          '@type': ['PackageDetails', 'catalog:Permalink'],
          'catalog:commitId': commitId,
          'catalog:commitTimeStamp': timestamp,
          id: pkg.id,
          version: pkg.version,
          authors: 'bench',
          description: 'A package of the feed benchmark.',
          listed: true,
          packageHash: digest.hash,
          packageHashAlgorithm: 'SHA512',
          packageSize: digest.size,
          published: timestamp,
        };
        await store.putLeaf(leaf, Buffer.from(JSON.stringify(body)), {});
        return { key: leaf, id: pkg.id, version: pkg.version, type: 'PackageDetails' };
      }),
    );
    leaves.sort((a, b) => (a.key < b.key ? -1 : 1));
    await store.putJson(manifestKey(prefix, key), { commitId, commitTimeStamp: timestamp, leaves });
  });
  const last = commits[commits.length - 1]!;
  await store.putJson(watermarkKeyOf(prefix), {
    cursor: last.timestamp,
    commitId: last.commitId,
    commitKey: commitKeyOf(last.timestamp),
    updatedAt: new Date(0).toISOString(),
  });
  const mirror = { store, prefix, where: `${place.where}${prefix}` };
  const cursors = new MemoryCursorStore(0);
  await keepView({ documents, prefix }, { mirror, cursors, lease: false });
  const view = (await cursors.read(consumerKey(mirror, VIEW_CONSUMER)))!;
  return { ticks: String(view.value), commitId: view.commitId ?? '' };
}

/** The feed of the demo catalog (`npm run demo`: 500 commits), on a folder: its build time and size. */
export async function demoFeed(): Promise<DemoFeed> {
  const catalog = generateCatalog({
    commits: 500,
    seed: 2017,
    leavesPerCommit: [1, 4],
    sameMillisecondPairs: 2,
    semver2Ratio: 0.1,
  });
  attachPackages(catalog);
  const replica = await CatalogReplica.start({ catalog });
  const dir = await mkdtemp(join(tmpdir(), 'catalog-sync-feed-demo-'));
  try {
    const store = new LocalStore(dir);
    const mirror = { store, prefix: '', where: dir };
    await writeMirror(store, '', catalog.commits);
    await keepView(
      { documents: new LocalViewDocuments(dir, store), prefix: '' },
      { mirror, cursors: store, lease: false },
    );
    const http = new HttpClient();
    const started = performance.now();
    const result = await keepFeed(
      {
        storage: new LocalFeedStorage(dir, store),
        mirror,
        baseUrl: 'https://feed.example.test/',
        http,
        source: replica.serviceIndexUrl,
      },
      { cursors: store, lease: false },
    );
    const buildMs = Math.round(performance.now() - started);
    await http.close();
    const feed = await folderSize(join(dir, 'feed'));
    const state = await folderSize(join(dir, 'feed-state'));
    return {
      commits: result.commits,
      packages: result.stored,
      buildMs,
      feedObjects: feed.files,
      feedBytes: feed.bytes,
      stateObjects: state.files,
      stateBytes: state.bytes,
    };
  } finally {
    await replica.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

async function folderSize(dir: string): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    files++;
    bytes += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return { files, bytes };
}
