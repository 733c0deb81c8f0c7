/**
 * The answer to one request for an object of the feed, as S3 behind CloudFront gives it and NuGet clients expect:
 * GET and HEAD only; 404 for anything the feed does not hold (never 403, on which `dotnet restore` retries and fails);
 * `Content-Type`, `Cache-Control` (immutable for a package, short for an index), `ETag` and `Last-Modified`; 304 for a
 * conditional request that holds the current tag or date (`fresh`); a single byte range of a package (`range-parser`:
 * 206, or 416 beyond its end; several ranges are answered whole, as RFC 9110 allows); an index gzipped on the fly for a
 * client that accepts it (`negotiator`). Bodies are streamed from the file.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import fresh from 'fresh';
import Negotiator from 'negotiator';
import rangeParser from 'range-parser';
import type { FeedFile, FeedFiles } from './feed-files.js';
import { cacheControlOf, contentTypeOf, feedKeyOf, isJson, isPackage } from './feed-request.js';

/** What was answered, for the request log. */
export interface Answered {
  readonly status: number;
  /** Body bytes sent (before any compression is unknown: omitted for a gzipped body). */
  readonly bytes?: number;
  /** `gzip` when the body was compressed. */
  readonly encoding?: 'gzip';
  /** The client went away before the whole body was sent. */
  readonly aborted?: boolean;
}

/** The feed being served: where its objects are read and the mirror's key prefix. */
export interface ServedFeed {
  readonly files: FeedFiles;
  readonly prefix: string;
}

/** Answers `req` with the object it names; resolves once the response is finished or the client is gone. */
export async function answerFeedRequest(
  feed: ServedFeed,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<Answered> {
  const method = req.method ?? 'GET';
  if (method !== 'GET' && method !== 'HEAD') {
    res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' });
    res.end(`${method} is not served: the feed is read with GET and HEAD\n`);
    return { status: 405 };
  }
  const key = feedKeyOf(feed.prefix, req.url ?? '/');
  const file = key === undefined ? undefined : await feed.files.open(key);
  if (key === undefined || file === undefined) {
    // The same answer for a key that is missing and for a path that names none: nothing to tell apart.
    res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end(method === 'HEAD' ? undefined : 'not found in this feed\n');
    return { status: 404 };
  }
  let streaming = false;
  try {
    const answer = await respond(req, res, key, file, method === 'HEAD');
    streaming = answer.streaming;
    return answer.answered;
  } finally {
    if (!streaming) await file.close();
  }
}

/** Sends the headers and, unless `head`, the body; `streaming` when a stream took the file over. */
async function respond(
  req: IncomingMessage,
  res: ServerResponse,
  key: string,
  file: FeedFile,
  head: boolean,
): Promise<{ answered: Answered; streaming: boolean }> {
  const json = isJson(key);
  const gzip = json && file.size > 0 && new Negotiator(req).encodings(['gzip', 'identity'])[0] === 'gzip';
  const tag = `"${file.size.toString(16)}-${Math.round(file.mtimeMs * 1000).toString(16)}${gzip ? '-gzip' : ''}"`;
  const headers: Record<string, string> = {
    'Cache-Control': cacheControlOf(key),
    ETag: tag,
    'Last-Modified': new Date(file.mtimeMs).toUTCString(),
    ...(json ? { Vary: 'Accept-Encoding' } : {}),
    ...(isPackage(key) ? { 'Accept-Ranges': 'bytes' } : {}),
  };
  if (fresh(req.headers, { etag: tag, 'last-modified': headers['Last-Modified'] })) {
    res.writeHead(304, headers).end();
    return { answered: { status: 304 }, streaming: false };
  }
  headers['Content-Type'] = contentTypeOf(key);
  const range = isPackage(key) ? rangeOf(req, file.size, tag) : undefined;
  if (range === 'unsatisfiable') {
    res.writeHead(416, { ...headers, 'Content-Range': `bytes */${file.size}` }).end();
    return { answered: { status: 416 }, streaming: false };
  }
  if (gzip) {
    res.writeHead(200, { ...headers, 'Content-Encoding': 'gzip' });
    if (head) {
      res.end();
      return { answered: { status: 200, encoding: 'gzip' }, streaming: false };
    }
    const aborted = await streamed(file.stream(), res, true);
    return { answered: { status: 200, encoding: 'gzip', ...(aborted ? { aborted } : {}) }, streaming: true };
  }
  const status = range === undefined ? 200 : 206;
  const length = range === undefined ? file.size : range.end - range.start + 1;
  res.writeHead(status, {
    ...headers,
    'Content-Length': String(length),
    ...(range === undefined ? {} : { 'Content-Range': `bytes ${range.start}-${range.end}/${file.size}` }),
  });
  if (head) {
    res.end();
    return { answered: { status, bytes: 0 }, streaming: false };
  }
  const aborted = await streamed(file.stream(range), res, false);
  return { answered: { status, bytes: length, ...(aborted ? { aborted } : {}) }, streaming: true };
}

/**
 * The one byte range a package request asks for: `undefined` for the whole file (no `Range`, one that is not of
 * bytes, malformed, of several ranges, or an `If-Range` that no longer holds the current tag), `unsatisfiable` for a
 * range that starts past the end.
 */
function rangeOf(
  req: IncomingMessage,
  size: number,
  tag: string,
): { start: number; end: number } | 'unsatisfiable' | undefined {
  const header = req.headers.range;
  if (header === undefined) return undefined;
  const ifRange = req.headers['if-range'];
  if (ifRange !== undefined && ifRange !== tag) return undefined;
  const ranges = rangeParser(size, header, { combine: true });
  if (ranges === -1) return 'unsatisfiable';
  if (ranges === -2 || ranges.type !== 'bytes' || ranges.length !== 1) return undefined;
  return ranges[0];
}

/** Streams `source` (gzipped when asked) to `res`; true when the client went away first. */
async function streamed(source: NodeJS.ReadableStream, res: ServerResponse, gzip: boolean): Promise<boolean> {
  try {
    if (gzip) await pipeline(source, createGzip(), res);
    else await pipeline(source, res);
    return false;
  } catch (error) {
    // A client that closes its connection mid-body is not the server's failure; a read error is.
    if (
      res.destroyed &&
      !res.writableFinished &&
      (error as NodeJS.ErrnoException).code === 'ERR_STREAM_PREMATURE_CLOSE'
    )
      return true;
    throw error;
  }
}
