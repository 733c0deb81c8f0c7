/**
 * The feed server in process, over a real mirror folder: what NuGet clients need of it (200 with the bytes, 404 and
 * never 403 for anything the feed does not hold), the headers (type, cache, tag), conditional requests, HEAD, gzip,
 * byte ranges, and no way out of `{prefix}feed/` whatever the path says.
 */
import type { ReadStream } from 'node:fs';
import { mkdtemp, open, readdir, rm, writeFile } from 'node:fs/promises';
import { get as httpGet, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FeedFiles, folderFeedFiles } from '../../../lambda/serve/feed-files.js';
import { type FeedRequestEntry, FeedServer } from '../../../lambda/serve/feed-server.js';
import { openLocalStores } from '../../../lambda/stores/local-store.js';
import { waitFor } from '../../../testkit/cli-process.js';
import { rawRequest, type WrittenFeed, writeFeed } from './serve-kit.js';

const PREFIX = 'nuget/';
const SECRET = 'not-for-clients';

let parent: string;
let root: string;
let feed: WrittenFeed;
let server: FeedServer;
let origin: string;
const log: FeedRequestEntry[] = [];
const get = (target: string, headers: Record<string, string> = {}, method = 'GET') =>
  rawRequest(origin, target, { method, headers });

beforeAll(async () => {
  parent = await mkdtemp(join(tmpdir(), 'catalog-sync-serve-'));
  root = join(parent, 'mirror');
  feed = await writeFeed(root, { prefix: PREFIX, baseUrl: 'http://127.0.0.1:5080/' });
  // What the feed must never let out: the mirror's own keys, its state folder, a file beside the folder.
  const { snapshots } = openLocalStores(root);
  await snapshots.putLeaf(`${PREFIX}leaves/secret.json`, Buffer.from(SECRET));
  await snapshots.putLeaf('feed/index.json', Buffer.from(SECRET));
  await writeFile(join(parent, 'secret.txt'), SECRET);
  server = await FeedServer.start({
    feed: { files: folderFeedFiles(snapshots), prefix: PREFIX },
    host: '127.0.0.1',
    port: 0,
    onRequest: (entry) => log.push(entry),
  });
  origin = `http://127.0.0.1:${server.port}`;
});
afterAll(async () => {
  await server?.stop();
  await rm(parent, { recursive: true, force: true });
});

describe('what the feed holds', () => {
  it('answers each object of {prefix}feed/ with its bytes, its type and how long it may be cached', async () => {
    for (const [path, bytes] of feed.files) {
      const answer = await get(`/${path}`);
      expect(answer.status, path).toBe(200);
      expect(answer.body.equals(bytes), path).toBe(true);
      expect(answer.headers['content-length'], path).toBe(String(bytes.length));
      if (path.endsWith('.json')) {
        expect(answer.headers['content-type'], path).toBe('application/json');
        expect(answer.headers['cache-control'], path).toBe('public, max-age=60');
        expect(answer.headers.vary, path).toBe('Accept-Encoding');
      } else {
        expect(answer.headers['content-type'], path).toBe('application/octet-stream');
        expect(answer.headers['cache-control'], path).toBe('public, max-age=31536000, immutable');
        expect(answer.headers['accept-ranges'], path).toBe('bytes');
      }
      expect(answer.headers.etag, path).toMatch(/^"[0-9a-f]+-[0-9a-f]+"$/);
      expect(Date.parse(String(answer.headers['last-modified'])), path).not.toBeNaN();
    }
  });

  it('answers 404, never 403, for a key it does not hold, a folder, the root, and a query changes nothing', async () => {
    for (const target of ['/flat/demo.missing/index.json', '/flat/demo.served', '/flat/', '/', '/index.json/x']) {
      const answer = await get(target);
      expect(answer.status, target).toBe(404);
    }
    expect((await get('/index.json?x=1#y')).body.equals(feed.files.get('index.json')!)).toBe(true);
    expect((await get('/flat/demo.missing/index.json', {}, 'HEAD')).status).toBe(404);
  });

  it('reads GET and HEAD only: 405 with Allow for the others', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'OPTIONS']) {
      const answer = await get('/index.json', {}, method);
      expect(answer.status, method).toBe(405);
      expect(answer.headers.allow, method).toBe('GET, HEAD');
    }
  });

  it('HEAD gives the headers of GET and no body', async () => {
    for (const path of ['/index.json', `/${feed.packagePath}`]) {
      const [head, whole] = [await get(path, {}, 'HEAD'), await get(path)];
      expect(head.status).toBe(200);
      expect(head.body.length).toBe(0);
      for (const name of ['content-type', 'content-length', 'cache-control', 'etag', 'last-modified'])
        expect(head.headers[name], `${path} ${name}`).toBe(whole.headers[name]);
    }
  });
});

