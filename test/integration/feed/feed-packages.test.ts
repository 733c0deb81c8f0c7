/**
 * The feed's packages and registration pages at their edges: a package of 130 versions (registration pages of 64 as
 * documents of their own; 100 versions: two pages inline), and a large package streamed to S3 in parts, with no more
 * of it held at once than the parts in flight, whose bytes, when they are not the leaf's (or more than it says), are
 * never stored, not even partly.
 */
import { PutObjectCommand, UploadPartCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3FeedStorage, type FeedStorage } from '../../../lambda/feed/index.js';
import { LocalFeedStorage } from '../../../lambda/feed/local-feed-storage.js';
import type { LocalStore } from '../../../lambda/stores/local-store.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { clientsFor } from '../../../testkit/emulators.js';
import { FeedCatalog, mirrorCommits, runFeed, type FeedPlace } from '../../../testkit/feed-kit.js';
import { openViewTarget, type ViewTestTarget } from '../../../testkit/view-harness.js';

const BASE = 'https://feed.example.test/';
const MiB = 1024 * 1024;

describe('registration pages', () => {
  const built = new FeedCatalog();
  let replica: CatalogReplica;
  let target: ViewTestTarget;
  let place: FeedPlace;
  const json = async (key: string): Promise<any> => {
    const stored = await place.storage.read(key);
    return stored === undefined ? undefined : JSON.parse(stored.bytes.toString('utf8'));
  };
  const versions = (from: number, to: number) =>
    Array.from({ length: to - from }, (_, i) => ({ id: 'Many.Pkg', version: `1.0.${from + i}` }));

  beforeAll(async () => {
    replica = await CatalogReplica.start({ catalog: built.catalog });
    target = await openViewTarget('local folder');
    place = { ...target, storage: new LocalFeedStorage(target.mirror.where, target.store as LocalStore) };
  });
  afterAll(async () => {
    await replica?.stop();
    target?.close();
  });

  it('inline pages of 64 up to 127 versions, page documents of 64 above', async () => {
    await mirrorCommits(place, [built.commit(versions(0, 100))]);
    await runFeed(place, replica.serviceIndexUrl, BASE);
    const inline = await json('feed/registration/many.pkg/index.json');
    expect(inline.items.map((page: any) => [page.count, page.lower, page.upper, page.items.length])).toEqual([
      [64, '1.0.0', '1.0.63', 64],
      [36, '1.0.64', '1.0.99', 36],
    ]);
    expect(await json('feed/registration/many.pkg/page/0.json')).toBeUndefined();

    await mirrorCommits(place, [built.commit(versions(100, 130))]);
    await runFeed(place, replica.serviceIndexUrl, BASE);
    const paged = await json('feed/registration/many.pkg/index.json');
    expect(paged.count).toBe(3);
    expect(paged.items.map((page: any) => [page['@id'], page.count, page.lower, page.upper, 'items' in page])).toEqual([
      [`${BASE}registration/many.pkg/page/0.json`, 64, '1.0.0', '1.0.63', false],
      [`${BASE}registration/many.pkg/page/1.json`, 64, '1.0.64', '1.0.127', false],
      [`${BASE}registration/many.pkg/page/2.json`, 2, '1.0.128', '1.0.129', false],
    ]);
    const last = await json('feed/registration/many.pkg/page/2.json');
    expect(last).toMatchObject({ parent: `${BASE}registration/many.pkg/index.json`, count: 2, lower: '1.0.128' });
    expect(last.items.map((item: any) => item.catalogEntry.version)).toEqual(['1.0.128', '1.0.129']);
    expect((await json('feed/flat/many.pkg/index.json')).versions).toHaveLength(130);

    // Back to 127 after deletes: inline again, the page documents gone.
    await mirrorCommits(place, [built.commit(versions(0, 3).map((v) => ({ ...v, delete: true })))]);
    await runFeed(place, replica.serviceIndexUrl, BASE);
    expect((await json('feed/registration/many.pkg/index.json')).items.map((page: any) => page.count)).toEqual([
      64, 63,
    ]);
    for (const n of [0, 1, 2]) expect(await json(`feed/registration/many.pkg/page/${n}.json`)).toBeUndefined();
  });
});

