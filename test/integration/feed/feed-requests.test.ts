/**
 * The feed's requests, counted and ordered on a folder (issue 33, part 1's throughput): a package the feed never held
 * costs no read of its flat index or registration (there is no state, so nothing stored is built on) and its documents
 * are written side by side, after its package and before its state; a package the feed holds is read first, so its
 * unchanged registration items are kept; the setup's vulnerability pages are written before the service index that
 * names their index, and a base URL the feed was not written for still fails the run with the feed's own error while
 * the consumer reads its first batch meanwhile. The start in fewer requests in a row: the mirror's watermark read once,
 * a new package's leaf read at once with its view and state, and a commit's packages begun as soon as its manifest is
 * read, whatever the manifests before it; and the run counts every document it writes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitKeyOf, manifestKey } from '../../../lambda/contract/keys.js';
import { FeedError, type FeedObjectKind, type FeedStorage } from '../../../lambda/feed/index.js';
import { CatalogReplica } from '../../../testkit/catalog-replica.js';
import { FeedCatalog, feedStorageOf, mirrorCommits, runFeed, type FeedPlace } from '../../../testkit/feed-kit.js';
import { openViewTarget, type ViewTestTarget } from '../../../testkit/view-harness.js';

const BASE = 'https://feed.example.test/';

/** A feed storage that logs every request, in the order they were made, as `{verb} {key}`. */
class LoggedStorage implements FeedStorage {
  readonly log: string[] = [];
  readonly where: string;
  constructor(private readonly inner: FeedStorage) {
    this.where = inner.where;
  }
  /** Told when a read of `key` begins and ends (`GET` / `GOT`), in the order of events. */
  onRead?: (event: string) => void;
  async read(key: string) {
    this.log.push(`GET ${key}`);
    this.onRead?.(`GET ${key}`);
    const stored = await this.inner.read(key);
    this.onRead?.(`GOT ${key}`);
    return stored;
  }
  writeIf(key: string, bytes: Buffer, expected: string | undefined) {
    this.log.push(`PUT-if ${key}`);
    return this.inner.writeIf(key, bytes, expected);
  }
  /** Awaited before a PUT of a document is sent (a test holds one back). */
  beforePut?: (key: string) => Promise<void>;
  /** Told once a PUT of a document is stored. */
  afterPut?: (key: string) => void;
  async put(key: string, bytes: Buffer, kind: FeedObjectKind) {
    await this.beforePut?.(key);
    await this.inner.put(key, bytes, kind);
    this.log.push(`PUT ${key}`);
    this.afterPut?.(key);
  }
  async putStream(key: string, body: AsyncIterable<Uint8Array>) {
    await this.inner.putStream(key, body);
    this.log.push(`PUT ${key}`);
  }
  delete(key: string) {
    this.log.push(`DELETE ${key}`);
    return this.inner.delete(key);
  }
  list(prefix: string) {
    this.log.push(`LIST ${prefix}`);
    return this.inner.list(prefix);
  }
  /** The requests whose key names package `lowerId`'s feed or state, the view's index and the setup left out. */
  of(lowerId: string): string[] {
    return this.log.filter((line) => line.includes(`/${lowerId}/`) || line.includes(`/${lowerId}.json`));
  }
}