describe('paths that try to leave the feed', () => {
  const attempts = [
    '/../leaves/secret.json',
    '/flat/../../leaves/secret.json',
    '/%2e%2e/leaves/secret.json',
    '/%2E%2E/%2E%2E/secret.txt',
    '/..%2fleaves%2fsecret.json',
    '/%2e%2e%2f%2e%2e%2fsecret.txt',
    '/..\\leaves\\secret.json',
    '/..%5cleaves%5csecret.json',
    '/flat/./demo.served/index.json',
    '//leaves/secret.json',
    '/%2fleaves/secret.json',
    '/.catalog-sync/state.json',
    '/../../feed/index.json',
    '/%00/index.json',
    '/bad%zzencoding',
    'http://127.0.0.1/../leaves/secret.json',
    'http://127.0.0.1/%2e%2e/secret.txt',
    '*',
  ];

  it('answers 404 to each, without a byte of what lies outside', async () => {
    const absolute = join(parent, 'secret.txt');
    for (const target of [...attempts, absolute, `/${absolute}`, `/${encodeURIComponent(absolute)}`]) {
      const answer = await get(target);
      expect(answer.status, target).toBe(404);
      expect(answer.body.toString(), target).not.toContain(SECRET);
    }
  });

  it('reads an absolute target by its path, as HTTP/1.1 asks', async () => {
    const answer = await get(`${origin}/index.json`);
    expect(answer.status).toBe(200);
    expect(answer.body.equals(feed.files.get('index.json')!)).toBe(true);
  });
});

describe('conditional requests', () => {
  it('answers 304 with no body to a request that holds the current tag (weak or strong) or a later date', async () => {
    const first = await get('/index.json');
    const tag = String(first.headers.etag);
    for (const headers of [
      { 'If-None-Match': tag },
      { 'If-None-Match': `W/${tag}` },
      { 'If-None-Match': `"other", ${tag}` },
      { 'If-None-Match': '*' },
      { 'If-Modified-Since': new Date(Date.now() + 60_000).toUTCString() },
    ] as Record<string, string>[]) {
      const answer = await get('/index.json', headers);
      expect(answer.status, JSON.stringify(headers)).toBe(304);
      expect(answer.body.length).toBe(0);
      expect(answer.headers.etag).toBe(tag);
      expect(answer.headers['cache-control']).toBe('public, max-age=60');
    }
    expect((await get('/index.json', { 'If-None-Match': '"other"' })).status).toBe(200);
    expect((await get('/index.json', { 'If-Modified-Since': 'Thu, 01 Jan 1970 00:00:00 GMT' })).status).toBe(200);
  });

  it('gives a rewritten object a new tag', async () => {
    const path = 'registration/demo.served/index.json';
    const before = String((await get(`/${path}`)).headers.etag);
    await openLocalStores(root).snapshots.putLeaf(`${PREFIX}feed/${path}`, Buffer.from('{"count":1,"items":[]}'));
    const after = await get(`/${path}`, { 'If-None-Match': before });
    expect(after.status).toBe(200);
    expect(after.body.toString()).toBe('{"count":1,"items":[]}');
    expect(after.headers.etag).not.toBe(before);
  });
});

