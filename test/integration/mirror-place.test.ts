/**
 * A wrong place is an error, and reading never writes (issue 29, part 4), through the library on the folder and on
 * S3: a folder that does not exist, an empty folder, a folder that is not a mirror, a subfolder of a mirror, a wrong
 * prefix, an empty bucket, a bucket that does not exist. Each throws `NoMirrorError` (`CS_ERR_NO_MIRROR`) naming the
 * place, what is missing and what was found near it, from `checkMirror`, `readCommits` (following too), `consume`,
 * `keepView` and `rebuildView`, and leaves the place as it was. A mirror with no commit yet reads as empty and is
 * waited on; a reader deployed with its follower (`awaitMirror`) takes a place not yet written as empty.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkMirror,
  consume,
  MirrorState,
  NoMirrorError,
  readCommits,
  WakeUp,
  type Mirror,
} from '../../lambda/consumer/index.js';
import { folderConsumerStores } from '../../lambda/consumer/open.js';
import { commitKeyOf, leafKey } from '../../lambda/contract/keys.js';
import { S3SnapshotStore } from '../../lambda/stores/s3-store.js';
import type { CursorStore, SnapshotStore } from '../../lambda/stores/types.js';
import {
  folderViewStores,
  keepView,
  rebuildView,
  S3ViewDocuments,
  type ViewDocuments,
} from '../../lambda/view/index.js';
import { uniqueName } from '../../testkit/env.js';
import { generateCatalog } from '../../testkit/catalog-generator.js';
import { SyncHarness } from '../../testkit/sync-harness.js';
import { writeMirror } from '../../testkit/view-mirror.js';

const catalog = generateCatalog({ commits: 3, seed: 29, deleteRatio: 0 });

/** Every file and folder under `path` with its bytes (folders as null), or 'absent'. */
function tree(path: string): Map<string, Buffer | null> | 'absent' {
  try {
    statSync(path);
  } catch {
    return 'absent';
  }
  const found = new Map<string, Buffer | null>();
  const walk = (dir: string, relative: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const name = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) {
        found.set(name, null);
        walk(join(dir, entry.name), name);
      } else found.set(name, readFileSync(join(dir, entry.name)));
    }
  };
  walk(path, '');
  return found;
}

/** One wrong place: the mirror to read, the cursors and view documents there, what the error must say, and what is there now. */
interface WrongPlace {
  readonly mirror: Mirror;
  readonly cursors: CursorStore;
  readonly documents: ViewDocuments;
  /** Besides the place itself, what the message must say. */
  readonly says: string;
  /** The place's contents, compared before and after. */
  contents(): Promise<unknown>;
}

/** Every way of reading the place: each must throw NoMirrorError and write nothing. */
const readers: [string, (place: WrongPlace) => Promise<unknown>][] = [
  ['checkMirror', (place) => checkMirror(place.mirror)],
  [
    'readCommits',
    async (place) => {
      for await (const _ of readCommits(place.mirror)) return;
    },
  ],
  [
    'readCommits following',
    async (place) => {
      for await (const _ of readCommits(place.mirror, { follow: true, poll: { minMs: 1, maxMs: 1 } })) return;
    },
  ],
  ['consume', (place) => consume('indexer', () => undefined, { mirror: place.mirror, cursors: place.cursors })],
  [
    'keepView',
    (place) =>
      keepView(
        { documents: place.documents, prefix: place.mirror.prefix },
        { mirror: place.mirror, cursors: place.cursors, follow: true },
      ),
  ],
  [
    'rebuildView',
    (place) => rebuildView({ documents: place.documents, prefix: place.mirror.prefix }, place.mirror, place.cursors),
  ],
];

async function expectRefused(place: WrongPlace): Promise<void> {
  const before = await place.contents();
  for (const [name, read] of readers) {
    const error = await read(place).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error, name).toBeInstanceOf(NoMirrorError);
    expect(error).toMatchObject({ code: 'CS_ERR_NO_MIRROR', where: place.mirror.where, prefix: place.mirror.prefix });
    expect((error as Error).message, name).toContain(
      `${place.mirror.where}: no mirror here: no ${place.mirror.prefix}watermark.json, no manifests under ${place.mirror.prefix}commits/`,
    );
    expect((error as Error).message, name).toContain(place.says);
  }
  expect(await place.contents()).toEqual(before);
  expect(await place.cursors.read('indexer')).toBeUndefined();
}

