/**
 * A minimal S3 endpoint for the benchmark: a node:http server on 127.0.0.1 that answers the AWS SDK's
 * path-style PutObject, HeadObject, GetObject, ListObjectsV2 and CreateBucket after a configurable latency,
 * and writes nothing to disk.
 *
 * - Signatures are not checked: any credentials do.
 * - PUT bodies are read to the end and counted (plain, or `aws-chunked` as the SDK's default checksum mode may
 *   send a stream), then dropped. Only a key's size, ETag and metadata are kept, for HEAD and listing. Bodies are
 *   kept only for keys outside `leaves/` (commit manifests, quarantine records: small), so GET can answer for
 *   those; a GET of a leaf answers `404 NoSuchKey` (HEAD and listing still know it).
 * - The latency is added after the request body has arrived and before the answer, to every request; with a
 *   {@link PutTail}, every Nth PUT waits longer instead (a slow tail, as S3 has: exactly one PUT in N, evenly
 *   spread, so a row's count of slow PUTs does not depend on luck).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Options of {@link startFakeS3}. */
export interface FakeS3Options {
  /** Delay before every answer, in ms. */
  latencyMs: number;
  /** Port to listen on; default 0 (any free one). */
  port?: number;
}

/** A slow tail of PUT latency: every `every`th PUT takes `ms` instead of the usual latency. */
export interface PutTail {
  readonly every: number;
  readonly ms: number;
}

/** Counters of a {@link FakeS3}. */
export interface FakeS3Stats {
  puts: number;
  /** PUTs answered after the tail's latency. */
  slowPuts: number;
  putBytes: number;
  gets: number;
  heads: number;
  lists: number;
  /** Requests answered with an error status. */
  errors: number;
  /** Objects currently known (keys). */
  objects: number;
}

/** A running fake S3. */
export interface FakeS3 {
  /** `http://127.0.0.1:PORT`: the SDK's `endpoint`, with `forcePathStyle: true`. */
  readonly endpoint: string;
  stats(): FakeS3Stats;
  /** Zeroes the counters and forgets every object. */
  reset(): void;
  setLatency(ms: number): void;
  /** Sets (or, with `undefined`, removes) the slow tail of PUTs; its count starts again. */
  setPutTail(tail: PutTail | undefined): void;
  stop(): Promise<void>;
}

interface StoredObject {
  size: number;
  etag: string;
  lastModified: Date;
  contentType: string | undefined;
  metadata: Record<string, string>;
  /** Kept only for keys outside `leaves/`. */
  body: Buffer | undefined;
}