describe('a large package, streamed to S3', () => {
  const built = new FeedCatalog();
  let replica: CatalogReplica;
  let target: ViewTestTarget;
  let place: FeedPlace;
  /** Bytes taken from the download and bytes S3 acknowledged (parts, or the one PUT), and the most ever between them. */
  const flow = { pulled: 0, stored: 0, most: 0 };
  const large = Buffer.alloc(24 * MiB);
  for (let at = 0; at < large.length; at += 4) large.writeUInt32LE((at * 2654435761) >>> 0, at);

  beforeAll(async () => {
    target = await openViewTarget('S3 + DynamoDB');
    const harness = target.harness!;
    const { s3, dynamo } = clientsFor(harness.services);
    dynamo.destroy();
    s3.middlewareStack.add(
      (next, context) => async (args) => {
        const result = await next(args);
        const input = args.input as { Body?: Uint8Array };
        if (context.commandName === UploadPartCommand.name || context.commandName === PutObjectCommand.name)
          flow.stored += input.Body?.byteLength ?? 0;
        return result;
      },
      { step: 'initialize', name: 'countStored' },
    );
    const inner = new S3FeedStorage(harness.bucket, s3, { partBytes: 5 * MiB, partsAtOnce: 1 });
    const counted: FeedStorage = Object.assign(Object.create(inner) as FeedStorage, {
      putStream: (key: string, body: AsyncIterable<Uint8Array>) =>
        inner.putStream(
          key,
          (async function* () {
            for await (const piece of body) {
              flow.pulled += piece.byteLength;
              flow.most = Math.max(flow.most, flow.pulled - flow.stored);
              yield piece;
            }
          })(),
        ),
    });
    place = { ...target, storage: counted };
    built.commit([
      { id: 'Large.Pkg', version: '1.0.0', packageBytes: large },
      { id: 'Corrupt.Large', version: '1.0.0', packageBytes: large.subarray(0, 12 * MiB) },
      { id: 'Longer.Large', version: '1.0.0', packageBytes: large.subarray(0, 11 * MiB) },
    ]);
    replica = await CatalogReplica.start({ catalog: built.catalog });
    replica.packages.corrupt('Corrupt.Large', '1.0.0');
    replica.packages.replaceBytes('Longer.Large', '1.0.0', large);
    await mirrorCommits(place, built.catalog.commits);
  });
  afterAll(async () => {
    await replica?.stop();
    target?.close();
  });

  it("holds no more than the parts in flight; bytes that are not the leaf's leave no object", async () => {
    const run = await runFeed(place, replica.serviceIndexUrl, BASE, { downloads: 1 });
    expect(run).toMatchObject({ stored: 1, quarantined: 2 });
    const key = 'feed/flat/large.pkg/1.0.0/large.pkg.1.0.0.nupkg';
    expect((await place.storage.read(key))?.bytes.equals(large)).toBe(true);
    // Five parts of 5 MiB; at most one in flight and one filling: about 10 MiB of the 24 held at once.
    expect(flow.most).toBeLessThanOrEqual(10 * MiB + 256 * 1024);
    expect(flow.most).toBeGreaterThan(5 * MiB);
    for (const id of ['corrupt.large', 'longer.large'])
      expect(await place.storage.read(`feed/flat/${id}/1.0.0/${id}.1.0.0.nupkg`), id).toBeUndefined();
    const longer = JSON.parse(
      (await place.storage.read('feed-state/quarantine/longer.large/1.0.0.json'))!.bytes.toString(),
    );
    // Stopped as soon as it passed the leaf's size: not read to its end.
    expect(longer.actual.hash).toBeUndefined();
    expect(longer.actual.size).toBeGreaterThan(11 * MiB);
    expect(longer.actual.size).toBeLessThan(12 * MiB);
  });
});
