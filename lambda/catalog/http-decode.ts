/** The body and headers of a response as the HTTP client reads them: content codings and `Retry-After`. */
import { promisify } from 'node:util';
import * as zlib from 'node:zlib';
import { BodyTooLargeError, FetchError } from './http-errors.js';

const gunzip = promisify(zlib.gunzip);
const inflate = promisify(zlib.inflate);
const brotliDecompress = promisify(zlib.brotliDecompress);

/** Decodes a body of `Content-Encoding` `encoding`, its output bounded by `maxBytes`. */
export async function decode(url: string, raw: Buffer, encoding: string, maxBytes: number): Promise<Buffer> {
  const name = encoding.trim().toLowerCase();
  const options = { maxOutputLength: maxBytes };
  try {
    switch (name) {
      case '':
      case 'identity':
        return raw;
      case 'gzip':
      case 'x-gzip':
        return await gunzip(raw, options);
      case 'deflate':
        return await inflate(raw, options);
      case 'br':
        return await brotliDecompress(raw, options);
      default:
        throw new FetchError(url, `unsupported Content-Encoding ${JSON.stringify(encoding)}`, false);
    }
  } catch (error) {
    if (error instanceof FetchError) throw error;
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError) {
      throw new BodyTooLargeError(url, maxBytes, 'decompressed body');
    }
    // A truncated compressed stream is the usual cause: another attempt may get it whole.
    throw new FetchError(url, `could not decompress ${name} body: ${(error as Error).message}`, true, { cause: error });
  }
}

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return undefined;
  if (/^\d+$/.test(text.trim())) return Number(text.trim()) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