describe('gzip and byte ranges', () => {
  it('gzips an index for a client that accepts it, under a tag of its own, and never a package', async () => {
    const bytes = feed.files.get('index.json')!;
    const plain = await get('/index.json');
    const gzipped = await get('/index.json', { 'Accept-Encoding': 'gzip, deflate' });
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzipped.body).equals(bytes)).toBe(true);
    expect(gzipped.headers.etag).not.toBe(plain.headers.etag);
    expect(
      (await get('/index.json', { 'Accept-Encoding': 'gzip', 'If-None-Match': String(gzipped.headers.etag) })).status,
    ).toBe(304);
    for (const refused of ['gzip;q=0', 'identity', 'br'])
      expect((await get('/index.json', { 'Accept-Encoding': refused })).headers['content-encoding'], refused).toBe(
        undefined,
      );
    const nupkg = await get(`/${feed.packagePath}`, { 'Accept-Encoding': 'gzip' });
    expect(nupkg.headers['content-encoding']).toBe(undefined);
    expect(nupkg.body.equals(feed.files.get(feed.packagePath)!)).toBe(true);
  });

  it('answers one byte range of a package with 206, past its end with 416, and several or a stale If-Range whole', async () => {
    const bytes = feed.files.get(feed.packagePath)!;
    const path = `/${feed.packagePath}`;
    const tag = String((await get(path)).headers.etag);
    const part = await get(path, { Range: 'bytes=10-19' });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 10-19/${bytes.length}`);
    expect(part.body.equals(bytes.subarray(10, 20))).toBe(true);
    const tail = await get(path, { Range: 'bytes=-5', 'If-Range': tag });
    expect(tail.status).toBe(206);
    expect(tail.body.equals(bytes.subarray(bytes.length - 5))).toBe(true);
    const beyond = await get(path, { Range: `bytes=${bytes.length}-` });
    expect(beyond.status).toBe(416);
    expect(beyond.headers['content-range']).toBe(`bytes */${bytes.length}`);
    const wholes: Record<string, string>[] = [
      { Range: 'bytes=0-1,5-6' },
      { Range: 'bytes=0-1', 'If-Range': '"stale"' },
      { Range: 'x' },
    ];
    for (const headers of wholes) {
      const whole = await get(path, headers);
      expect(whole.status, JSON.stringify(headers)).toBe(200);
      expect(whole.body.equals(bytes)).toBe(true);
    }
    expect((await get('/index.json', { Range: 'bytes=0-1' })).status).toBe(200);
  });
});

describe('the request log', () => {
  it('reports each request with its method, target, status and body bytes', async () => {
    const targets = ['/index.json?logged', '/%2e%2e/logged.txt'];
    for (const target of targets) await get(target);
    // Reported once the answer is finished, which may be just after the client has read it.
    const entries = () => log.filter((entry) => targets.includes(entry.target));
    await waitFor(() => entries().length === 2, 'both requests reported');
    // In either order: the first answer's report may come after the second request was answered.
    expect(
      entries()
        .map(({ method, target, status, bytes, remote }) => ({ method, target, status, bytes, remote }))
        .sort((a, b) => targets.indexOf(a.target) - targets.indexOf(b.target)),
    ).toEqual([
      {
        method: 'GET',
        target: targets[0],
        status: 200,
        bytes: feed.files.get('index.json')!.length,
        remote: '127.0.0.1',
      },
      { method: 'GET', target: targets[1], status: 404, bytes: undefined, remote: '127.0.0.1' },
    ]);
    expect(entries().every((entry) => Number.isInteger(entry.ms) && entry.ms >= 0)).toBe(true);
  });
});

describe('a portable folder (macOS, Windows)', () => {
  it('serves keys by their escaped file names: an upper-case prefix, a Windows device name', async () => {
    const portable = join(parent, 'portable');
    const written = await writeFeed(portable, {
      prefix: 'Team/',
      baseUrl: 'http://127.0.0.1:5080/',
      id: 'Aux',
      caseInsensitive: true,
    });
    // The names on disk are not the keys: `Team` is `^team`, `aux` is `aux^_`.
    expect(await readdir(join(portable, '^team', 'feed', 'flat'))).toEqual(['aux^_']);
    const files = folderFeedFiles(openLocalStores(portable).snapshots);
    const other = await FeedServer.start({ feed: { files, prefix: 'Team/' }, host: '127.0.0.1', port: 0 });
    try {
      const at = `http://127.0.0.1:${other.port}`;
      for (const [path, bytes] of written.files) {
        const answer = await rawRequest(at, `/${path}`);
        expect(answer.status, path).toBe(200);
        expect(answer.body.equals(bytes), path).toBe(true);
      }
      // The file name is no key: asked for by it, nothing is found.
      expect((await rawRequest(at, '/flat/aux%5E_/index.json')).status).toBe(404);
    } finally {
      await other.stop();
    }
  });
});

