/**
 * HTTP content coding for the replica: it compresses as a CDN would, so the client's
 * decompression (and its size limits after decompression) is exercised.
 */
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/** A content coding the replica can send. */
export type ContentCoding = 'br' | 'gzip' | 'identity';

/**
 * The coding to answer an `Accept-Encoding` header with: the acceptable one with the highest
 * q-value among `br` and `gzip` (`br` on a tie, `*` counting for both), else identity.
 */
export function negotiateCoding(acceptEncoding: string | string[] | undefined): ContentCoding {
  const header = [acceptEncoding ?? ''].flat().join(',');
  const q = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';');
    if (name === '') continue;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = qParam === undefined ? 1 : Number(qParam.slice(2));
    q.set(name, Number.isFinite(value) ? value : 0);
  }
  const of = (name: string): number => q.get(name) ?? q.get('*') ?? 0;
  const br = of('br');
  const gzip = of('gzip');
  if (br <= 0 && gzip <= 0) return 'identity';
  return br >= gzip ? 'br' : 'gzip';
}

/** `body` in `coding`. Brotli at quality 5: far faster than the default 11, still small. */
export function encodeBody(body: Buffer, coding: ContentCoding): Buffer {
  if (coding === 'gzip') return gzipSync(body);
  if (coding === 'br') return brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } });
  return body;
}