/** Starts a fake S3 on 127.0.0.1. */
export async function startFakeS3(options: FakeS3Options): Promise<FakeS3> {
  let latencyMs = options.latencyMs;
  let putTail: PutTail | undefined;
  let putSerial = 0;
  const buckets = new Map<string, Map<string, StoredObject>>();
  let stats = emptyStats();
  let etagSerial = 0;

  const server: Server = createServer((req, res) => {
    res.on('error', () => {});
    handle(req, res).catch((error: unknown) => {
      stats.errors++;
      if (res.headersSent) res.destroy();
      else sendError(res, 500, 'InternalError', String(error));
    });
  });
  server.keepAliveTimeout = 60_000;
  server.headersTimeout = 65_000;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = req.method ?? 'GET';
    const [bucketName = '', ...rest] = url.pathname.slice(1).split('/');
    const key = decodeURIComponent(rest.join('/'));
    const body = method === 'PUT' || method === 'POST' ? await readBody(req) : (req.resume(), 0);
    const slow = method === 'PUT' && putTail !== undefined && ++putSerial % putTail.every === 0;
    if (slow) stats.slowPuts++;
    const delayMs = slow ? putTail!.ms : latencyMs;
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    if (bucketName === '') {
      sendError(res, 400, 'InvalidRequest', 'path-style addressing only: /{bucket}/{key}');
      stats.errors++;
      return;
    }
    let bucket = buckets.get(bucketName);
    if (key === '') {
      if (method === 'PUT') {
        if (!bucket) buckets.set(bucketName, new Map());
        res.writeHead(200, { Location: `/${bucketName}` }).end();
        return;
      }
      if (method === 'GET' && url.searchParams.get('list-type') === '2') {
        stats.lists++;
        listObjects(res, bucketName, bucket ?? new Map(), url.searchParams);
        return;
      }
      if (method === 'HEAD') {
        res.writeHead(200).end();
        return;
      }
      stats.errors++;
      sendError(res, 405, 'MethodNotAllowed', `${method} on a bucket is not supported here`);
      return;
    }
    if (!bucket) buckets.set(bucketName, (bucket = new Map()));
    switch (method) {
      case 'PUT': {
        const { size, data } = body as { size: number; data: Buffer | undefined };
        const metadata: Record<string, string> = {};
        for (const [name, value] of Object.entries(req.headers)) {
          if (name.startsWith('x-amz-meta-') && typeof value === 'string')
            metadata[name.slice('x-amz-meta-'.length)] = value;
        }
        const etag = `"${(++etagSerial).toString(16).padStart(32, '0')}"`;
        bucket.set(key, {
          size,
          etag,
          lastModified: new Date(),
          contentType: req.headers['content-type'],
          metadata,
          body: key.includes('leaves/') ? undefined : data,
        });
        stats.puts++;
        stats.putBytes += size;
        res.writeHead(200, { ETag: etag, 'x-amz-request-id': String(etagSerial), 'Content-Length': 0 }).end();
        return;
      }
      case 'GET':
      case 'HEAD': {
        const object = bucket.get(key);
        if (method === 'GET') stats.gets++;
        else stats.heads++;
        if (!object || (method === 'GET' && object.body === undefined)) {
          stats.errors++;
          if (method === 'HEAD') res.writeHead(404).end();
          else sendError(res, 404, 'NoSuchKey', 'The specified key does not exist.');
          return;
        }
        const headers: Record<string, string | number> = {
          ETag: object.etag,
          'Last-Modified': object.lastModified.toUTCString(),
          'Content-Length': object.size,
          'Content-Type': object.contentType ?? 'application/octet-stream',
        };
        for (const [name, value] of Object.entries(object.metadata)) headers[`x-amz-meta-${name}`] = value;
        res.writeHead(200, headers);
        res.end(method === 'GET' ? object.body : undefined);
        return;
      }
      case 'DELETE':
        bucket.delete(key);
        res.writeHead(204).end();
        return;
      default:
        stats.errors++;
        sendError(res, 405, 'MethodNotAllowed', `${method} is not supported here`);
    }
  }

  function listObjects(
    res: ServerResponse,
    bucketName: string,
    bucket: Map<string, StoredObject>,
    query: URLSearchParams,
  ): void {
    const prefix = query.get('prefix') ?? '';
    const after = query.get('continuation-token') ?? query.get('start-after') ?? '';
    const maxKeys = Math.min(1000, Number(query.get('max-keys') ?? 1000) || 1000);
    const keys = [...bucket.keys()]
      .filter((k) => k.startsWith(prefix) && k > after)
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const page = keys.slice(0, maxKeys);
    const truncated = keys.length > page.length;
    const contents = page
      .map((k) => {
        const o = bucket.get(k)!;
        return `<Contents><Key>${xml(k)}</Key><LastModified>${o.lastModified.toISOString()}</LastModified><ETag>${xml(o.etag)}</ETag><Size>${o.size}</Size><StorageClass>STANDARD</StorageClass></Contents>`;
      })
      .join('');
    const body =
      `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
      `<Name>${xml(bucketName)}</Name><Prefix>${xml(prefix)}</Prefix><KeyCount>${page.length}</KeyCount><MaxKeys>${maxKeys}</MaxKeys>` +
      `<IsTruncated>${truncated}</IsTruncated>${contents}` +
      (truncated ? `<NextContinuationToken>${xml(page.at(-1)!)}</NextContinuationToken>` : '') +
      `</ListBucketResult>`;
    res.writeHead(200, { 'Content-Type': 'application/xml', 'Content-Length': Buffer.byteLength(body) }).end(body);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stats: () => ({ ...stats, objects: [...buckets.values()].reduce((n, b) => n + b.size, 0) }),
    reset() {
      stats = emptyStats();
      for (const bucket of buckets.values()) bucket.clear();
    },
    setLatency(ms: number) {
      latencyMs = ms;
    },
    setPutTail(tail: PutTail | undefined) {
      putTail = tail;
      putSerial = 0;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function emptyStats(): FakeS3Stats {
  return { puts: 0, slowPuts: 0, putBytes: 0, gets: 0, heads: 0, lists: 0, errors: 0, objects: 0 };
}

/**
 * Reads a request body to the end. The stored size is the object's, not the wire's: with `aws-chunked`
 * encoding the SDK says the object's size in `x-amz-decoded-content-length`. The bytes are kept only for a
 * plain body (an aws-chunked one would need decoding; nothing here reads it back).
 */
async function readBody(req: IncomingMessage): Promise<{ size: number; data: Buffer | undefined }> {
  const chunks: Buffer[] = [];
  let received = 0;
  for await (const chunk of req) {
    received += (chunk as Buffer).length;
    chunks.push(chunk as Buffer);
  }
  const decoded = req.headers['x-amz-decoded-content-length'];
  if (typeof decoded === 'string' && /^\d+$/.test(decoded)) return { size: Number(decoded), data: undefined };
  return { size: received, data: Buffer.concat(chunks, received) };
}

function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  const body = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${xml(message)}</Message></Error>`;
  res.writeHead(status, { 'Content-Type': 'application/xml', 'Content-Length': Buffer.byteLength(body) }).end(body);
}

function xml(text: string): string {
  return text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
}