describe('a large package', () => {
  it('is streamed: the server stops reading while the client does not, then every byte arrives', async () => {
    const size = 48 * 1024 * 1024;
    const key = `${PREFIX}feed/flat/big/1.0.0/big.1.0.0.nupkg`;
    const { snapshots } = openLocalStores(root);
    await snapshots.putLeaf(key, Buffer.from('first'));
    // Sparse: 48 MB on no disk, with marks at the start, in the middle and at the end.
    const file = await open((await snapshots.fileOf(key))!, 'r+');
    await file.truncate(size);
    await file.write(Buffer.from('middle'), 0, 6, size / 2);
    await file.write(Buffer.from('last'), 0, 4, size - 4);
    await file.close();
    const streams: ReadStream[] = [];
    const files = folderFeedFiles(snapshots);
    const watched: FeedFiles = {
      open: async (k) => {
        const found = await files.open(k);
        return (
          found && {
            ...found,
            stream: (range) => {
              const stream = found.stream(range);
              streams.push(stream as ReadStream);
              return stream;
            },
          }
        );
      },
    };
    const big = await FeedServer.start({ feed: { files: watched, prefix: PREFIX }, host: '127.0.0.1', port: 0 });
    try {
      const res = await new Promise<IncomingMessage>((resolve, reject) =>
        httpGet(
          { host: '127.0.0.1', port: big.port, path: '/flat/big/1.0.0/big.1.0.0.nupkg', agent: false },
          resolve,
        ).on('error', reject),
      );
      res.pause();
      let last = -1;
      // Stalled: the file stream paused by backpressure, and no byte read since the last look.
      await waitFor(() => {
        const stream = streams[0];
        const stalled = stream !== undefined && stream.readableFlowing === false && stream.bytesRead === last;
        last = stream?.bytesRead ?? -1;
        return stalled;
      }, 'the server to stop reading the package');
      // About 4 MB here (the sockets' buffers and the stream's): far from the whole file.
      expect(streams[0]!.bytesRead).toBeLessThan(16 * 1024 * 1024);
      let received = 0;
      const marks: string[] = [];
      for await (const chunk of res as AsyncIterable<Buffer>) {
        for (const [at, length] of [
          [0, 5],
          [size / 2, 6],
          [size - 4, 4],
        ] as const) {
          if (at >= received && at < received + chunk.length)
            marks.push(chunk.subarray(at - received, at - received + length).toString());
        }
        received += chunk.length;
      }
      expect(received).toBe(size);
      expect(marks).toEqual(['first', 'middle', 'last']);
    } finally {
      await big.stop();
    }
  });
});