describe('a place that holds no mirror (local folder)', () => {
  // Made when the file is collected: the cases name folders under it.
  const root = mkdtempSync(join(tmpdir(), 'catalog-sync-place-'));
  beforeAll(async () => {
    await writeMirror(folderConsumerStores(join(root, 'mirror')).mirror.store as SnapshotStore, '', catalog.commits);
    await writeMirror(
      folderConsumerStores(join(root, 'prefixed')).mirror.store as SnapshotStore,
      'nuget/',
      catalog.commits,
    );
    mkdirSync(join(root, 'empty'));
    mkdirSync(join(root, 'other', 'docs'), { recursive: true });
    writeFileSync(join(root, 'other', 'notes.txt'), 'not a mirror');
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it.each<[string, string, string, string]>([
    ['does not exist', 'missing', '', '(the folder does not exist)'],
    ['is empty', 'empty', '', 'no leaves under leaves/'],
    ['is not a mirror', 'other', '', 'no leaves under leaves/'],
    ['is a folder of a mirror', 'mirror/commits', '', `(the folder lies inside the mirror in ${join(root, 'mirror')})`],
    ['has a mirror, not under the prefix given', 'mirror', 'nuget/', '(there is a mirror here with no prefix)'],
    ['has a mirror under a prefix, none given', 'prefixed', '', '(there is a mirror here under the prefix "nuget/")'],
  ])(
    'a folder that %s: every reader throws NoMirrorError naming it, and nothing is written',
    async (_, folder, prefix, says) => {
      const stores = folderViewStores(join(root, folder), { prefix });
      await expectRefused({
        mirror: stores.mirror,
        cursors: stores.cursors,
        documents: stores.documents,
        says,
        contents: async () => tree(join(root, folder)),
      });
    },
  );
});

describe('a place that holds no mirror (S3 + DynamoDB)', () => {
  let harness: SyncHarness;
  beforeAll(async () => {
    harness = await SyncHarness.create();
    await writeMirror(harness.snapshots, 'nuget/', catalog.commits);
  });
  afterAll(() => {
    harness.clients.dynamo.destroy();
    harness.clients.s3.destroy();
  });

  function placeIn(bucket: string, prefix: string, says: string): WrongPlace {
    return {
      mirror: { store: new S3SnapshotStore(bucket, harness.clients.s3), prefix, where: `s3://${bucket}/${prefix}` },
      cursors: harness.store,
      documents: new S3ViewDocuments(bucket, harness.clients.s3),
      says,
      contents: async () => (bucket === harness.bucket ? harness.keys() : 'no such bucket'),
    };
  }

  it('a wrong prefix, a prefix forgotten, a bucket that does not exist: every reader throws NoMirrorError naming it, and nothing is written', async () => {
    await expectRefused(placeIn(harness.bucket, 'nuget/v3/', '(there is a mirror here under the prefix "nuget/")'));
    await expectRefused(placeIn(harness.bucket, 'other/', 'no leaves under other/leaves/'));
    await expectRefused(placeIn(harness.bucket, '', 'no leaves under leaves/'));
    await expectRefused(placeIn(uniqueName('missing'), '', '(the bucket does not exist)'));
  });
});

describe.each(['local folder', 'S3 + DynamoDB'] as const)('a mirror with no commit yet: %s', (kind) => {
  it('is told from no mirror, reads as empty, is waited on when following; a reader deployed with its follower awaits an unwritten place', async () => {
    const harness = kind === 'S3 + DynamoDB' ? await SyncHarness.create() : undefined;
    const dir = mkdtempSync(join(tmpdir(), 'catalog-sync-place-'));
    try {
      const stores = harness
        ? { store: harness.snapshots, cursors: harness.store as CursorStore, where: `s3://${harness.bucket}/` }
        : { ...folderConsumerStores(dir).mirror, cursors: folderConsumerStores(dir).cursors };
      const mirror: Mirror = { store: stores.store, prefix: '', where: stores.where };
      const writer = stores.store as SnapshotStore;
      // Not written yet: no mirror, unless the reader is deployed with its follower.
      await expect(checkMirror(mirror)).rejects.toBeInstanceOf(NoMirrorError);
      const awaited: string[] = [];
      for await (const commit of readCommits(mirror, { awaitMirror: true })) awaited.push(commit.commitKey);
      expect(awaited).toEqual([]);
      // The follower's first leaf: a mirror, with no commit yet.
      const first = catalog.commits[0]!;
      const key = leafKey('', commitKeyOf(first.timestamp), first.leaves[0]!.id, first.leaves[0]!.version);
      await writer.putLeaf(key, Buffer.from('{}'), {});
      expect(await checkMirror(mirror)).toBe(MirrorState.empty);
      const none: string[] = [];
      for await (const commit of readCommits(mirror)) none.push(commit.commitKey);
      expect(none).toEqual([]);
      // Following: it waits, and reads the first commits once the watermark is written.
      const wake = new WakeUp();
      const stop = new AbortController();
      const delivered: string[] = [];
      const reading = (async () => {
        for await (const commit of readCommits(mirror, {
          follow: true,
          wake,
          signal: stop.signal,
          poll: { minMs: 60_000, maxMs: 60_000 },
        })) {
          delivered.push(commit.commitKey);
          if (delivered.length === catalog.commits.length) stop.abort();
        }
      })();
      await writeMirror(writer, '', catalog.commits);
      expect(await checkMirror(mirror)).toBe(MirrorState.ready);
      wake.wake();
      await reading;
      expect(delivered).toEqual(catalog.commits.map((commit) => commitKeyOf(commit.timestamp)));
    } finally {
      harness?.clients.dynamo.destroy();
      harness?.clients.s3.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
