/** The body and headers of a response as the HTTP client reads them: content codings and `Retry-After`. */
import { promisify } from 'node:util';
import * as zlib from 'node:zlib';
import { holdBody, type BodyMemory } from './body-memory.js';
import { BodyTooLargeError, FetchError, LeafMemoryError } from './http-errors.js';

const gunzip = promisify(zlib.gunzip);
const inflate = promisify(zlib.inflate);
const brotliDecompress = promisify(zlib.brotliDecompress);

/**
 * Largest compressed body decoded synchronously. Node's async one-shot functions run a stream and a thread-pool
 * job per body: for a 1 kB Brotli leaf that costs about twice the CPU of the decompression itself (bench/leaf-path.ts:
 * 42 µs against 19 µs). Below this size the synchronous call blocks the event loop for well under a millisecond
 * (a leaf or a page); an index of several MB still decompresses off the loop.
 */
export const SYNC_DECODE_MAX_BYTES = 256 * 1024;

/**
 * Decodes a body of `Content-Encoding` `encoding`, its output bounded by `maxBytes`. With `memory`, the decoded copy
 * is held beside the raw body (body-memory.ts): its output is bounded by what the budget could ever hold too; one
 * decoded off the event loop has its most held before it starts (its size is known only after), one decoded at
 * once (a small body) is held as it is.
 */
export async function decode(
  url: string,
  raw: Buffer,
  encoding: string,
  maxBytes: number,
  memory?: BodyMemory,
): Promise<Buffer> {
  const name = encoding.trim().toLowerCase();
  if (name === '' || name === 'identity') return raw;
  const limit = memory === undefined ? maxBytes : Math.max(0, Math.min(maxBytes, memory.budget.bytes - raw.length));
  const options = { maxOutputLength: Math.max(1, limit) };
  const sync = raw.length <= SYNC_DECODE_MAX_BYTES;
  if (memory !== undefined && !sync) holdBody(memory, url, raw.length + limit);
  let body: Buffer;
  try {
    switch (name) {
      case 'gzip':
      case 'x-gzip':
        body = sync ? zlib.gunzipSync(raw, options) : await gunzip(raw, options);
        break;
      case 'deflate':
        body = sync ? zlib.inflateSync(raw, options) : await inflate(raw, options);
        break;
      case 'br':
        body = sync ? zlib.brotliDecompressSync(raw, options) : await brotliDecompress(raw, options);
        break;
      default:
        throw new FetchError(url, `unsupported Content-Encoding ${JSON.stringify(encoding)}`, false);
    }
  } catch (error) {
    if (error instanceof FetchError) throw error;
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError) {
      // Cut off at what the budget could ever hold, below the document limit: it can never be held.
      if (memory !== undefined && limit < maxBytes)
        throw new LeafMemoryError(url, raw.length + limit, memory.budget, true);
      throw new BodyTooLargeError(url, maxBytes, 'decompressed body');
    }
    // A truncated compressed stream is the usual cause: another attempt may get it whole.
    throw new FetchError(url, `could not decompress ${name} body: ${(error as Error).message}`, true, { cause: error });
  }
  if (memory !== undefined && sync) holdBody(memory, url, raw.length + body.length);
  return body;
}

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return undefined;
  if (/^\d+$/.test(text.trim())) return Number(text.trim()) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