describe('the feed’s requests', () => {
  const built = new FeedCatalog();
  let replica: CatalogReplica;
  let target: ViewTestTarget;
  let logged: LoggedStorage;
  let place: FeedPlace;

  beforeAll(async () => {
    built.commit([
      { id: 'Req.A', version: '1.0.0' },
      { id: 'Req.B', version: '1.0.0' },
    ]);
    replica = await CatalogReplica.start({ catalog: built.catalog });
    target = await openViewTarget('local folder');
    logged = new LoggedStorage(feedStorageOf(target));
    place = { ...target, storage: logged };
  });
  afterAll(async () => {
    await replica?.stop();
    target?.close();
  });

  it('a new package: no read of its documents, written after its package and before its state', async () => {
    await mirrorCommits(place, built.catalog.commits);
    // The mirror's reads and the feed's, in the order they began and ended.
    const events: string[] = [];
    logged.onRead = (event) => events.push(event);
    const store = place.mirror.store;
    // The watermark's read is held until the listing of the manifests begins (1 s at most, so that a start that
    // lists only after the watermark is read fails rather than hangs).
    let listed: () => void = () => undefined;
    const listing = new Promise<void>((resolve) => (listed = resolve));
    const mirrorStore = new Proxy(store, {
      get(inner, name) {
        if (name === 'getBytes')
          return async (key: string) => {
            events.push(`GET ${key}`);
            if (key === 'watermark.json')
              await Promise.race([listing, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
            const bytes = await inner.getBytes!(key);
            events.push(`GOT ${key}`);
            return bytes;
          };
        if (name === 'listKeys')
          return (prefix: string, ...rest: [string?]) => {
            events.push(`LIST ${prefix}`);
            if (prefix === 'commits/') listed();
            return inner.listKeys(prefix, ...rest);
          };
        const value = Reflect.get(inner, name) as unknown;
        return typeof value === 'function' ? value.bind(inner) : value;
      },
    });
    const result = await runFeed(place, replica.serviceIndexUrl, BASE, {
      mirror: { ...place.mirror, store: mirrorStore },
    });
    logged.onRead = undefined;
    expect(result.stored).toBe(2);
    // The watermark is read once (the place's check bounds the read), beside the listing of the manifests up to the
    // latest view's cursor (it proves them stored), not before it; each package's leaf at once with its view and its
    // state (the commit names it), not after its view is read.
    expect(events.filter((event) => event === 'GET watermark.json')).toHaveLength(1);
    expect(events.indexOf('LIST commits/')).toBeLessThan(events.indexOf('GOT watermark.json'));
    for (const id of ['req.a', 'req.b']) {
      const leaf = events.findIndex((event) => event.startsWith('GET leaves/') && event.includes(`/${id}/`));
      expect(leaf).toBeGreaterThanOrEqual(0);
      expect(leaf).toBeLessThan(events.indexOf(`GOT packages/${id}/index.json`));
      expect(events.filter((event) => event.startsWith('GET leaves/') && event.includes(`/${id}/`))).toHaveLength(1);
    }

    const setup = logged.log.filter(
      (line) =>
        /^PUT(-if)? /.test(line) && (line.includes('feed/vulnerabilities/') || line.endsWith(' feed/index.json')),
    );
    const serviceIndex = setup.indexOf('PUT feed/index.json');
    expect(serviceIndex).toBe(setup.length - 1);
    expect(setup.filter((line) => /^PUT(-if)? feed\/vulnerabilities\//.test(line))).toHaveLength(17);
    // The setup's reads of the 16 pages and their index, and no more: new packages with no vulnerabilities.
    expect(logged.log.filter((line) => line.startsWith('GET feed/vulnerabilities/'))).toHaveLength(17);

    for (const id of ['req.a', 'req.b']) {
      const requests = logged.of(id);
      expect(requests.filter((line) => line.startsWith('GET '))).toEqual([
        `GET packages/${id}/index.json`,
        `GET feed-state/packages/${id}.json`,
      ]);
      const nupkg = requests.indexOf(`PUT feed/flat/${id}/1.0.0/${id}.1.0.0.nupkg`);
      const flat = requests.indexOf(`PUT feed/flat/${id}/index.json`);
      const registration = requests.indexOf(`PUT feed/registration/${id}/index.json`);
      const state = requests.indexOf(`PUT-if feed-state/packages/${id}.json`);
      expect(nupkg).toBeGreaterThanOrEqual(0);
      expect([nupkg < flat, nupkg < registration, flat < state, registration < state]).toEqual([
        true,
        true,
        true,
        true,
      ]);
      expect(requests).toHaveLength(6);
    }
  });

  it('a package the feed holds: its documents read first, its unchanged registration item kept', async () => {
    logged.log.length = 0;
    await mirrorCommits(place, [built.commit([{ id: 'Req.A', version: '2.0.0' }])]);
    const result = await runFeed(place, replica.serviceIndexUrl, BASE);
    expect(result.stored).toBe(1);
    const reads = logged.of('req.a').filter((line) => line.startsWith('GET '));
    expect(reads).toEqual(
      expect.arrayContaining(['GET feed/flat/req.a/index.json', 'GET feed/registration/req.a/index.json']),
    );
    const registration = JSON.parse(
      (await logged.read('feed/registration/req.a/index.json'))!.bytes.toString('utf8'),
    ) as { items: { items: { catalogEntry: { version: string } }[] }[] };
    expect(registration.items[0]!.items.map((item) => item.catalogEntry.version)).toEqual(['1.0.0', '2.0.0']);
    expect(logged.of('req.b')).toEqual([]);
    // A package the feed held: its page is read (its entries may have changed), though unchanged, not written.
    const pages = logged.log.filter((line) => line.includes('feed/vulnerabilities/page'));
    expect(pages.filter((line) => line.startsWith('GET '))).toHaveLength(16 + 1);
    expect(pages.filter((line) => !line.startsWith('GET '))).toEqual([]);
  });

  it('a base URL the feed was not written for fails the run with the feed’s error', async () => {
    await mirrorCommits(place, [built.commit([{ id: 'Req.C', version: '1.0.0' }])]);
    const run = runFeed(place, replica.serviceIndexUrl, 'https://elsewhere.example.test/');
    await expect(run).rejects.toBeInstanceOf(FeedError);
    await expect(run).rejects.toThrow(/written for the base URL https:\/\/feed\.example\.test\//);
    expect(await logged.read('feed/flat/req.c/index.json')).toBeUndefined();
  });

  it('a slow read of one manifest holds up no package of the commits after it', async () => {
    const first = built.commit([{ id: 'Req.D', version: '1.0.0' }]);
    const second = built.commit([{ id: 'Req.E', version: '1.0.0' }]);
    await mirrorCommits(place, [first, second]);
    const held = manifestKey('', commitKeyOf(first.timestamp));
    const events: string[] = [];
    // The first commit's manifest is held until the feed has begun the second commit's package (1 s at most, so that
    // a feed that starts packages only in commit order fails rather than hangs).
    let begun: () => void = () => undefined;
    const secondBegun = new Promise<void>((resolve) => (begun = resolve));
    const store = place.mirror.store;
    const mirrorStore = new Proxy(store, {
      get(inner, name) {
        if (name === 'getBytes')
          return async (key: string) => {
            if (key === held)
              await Promise.race([secondBegun, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
            const bytes = await inner.getBytes!(key);
            events.push(`GOT ${key}`);
            return bytes;
          };
        const value = Reflect.get(inner, name) as unknown;
        return typeof value === 'function' ? value.bind(inner) : value;
      },
    });
    logged.onRead = (event) => {
      events.push(event);
      if (event === 'GET packages/req.e/index.json') begun();
    };
    const result = await runFeed(place, replica.serviceIndexUrl, BASE, {
      mirror: { ...place.mirror, store: mirrorStore },
    });
    logged.onRead = undefined;
    expect(result.stored).toBe(3);
    expect(events.indexOf('GET packages/req.e/index.json')).toBeGreaterThanOrEqual(0);
    expect(events.indexOf('GET packages/req.e/index.json')).toBeLessThan(events.indexOf(`GOT ${held}`));
  });

  it('the run counts every document written, however the packages’ writes overlap', async () => {
    await mirrorCommits(place, [
      built.commit([
        { id: 'Req.F', version: '1.0.0' },
        { id: 'Req.G', version: '1.0.0' },
      ]),
    ]);
    // Req.F's registration is held until Req.G's flat index is stored (1 s at most): a count read before the
    // registration's write and added after it would lose Req.G's.
    let flatStored: () => void = () => undefined;
    const flat = new Promise<void>((resolve) => (flatStored = resolve));
    logged.beforePut = async (key) => {
      if (key === 'feed/registration/req.f/index.json')
        await Promise.race([flat, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
    };
    logged.afterPut = (key) => {
      if (key === 'feed/flat/req.g/index.json') flatStored();
    };
    logged.log.length = 0;
    const result = await runFeed(place, replica.serviceIndexUrl, BASE);
    logged.beforePut = undefined;
    logged.afterPut = undefined;
    const documents = logged.log.filter((line) =>
      /^PUT(-if)? feed\/(flat\/[^/]+\/index\.json|registration\/|vulnerabilities\/)/.test(line),
    );
    expect(documents).toEqual(
      expect.arrayContaining(['PUT feed/flat/req.g/index.json', 'PUT feed/registration/req.f/index.json']),
    );
    expect(result.documents).toBe(documents.length);
  });
});
